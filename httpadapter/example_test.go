package httpadapter_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/memory"
)

// Mounting the adapter under a prefix, beside the host's own routes: http.StripPrefix
// hands it the paths it knows, and BaseURL, the address payers and clients reach it at
// with the prefix, makes the links records carry (paymentLinkUrl, qrCodeImage). The
// payment page names its QR image, status and simulate routes relative to its own URL, so
// it works under the prefix with nothing else to set.
func Example_mountUnderPrefix() {
	ctx := context.Background()
	svc, err := payments.New(memory.New(), payments.Options{DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo"}})
	if err != nil {
		panic(err)
	}
	app, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "shop"})
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "the shop's home") })
	api := httpadapter.New(svc, httpadapter.Options{BaseURL: "https://shop.example/payments"})
	mux.Handle("/payments/", http.StripPrefix("/payments", api))
	// http.ListenAndServe(":8080", mux) serves both; here requests go straight to mux.

	get := func(method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", app.AppID())
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	w := get("GET", "/", "")
	fmt.Println("GET /:", w.Code, w.Body)

	w = get("POST", "/payments/api/v1/charge", `{"correlationID":"order-1","value":1990}`)
	fmt.Println("POST /payments/api/v1/charge:", w.Code)
	c, err := svc.GetCharge(ctx, "order-1")
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.TrimSuffix(c.PaymentLinkURL, c.PaymentLinkID) + "<paymentLinkID>")

	w = get("GET", "/payments/pay/"+c.PaymentLinkID, "")
	fmt.Println("the page:", w.Code, w.Header().Get("Content-Type"))
	// Output:
	// GET /: 200 the shop's home
	// POST /payments/api/v1/charge: 200
	// https://shop.example/payments/pay/<paymentLinkID>
	// the page: 200 text/html; charset=utf-8
}

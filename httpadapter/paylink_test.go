package httpadapter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// page GETs path with the headers (name, value, ...) and returns the recorded reply.
func (s server) page(t *testing.T, path string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

func TestPayLinkPage(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true, BaseURL: "https://pix.example.com/"})
	c := s.createCharge(t, s.appID, `{"correlationID":"page-1","value":123456,"comment":"Pedido <42> & cia","expiresIn":3600,
		"customer":{"name":"Dan Payer","taxID":"52998224725","email":"dan@example.com"}}`)
	link := str(c, "paymentLinkID")

	t.Run("Links", func(t *testing.T) {
		is := is.New(t)
		is.Equal(str(c, "paymentLinkUrl"), "https://pix.example.com/pay/"+link)                             // from Options.BaseURL
		is.Equal(str(c, "qrCodeImage"), "https://pix.example.com/openpix/charge/brcode/image/"+link+".png") // which this handler serves
		is.Equal(str(c, "paymentMethods", "pix", "qrCodeImage"), str(c, "qrCodeImage"))
		is.Equal(httpadapter.PaymentLinkURL("https://pix.example.com/", link), str(c, "paymentLinkUrl"))
		is.Equal(httpadapter.QRCodeImageURL("https://pix.example.com", "openpix", link), str(c, "qrCodeImage"))
		is.Equal(httpadapter.PaymentLinkURL("", link), "/pay/"+link) // no base: a path
	})

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		w := s.page(t, "/pay/"+link)
		is.Equal(w.Code, http.StatusOK)
		is.Equal(w.Header().Get("Content-Type"), "text/html; charset=utf-8")
		is.Equal(w.Header().Get("Cache-Control"), "no-store")
		is.True(strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'none'")) // nothing external
		body := w.Body.String()
		is.True(strings.Contains(body, `<html lang="pt-BR">`))                          // Portuguese by default
		is.True(strings.Contains(body, "Loja Exemplo"))                                 // the merchant
		is.True(strings.Contains(body, "R$ 1.234,56"))                                  // the value, the Brazilian way
		is.True(strings.Contains(body, "Pedido &lt;42&gt; &amp; cia"))                  // the comment, escaped
		is.True(strings.Contains(body, ">"+htmlEscape(str(c, "brCode"))+"</textarea>")) // the BR Code to copy
		is.True(strings.Contains(body, `src="../openpix/charge/brcode/image/`+link+`.png?size=600"`))
		is.True(strings.Contains(body, "Aguardando pagamento"))
		is.True(strings.Contains(body, `id="countdown" datetime="PT3600S">01:00:00<`)) // time left
		is.True(strings.Contains(body, `data-simulate-url="./`+link+`/simulate"`))
		is.True(strings.Contains(body, `<label for="brcode">`)) // labelled
		for _, secret := range []string{"52998224725", "Dan Payer", "dan@example.com", "page-1", str(c, "transactionID")} {
			is.True(!strings.Contains(body, secret)) // nothing the payer need not see
		}
		nonce := between(w.Header().Get("Content-Security-Policy"), "script-src 'nonce-", "'")
		is.True(len(nonce) >= 16)
		is.True(strings.Contains(body, `<script nonce="`+nonce+`">`))                      // the inline script is allowed by nonce
		is.True(!strings.Contains(body, "http://") && !strings.Contains(body, "https://")) // no external asset
	})

	t.Run("English", func(t *testing.T) {
		is := is.New(t)
		body := s.page(t, "/pay/"+link, "Accept-Language", "en-GB,en;q=0.9,pt-BR;q=0.5").Body.String()
		is.True(strings.Contains(body, `<html lang="en">`))
		is.True(strings.Contains(body, "Waiting for payment"))
		is.True(strings.Contains(body, "Simulate payment"))
		is.True(strings.Contains(body, "R$ 1.234,56")) // BRL the Brazilian way in English too
	})

	t.Run("Status", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/pay/"+link+"/status", "", "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "status"), "WAITING")
		is.Equal(num(r.body, "amountDue"), 123456)
		is.Equal(str(r.body, "amountDueText"), "R$ 1.234,56")
		is.Equal(num(r.body, "expiresIn"), 3600)
		s.clock.Advance(10 * time.Minute)
		r = s.do(t, "GET", "/pay/"+link+"/status", "", "")
		is.Equal(num(r.body, "expiresIn"), 3000) // on the Service's clock
	})

	t.Run("NotFound", func(t *testing.T) {
		is := is.New(t)
		for _, path := range []string{"/pay/00000000-0000-4000-8000-000000000000", "/pay/page-1", "/pay/" + str(c, "transactionID")} {
			w := s.page(t, path)
			is.Equal(w.Code, http.StatusNotFound)                                // a page, not JSON
			is.Equal(w.Header().Get("Content-Type"), "text/html; charset=utf-8") // HTML
			is.True(strings.Contains(w.Body.String(), "Link de pagamento não encontrado"))
		}
		w := s.page(t, "/pay/nope", "Accept-Language", "en")
		is.True(strings.Contains(w.Body.String(), "Payment link not found"))
		r := s.do(t, "GET", "/pay/nope/status", "", "")
		is.Equal(r.status, http.StatusNotFound)
		r = s.do(t, "POST", "/pay/nope/simulate", "", "")
		is.Equal(r.status, http.StatusNotFound)
	})

	t.Run("Simulate", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/pay/"+link+"/simulate", "", "", "Origin", "https://evil.example.com")
		is.Equal(r.status, http.StatusForbidden) // another site's page cannot press the button
		r = s.do(t, "POST", "/pay/"+link+"/simulate", "", "", "Origin", "https://pix.example.com")
		mustStatus(t, is, r, http.StatusOK) // the page's own origin: BaseURL's, whatever Host a proxy forwards (httptest's example.com here)
		is.Equal(str(r.body, "status"), "PAID")
		r = s.do(t, "GET", "/api/v1/charge/page-1", s.appID, "")
		is.Equal(str(r.body, "charge", "status"), "COMPLETED") // really paid, through the Service
		r = s.do(t, "POST", "/pay/"+link+"/simulate", "", "")
		is.Equal(r.status, http.StatusBadRequest) // once
		is.True(strings.Contains(r.errMsg(), "already paid"))
		body := s.page(t, "/pay/"+link).Body.String()
		is.True(strings.Contains(body, `class="status status-paid"`))
		is.True(strings.Contains(body, "Pagamento recebido. Obrigado!"))
		is.True(strings.Contains(body, `data-simulate-url=""`)) // nothing left to simulate
		is.True(!strings.Contains(body, str(c, "brCode")))      // nor a code that pays nothing
		is.True(!strings.Contains(body, `<img id="qr"`))
	})

	t.Run("Deleted", func(t *testing.T) {
		is := is.New(t)
		d := s.createCharge(t, s.appID, `{"correlationID":"page-gone","value":100}`)
		is.Equal(s.page(t, "/pay/"+str(d, "paymentLinkID")).Code, http.StatusOK)
		r := s.do(t, "DELETE", "/api/v1/charge/page-gone", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(s.page(t, "/pay/"+str(d, "paymentLinkID")).Code, http.StatusNotFound) // gone with its charge
	})
}

func TestPayLinkPage_Expired(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"soon","value":500,"expiresIn":900}`)
	link := str(c, "paymentLinkID")
	is.Equal(str(c, "paymentLinkUrl"), "/pay/"+link) // no BaseURL: paths
	s.clock.Advance(15 * time.Minute)
	body := s.page(t, "/pay/"+link).Body.String()
	is.True(strings.Contains(body, `class="status status-expired"`))
	is.True(strings.Contains(body, ">Expirado<"))
	is.True(!strings.Contains(body, str(c, "brCode"))) // its code pays nothing any more: not shown
	is.True(!strings.Contains(body, `<img id="qr"`))
	r := s.do(t, "GET", "/pay/"+link+"/status", "", "")
	is.Equal(str(r.body, "status"), "EXPIRED")
	is.Equal(num(r.body, "expiresIn"), 0)
	r = s.do(t, "POST", "/pay/"+link+"/simulate", "", "")
	is.Equal(r.status, http.StatusBadRequest) // an expired charge takes nothing
}

func TestPayLinkPage_Overdue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	c := s.createCharge(t, s.appID, `{"correlationID":"boleto","value":10000,"type":"OVERDUE","daysForDueDate":1,"daysAfterDueDate":10,
		"fines":{"value":200,"type":"FIXED"},"interests":{"value":100}}`)
	s.clock.Advance(4 * 24 * time.Hour)
	r := s.do(t, "GET", "/api/v1/charge/boleto", s.appID, "")
	due := num(r.body, "charge", "amountDue")
	is.True(due > 10000) // fine and interest
	body := s.page(t, "/pay/"+str(c, "paymentLinkID")).Body.String()
	is.True(strings.Contains(body, `id="amount">`+brl(due)+`<`)) // large: what paying takes today (its BR Code has no amount)
	is.True(strings.Contains(body, "Valor original"))            // beside it, the charge's value
	is.True(strings.Contains(body, `id="original">`+brl(10000)+`<`))
	is.True(strings.Contains(body, `<div id="original-row"><dt>`)) // shown, not hidden: it differs from the amount due
	is.True(strings.Contains(body, "Vencimento"))
	is.True(strings.Contains(body, `data-simulate-url=""`)) // no sandbox: no button
	r = s.do(t, "POST", "/pay/"+str(c, "paymentLinkID")+"/simulate", "", "")
	is.Equal(r.status, http.StatusNotFound) // nor route
}

func TestPayLinkPage_QRCode(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	r := s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Gorjeta","comment":"Obrigado!"}`)
	mustStatus(t, is, r, http.StatusOK)
	link := str(r.body, "pixQrCode", "paymentLinkID")
	is.Equal(str(r.body, "pixQrCode", "paymentLinkUrl"), "/pay/"+link)
	body := s.page(t, "/pay/"+link).Body.String()
	is.True(strings.Contains(body, "Valor livre")) // the payer chooses
	is.True(strings.Contains(body, "Obrigado!"))
	is.True(!strings.Contains(body, `id="countdown"`))      // a static code does not expire
	is.True(strings.Contains(body, `data-simulate-url=""`)) // no amount to simulate
	r = s.do(t, "GET", "/pay/"+link+"/status", "", "")
	is.Equal(str(r.body, "status"), "WAITING")
	_, ok := r.body["expiresIn"]
	is.True(!ok)
}

// TestPayLinkPage_Companies: one company's link shows its own merchant and charge, never
// the data of another company, even with the same correlationID.
func TestPayLinkPage_Companies(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	other := s.newCompany(t, "Outra Empresa", "11222333000181")
	mine := s.createCharge(t, s.appID, `{"correlationID":"same","value":100,"comment":"mine"}`)
	theirs := s.createCharge(t, other, `{"correlationID":"same","value":900,"comment":"theirs"}`)
	body := s.page(t, "/pay/"+str(theirs, "paymentLinkID")).Body.String()
	is.True(strings.Contains(body, "theirs") && strings.Contains(body, "R$ 9,00"))
	is.True(!strings.Contains(body, "Loja Exemplo") && !strings.Contains(body, ">mine<")) // not the other company's
	is.True(!strings.Contains(body, "11222333000181"))                                    // no tax ID
	r := s.do(t, "POST", "/pay/"+str(theirs, "paymentLinkID")+"/simulate", "", "")
	mustStatus(t, is, r, http.StatusOK)
	r = s.do(t, "GET", "/api/v1/charge/same", other, "")
	is.Equal(str(r.body, "charge", "status"), "COMPLETED") // the link's charge
	r = s.do(t, "GET", "/api/v1/charge/same", s.appID, "")
	is.Equal(str(r.body, "charge", "status"), "ACTIVE") // not the one of the same correlationID
	is.True(strings.Contains(s.page(t, "/pay/"+str(mine, "paymentLinkID")).Body.String(), ">mine<"))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// between is the part of s after start and before the next end.
func between(s, start, end string) string {
	_, after, _ := strings.Cut(s, start)
	v, _, _ := strings.Cut(after, end)
	return v
}

// brl formats centavos below R$ 1.000,00 as the page does: "R$ 104,00".
func brl(centavos int) string { return fmt.Sprintf("R$ %d,%02d", centavos/100, centavos%100) }

// BenchmarkPayLinkPage renders the payment page of a charge, as a payer's browser asks for it.
func BenchmarkPayLinkPage(b *testing.B) {
	s := newServer(b, httpadapter.Options{Sandbox: true})
	c, err := s.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "bench", Value: 123456, Comment: "Pedido 42"})
	if err != nil {
		b.Fatal(err)
	}
	path := "/pay/" + c.PaymentLinkID
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkPayLinkStatus answers the status route the page polls every 3 s.
func BenchmarkPayLinkStatus(b *testing.B) {
	s := newServer(b, httpadapter.Options{})
	c, err := s.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "bench", Value: 123456})
	if err != nil {
		b.Fatal(err)
	}
	path := "/pay/" + c.PaymentLinkID + "/status"
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// A program that uses the library in process, without this adapter, gets a charge whose
// link fields are empty, and builds them from its paymentLinkID and its public base URL.
func ExamplePaymentLinkURL() {
	id := "6f1c2a8e-3b9d-4c7e-9a51-2d8f0b7e4c13" // a charge's PaymentLinkID
	fmt.Println(httpadapter.PaymentLinkURL("https://pix.example.com/", id))
	fmt.Println(httpadapter.QRCodeImageURL("https://pix.example.com", "openpix", id))
	// Output:
	// https://pix.example.com/pay/6f1c2a8e-3b9d-4c7e-9a51-2d8f0b7e4c13
	// https://pix.example.com/openpix/charge/brcode/image/6f1c2a8e-3b9d-4c7e-9a51-2d8f0b7e4c13.png
}

// TestPayLinkSimulate_NoCorrelationID: the public simulate route refuses a paid or expired
// charge without naming its correlationID, the company's own key (an order number, an
// e-mail), which the page never shows. Before, its error did.
func TestPayLinkSimulate_NoCorrelationID(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	paid := s.createCharge(t, s.appID, `{"correlationID":"pedido-joao.silva@example.com-4711","value":500}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(paid, "transactionID"))
	soon := s.createCharge(t, s.appID, `{"correlationID":"pedido-maria-4712","value":500,"expiresIn":900}`)
	s.clock.Advance(16 * time.Minute)
	for _, tc := range []struct{ link, corr, want string }{
		{str(paid, "paymentLinkID"), "pedido-joao.silva@example.com-4711", "this charge is already paid"},
		{str(soon, "paymentLinkID"), "pedido-maria-4712", "this charge has expired"},
	} {
		is := is.New(t)
		r := s.do(t, "POST", "/pay/"+tc.link+"/simulate", "", "") // no App ID
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errMsg(), tc.want)
		is.True(!strings.Contains(r.raw, tc.corr))
	}
	r := s.do(t, "GET", "/openpix/testing?transactionID="+str(paid, "transactionID"), s.appID, "")
	is.New(t).Equal(r.errMsg(), "charge pedido-joao.silva@example.com-4711 is already paid") // its company is told which
}

// TestPayLinkSimulate_Origin: the simulate button's request is the page's own when its
// Origin is the request's Host or, behind a proxy that forwards another Host, the origin
// of BaseURL; another site's is refused.
func TestPayLinkSimulate_Origin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base, origin string
		want         int
	}{
		{"", "http://example.com", http.StatusOK}, // httptest's Host
		{"", "https://evil.example.com", http.StatusForbidden},
		{"https://pix.example.com", "https://pix.example.com", http.StatusOK}, // proxied: the Host is example.com
		{"https://pix.example.com", "http://pix.example.com", http.StatusForbidden},
	} {
		is := is.New(t)
		s := newServer(t, httpadapter.Options{Sandbox: true, BaseURL: tc.base})
		c := s.createCharge(t, s.appID, `{"correlationID":"o","value":100}`)
		r := s.do(t, "POST", "/pay/"+str(c, "paymentLinkID")+"/simulate", "", "", "Origin", tc.origin)
		is.Equal(r.status, tc.want)
	}
}

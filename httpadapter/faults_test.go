package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

type faultOKSender struct{}

func (faultOKSender) SendWebhook(context.Context, payments.WebhookRequest) (payments.WebhookResponse, error) {
	return payments.WebhookResponse{Status: 200}, nil
}

// TestFaults_HTTPStoreFaults sends requests that move money, each with one store call
// failing in turn, and checks the status: a fault must never be answered 4xx (blaming the
// client for the server's failure), a request without a fault never 5xx, and no handler
// may panic.
func TestFaults_HTTPStoreFaults(t *testing.T) {
	t.Parallel()
	fs := storetest.Faults(memory.New())
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(fs, payments.Options{Clock: clock, WebhookSender: faultOKSender{}, WebhookSigningKey: signingKey(t),
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	h := httpadapter.New(svc, httpadapter.Options{Sandbox: true, Clock: clock, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	acct, _ := svc.DefaultAccount(ctx)
	if _, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "EF", Value: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "s0@example.com", Name: "S0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s0@example.com", Value: 100_000, Description: "f"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E0", Value: 500_000}); err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, string) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		r := httptest.NewRequest(method, path, rd)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", a.AppID())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	reqs := []struct{ method, path, body string }{
		{"POST", "/api/v1/charge", `{"correlationID":"c%d","value":1000}`},
		{"GET", "/openpix/testing?transactionID=TXID", ``},
		{"POST", "/api/v1/refund", `{"transactionEndToEndId":"E0","correlationID":"r%d","value":10}`},
		{"POST", "/api/v1/charge/c%d/refund", `{"correlationID":"cr%d","value":10}`},
		{"POST", "/api/v1/payment", `{"value":100,"destinationAlias":"dest@example.com","correlationID":"p%d"}`},
		{"POST", "/api/v1/payment/approve", `{"correlationID":"p%d"}`},
		{"POST", "/api/v1/account/" + acct.AccountID + "/withdraw", `{"value":100,"correlationID":"w%d"}`},
		{"POST", "/api/v1/subaccount", `{"pixKey":"s%d@example.com","name":"S"}`},
		{"POST", "/api/v1/subaccount/transfer", `{"value":10,"fromPixKey":"s0@example.com","toPixKey":"s%d@example.com","correlationID":"t%d"}`},
		{"POST", "/api/v1/subaccount/s0@example.com/debit", `{"value":10,"description":"d","correlationID":"d%d"}`},
		{"POST", "/api/v1/subaccount/s0@example.com/withdraw", `{"value":10,"correlationID":"sw%d"}`},
		{"POST", "/api/v1/cashback-fidelity", `{"taxID":"52998224725","value":%d}`},
		{"POST", "/api/v1/subscriptions", `{"correlationID":"sub%d","value":990,"customer":{"name":"Ana","taxID":"52998224725","email":"ana@example.com"}}`},
		{"POST", "/api/v1/webhook", `{"webhook":{"name":"w","url":"https://hooks.example.com/%d","isActive":true}}`},
		{"POST", "/openpix/testing/clock", `{"advance":"1m"}`},
	}
	txid := ""
	for k := 1; k <= 60; k++ {
		for _, rq := range reqs {
			path := strings.ReplaceAll(strings.ReplaceAll(rq.path, "%d", fmt.Sprint(k)), "TXID", txid)
			body := strings.ReplaceAll(rq.body, "%d", fmt.Sprint(k))
			fs.Arm(k, 0, 0)
			code, resp := do(rq.method, path, body)
			_, _, _, injected, where := fs.Disarm()
			fired := ""
			if injected {
				fired = where
			}
			if rq.path == "/api/v1/charge" && code == 200 {
				var b struct {
					Charge struct {
						TransactionID string `json:"transactionID"`
					} `json:"charge"`
				}
				json.Unmarshal([]byte(resp), &b)
				txid = b.Charge.TransactionID
			}
			if testing.Verbose() && fired == "" {
				t.Logf("%s %s -> %d %.100s", rq.method, path, code, resp)
			}
			switch {
			case fired != "" && code >= 400 && code < 500 && code != 404 && code != 409:
				t.Errorf("%s %s (fault at %s): a store failure answered %d: %s", rq.method, path, fired, code, resp)
			case fired == "" && code >= 500:
				t.Errorf("%s %s (no fault): answered %d: %.100s", rq.method, path, code, resp)
			}
		}
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("a handler panicked:\n%s", logs.String())
	}
}

package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// Fields the spec lists on each resource. An answer carries every one, null or "" when
// unknown, never missing.
var (
	chargeFields = []string{"status", "customer", "value", "comment", "correlationID", "paymentLinkID", "globalID",
		"brCode", "transactionID", "additionalInfo", "expiresIn", "expiresDate", "createdAt", "updatedAt", "paymentMethods"}
	customerFields       = []string{"name", "email", "phone", "taxID", "correlationID"}
	chargeRefundFields   = []string{"status", "value", "correlationID", "endToEndId", "time", "comment"}
	refundFields         = []string{"status", "value", "correlationID", "refundId", "time", "comment"}
	pixTransactionRefund = []string{"value", "correlationID", "refundId", "returnIdentification", "comment"}
	pixQRCodeFields      = []string{"name", "value", "comment", "correlationID", "identifier", "paymentLinkID", "brCode", "createdAt", "updatedAt"}
	transactionFields    = []string{"customer", "payer", "charge", "withdraw", "infoPagador", "value", "time", "transactionID",
		"type", "endToEndId", "endToEndID", "globalID"}
	transactionChargeFields = []string{"status", "customer", "correlationID", "createdAt", "updatedAt"}
)

// mustHaveKeys checks that the decoded object v has every key of want.
func mustHaveKeys(t *testing.T, where string, v any, want []string) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %v is not an object", where, v)
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q key in %v", where, k, m)
		}
	}
}

// TestFieldsPresent reads the raw JSON of every answer that carries a charge, customer,
// refund, transaction or static QR code, made with as little as each accepts, and checks
// that every field the spec lists is there, and that no timestamp is the zero time.
func TestFieldsPresent(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	var raws []string
	do := func(t *testing.T, method, path, body string) response {
		t.Helper()
		r := s.do(t, method, path, s.appID, body)
		mustStatus(t, is.New(t), r, http.StatusOK)
		raws = append(raws, r.raw)
		return r
	}

	t.Run("Customer", func(t *testing.T) {
		is := is.New(t)
		r := do(t, "POST", "/api/v1/customer", `{"name":"Ana","email":"ana@example.com","correlationID":"ana"}`)
		mustHaveKeys(t, "create", get(r.body, "customer"), customerFields)
		is.Equal(get(r.body, "customer", "taxID"), nil) // null when unknown
		is.Equal(str(r.body, "customer", "phone"), "")  // "" when unknown
		mustHaveKeys(t, "get", get(do(t, "GET", "/api/v1/customer/ana", "").body, "customer"), customerFields)
		mustHaveKeys(t, "list", list(do(t, "GET", "/api/v1/customer", "").body, "customers")[0], customerFields)
	})
	t.Run("Charge", func(t *testing.T) {
		is := is.New(t)
		r := do(t, "POST", "/api/v1/charge", `{"correlationID":"bare","value":1000}`)
		mustHaveKeys(t, "create", get(r.body, "charge"), chargeFields)
		is.Equal(get(r.body, "charge", "customer"), nil) // null without one
		is.Equal(str(r.body, "charge", "comment"), "")   // "" without one
		r = do(t, "POST", "/api/v1/charge", `{"correlationID":"with-customer","value":1000,"customer":{"name":"Bia","phone":"+5511999990000"}}`)
		mustHaveKeys(t, "customer in charge", get(r.body, "charge", "customer"), customerFields)
		mustHaveKeys(t, "get", get(do(t, "GET", "/api/v1/charge/bare", "").body, "charge"), chargeFields)
		mustHaveKeys(t, "list", list(do(t, "GET", "/api/v1/charge", "").body, "charges")[0], chargeFields)
	})
	t.Run("Transaction", func(t *testing.T) {
		is := is.New(t)
		c, err := s.svc.GetCharge(ctx, "bare")
		is.NoErr(err)
		x, err := s.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200fields00001", Value: 1000, TxID: c.Identifier[:25]})
		is.NoErr(err) // a Pix with no payer and no message
		for _, v := range []any{
			get(do(t, "GET", "/api/v1/transaction/"+x.EndToEndID, "").body, "transaction"),
			list(do(t, "GET", "/api/v1/transaction", "").body, "transactions")[0],
		} {
			mustHaveKeys(t, "transaction", v, transactionFields)
			mustHaveKeys(t, "transaction charge", get(v, "charge"), transactionChargeFields)
			is.Equal(get(v, "withdraw"), nil) // null: no withdrawals in this version
			is.Equal(get(v, "payer"), nil)
			is.Equal(str(v, "infoPagador"), "")
			is.Equal(str(v, "endToEndID"), x.EndToEndID) // the legacy name, beside endToEndId
		}
	})
	t.Run("Refunds", func(t *testing.T) {
		is := is.New(t)
		r := do(t, "POST", "/api/v1/charge/bare/refund", `{"correlationID":"cr-1","value":100}`)
		mustHaveKeys(t, "charge refund", get(r.body, "refund"), chargeRefundFields)
		is.Equal(str(r.body, "refund", "endToEndId"), "") // not known while IN_PROCESSING
		mustHaveKeys(t, "charge refund list", list(do(t, "GET", "/api/v1/charge/bare/refund", "").body, "refunds")[0], chargeRefundFields)
		r = do(t, "POST", "/api/v1/refund", `{"correlationID":"r-1","value":100,"transactionEndToEndId":"E99999999202611221200fields00001"}`)
		mustHaveKeys(t, "refund", get(r.body, "refund"), refundFields)
		is.Equal(str(r.body, "refund", "returnIdentification"), "")
		mustHaveKeys(t, "refund get", get(do(t, "GET", "/api/v1/refund/r-1", "").body, "pixTransactionRefund"), pixTransactionRefund)
		mustHaveKeys(t, "refund list", list(do(t, "GET", "/api/v1/refund", "").body, "refunds")[0], refundFields)
	})
	t.Run("PixQRCode", func(t *testing.T) {
		is := is.New(t)
		r := do(t, "POST", "/api/v1/qrcode-static", `{"name":"Caixa"}`)
		mustHaveKeys(t, "create", get(r.body, "pixQrCode"), pixQRCodeFields)
		is.Equal(str(r.body, "pixQrCode", "comment"), "")
		id := str(r.body, "pixQrCode", "correlationID")
		mustHaveKeys(t, "get", get(do(t, "GET", "/api/v1/qrcode-static/"+id, "").body, "pixQrCode"), pixQRCodeFields)
		mustHaveKeys(t, "list", list(do(t, "GET", "/api/v1/qrcode-static", "").body, "pixQrCodes")[0], pixQRCodeFields)
	})
	t.Run("NoZeroTimestamps", func(t *testing.T) {
		is := is.New(t)
		evs, err := s.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		for _, ev := range evs {
			raws = append(raws, string(ev.Data))
		}
		is.True(len(raws) > 20) // the answers above, and the events
		for _, raw := range raws {
			if strings.Contains(raw, "0001-01-01") {
				t.Errorf("a zero timestamp in %s", raw)
			}
		}
	})
}

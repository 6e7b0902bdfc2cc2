package httpadapter_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// countingStore counts the write transactions begun on it.
type countingStore struct {
	store.Store
	updates atomic.Int64
}

func (s *countingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.updates.Add(1)
	return s.Store.Update(ctx, fn)
}

// TestGET_WritesNothing reads every resource through every GET route (the sandbox's
// payment route aside: paying is what it is for), with a charge past its expiry that the
// periodic pass has not recorded: no request begins a write transaction.
func TestGET_WritesNothing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	st := &countingStore{Store: memory.New()}
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(st, payments.Options{Clock: clock})
	is.NoErr(err)
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "test"})
	is.NoErr(err)
	s := server{svc: svc, clock: clock, h: httpadapter.New(svc, httpadapter.Options{Sandbox: true}), appID: a.AppID()}

	ana := &payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725", CorrelationID: "ana"}
	paid, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "paid", Value: 1000, Customer: ana})
	is.NoErr(err)
	x, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E9999999920261122120000000000001", Value: 1000, TxID: paid.Identifier[:25]})
	is.NoErr(err)
	_, err = svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r1", Value: 100})
	is.NoErr(err)
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "short", Value: 500, ExpiresIn: 900})
	is.NoErr(err)
	q, err := svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
	is.NoErr(err)
	_, _, err = svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "sub@example.com", Name: "Sub"})
	is.NoErr(err)
	_, _, err = svc.GetOrCreateExclusiveCashback(ctx, "52998224725", 100)
	is.NoErr(err)
	_, _, err = svc.CreatePreRegistration(ctx, payments.CreatePreRegistrationParams{Name: "ACME", TaxID: "11222333000181"})
	is.NoErr(err)
	acct, err := svc.DefaultAccount(ctx)
	is.NoErr(err)
	clock.Advance(901 * time.Second) // "short" is past its expiry; nothing has recorded it

	before := st.updates.Load()
	for _, path := range []string{
		"/health",
		"/api/v1/customer", "/api/v1/customer/ana", "/api/v1/customer/52998224725",
		"/api/v1/charge", "/api/v1/charge?status=EXPIRED", "/api/v1/charge?status=ACTIVE",
		"/api/v1/charge/paid", "/api/v1/charge/short", "/api/v1/charge/paid/refund", "/api/openpix/v1/charge",
		"/api/v1/qrcode-static", "/api/v1/qrcode-static/" + q.ID,
		"/openpix/charge/brcode/image/" + q.PaymentLinkID + ".png", "/api/image/qrcode/base64/" + paid.PaymentLinkID,
		"/api/v1/transaction", "/api/v1/transaction/" + x.EndToEndID,
		"/api/v1/refund", "/api/v1/refund/r1",
		"/api/v1/account", "/api/v1/account/", "/api/v1/account/" + acct.AccountID,
		"/api/v1/subaccount", "/api/v1/subaccount/sub@example.com", "/api/v1/statement", "/api/v1/subaccount/sub@example.com/statement",
		"/api/v1/cashback-fidelity/balance/52998224725",
		"/api/v1/partner/company", "/api/v1/partner/company/11222333000181",
	} {
		w := s.raw(t, "GET", path, s.appID)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body) // the route found what it reads
		}
	}
	is.Equal(st.updates.Load(), before) // no GET began a write transaction

	r := s.do(t, "GET", "/api/v1/charge?status=EXPIRED", s.appID, "")
	is.Equal(len(list(r.body, "charges")), 1) // the expired charge is listed as EXPIRED all the same
	is.Equal(str(list(r.body, "charges")[0], "status"), "EXPIRED")
}

package httpadapter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// afterViewStore runs hook once, right after the next read transaction returns: the
// moment between a request's read and its write.
type afterViewStore struct {
	*memory.Store
	mu   sync.Mutex
	hook func()
}

func (s *afterViewStore) View(ctx context.Context, fn func(store.Tx) error) error {
	err := s.Store.View(ctx, fn)
	s.mu.Lock()
	h := s.hook
	s.hook = nil
	s.mu.Unlock()
	if h != nil {
		h()
	}
	return err
}

func (s *afterViewStore) setHook(h func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = h
}

// TestPayLinkSimulate_DeletedMeanwhile: the merchant deletes the link's charge (and makes a
// new one under the same correlationID), or its static QR code, between the page's read
// and its payment. The simulate pays nothing and answers 404; before, it found the charge
// again by correlationID and paid the new one, or paid the deleted QR code, and still
// answered 404.
func TestPayLinkSimulate_DeletedMeanwhile(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	st := &afterViewStore{Store: memory.New()}
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(st, payments.Options{Clock: clock, DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo"}})
	is.NoErr(err)
	h := httpadapter.New(svc, httpadapter.Options{Sandbox: true})
	simulate := func(linkID string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/pay/"+linkID+"/simulate", nil))
		return w.Code
	}

	old, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-1", Value: 1000})
	is.NoErr(err)
	st.setHook(func() {
		is.NoErr(svc.DeleteCharge(ctx, "order-1"))
		_, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-1", Value: 2500})
		is.NoErr(err)
	})
	is.Equal(simulate(old.PaymentLinkID), http.StatusNotFound)
	c, err := svc.GetCharge(ctx, "order-1")
	is.NoErr(err)
	is.Equal(c.Status, payments.ChargeActive) // the new charge, never on that page, unpaid

	qr, err := svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa", Value: 700})
	is.NoErr(err)
	st.setHook(func() { is.NoErr(svc.DeletePixQRCode(ctx, qr.ID)) })
	is.Equal(simulate(qr.PaymentLinkID), http.StatusNotFound)
	_, page, err := svc.ListTransactions(ctx, payments.TransactionFilter{})
	is.NoErr(err)
	is.Equal(page.TotalCount, 0) // nothing received

	fresh, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-2", Value: 1000})
	is.NoErr(err)
	is.Equal(simulate(fresh.PaymentLinkID), http.StatusOK) // and a link left alone pays
	c, err = svc.GetCharge(ctx, "order-2")
	is.NoErr(err)
	is.Equal(c.Status, payments.ChargeCompleted)
}

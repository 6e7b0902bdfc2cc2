package payments_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
)

// testRail is a Rail for the order machine's faults: it can fail every Send, or hold Sends
// until released (or until their context ends), and it records the contexts and orders it
// was called with. Anything it lets through goes to a SandboxRail.
type testRail struct {
	inner *payments.SandboxRail

	mu           sync.Mutex
	fail         bool
	resolveFails bool          // ResolveKey fails as an unreachable bank does
	hang         chan struct{} // non-nil: Send waits for it to close (or for ctx)
	entered      chan struct{} // receives once per Send that starts waiting
	sends        []payments.PixOrder
	ctxs         []context.Context
}

func newTestRail(clock payments.Clock) *testRail {
	return &testRail{inner: payments.NewSandboxRail(clock, 0), entered: make(chan struct{}, 100)}
}

func (r *testRail) Send(ctx context.Context, o payments.PixOrder) (payments.Settlement, error) {
	r.mu.Lock()
	r.sends = append(r.sends, o)
	r.ctxs = append(r.ctxs, ctx)
	fail, hang := r.fail, r.hang
	r.mu.Unlock()
	if fail {
		return payments.Settlement{}, errors.New("bank unreachable")
	}
	if hang != nil {
		r.entered <- struct{}{}
		select {
		case <-hang:
		case <-ctx.Done():
			return payments.Settlement{}, ctx.Err()
		}
	}
	return r.inner.Send(ctx, o)
}

func (r *testRail) Status(ctx context.Context, o payments.PixOrder) (payments.Settlement, error) {
	return r.inner.Status(ctx, o)
}

func (r *testRail) ResolveKey(ctx context.Context, key string, t brcode.KeyType) (payments.KeyOwner, error) {
	r.mu.Lock()
	fail := r.resolveFails
	r.mu.Unlock()
	if fail {
		return payments.KeyOwner{}, errors.New("bank unreachable")
	}
	return r.inner.ResolveKey(ctx, key, t)
}

func (r *testRail) set(fail bool, hang chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail, r.hang = fail, hang
}

func (r *testRail) sendCount(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.sends {
		if o.ID == id {
			n++
		}
	}
	return n
}

// newRailEnv is an env on st whose Service uses rail, with a short send timeout.
func newRailEnv(t *testing.T, st store.Store, rail func(payments.Clock) payments.Rail) env {
	t.Helper()
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(st, payments.Options{Clock: clock, Rail: rail(clock), SendTimeout: 5 * time.Second,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return env{svc: svc, clock: clock, store: st}
}

// eachStoreRail runs fn on every store with a testRail.
func eachStoreRail(t *testing.T, fn func(t *testing.T, e env, rail *testRail)) {
	t.Helper()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			var rail *testRail
			e := newRailEnv(t, st.open(t), func(c payments.Clock) payments.Rail { rail = newTestRail(c); return rail })
			fn(t, e, rail)
		})
	}
}

// fund puts value in the default account.
func fund(t *testing.T, e env, value int64) payments.Account {
	t.Helper()
	a, err := e.svc.DefaultAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.FundAccountForTest(ctx, a.AccountID, value); err != nil {
		t.Fatal(err)
	}
	return a
}

func mustPayment(t *testing.T, svc *payments.Service, corr string, value int64, key string) payments.Payment {
	t.Helper()
	p, err := svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: corr, Value: value, DestinationAlias: key})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func paymentStatus(t *testing.T, svc *payments.Service, id string) payments.PaymentStatus {
	t.Helper()
	p, err := svc.GetPayment(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Status
}

// TestOrders_FailedSendIsResent: a Send that fails leaves the order pending with its money
// blocked; the periodic pass sends it again once it is due, and not before.
func TestOrders_FailedSendIsResent(t *testing.T) {
	t.Parallel()
	eachStoreRail(t, func(t *testing.T, e env, rail *testRail) {
		is := is.New(t)
		fund(t, e, 10000)
		p := mustPayment(t, e.svc, "p1", 3000, "ana@example.com")
		rail.set(true, nil)
		_, err := e.svc.ApprovePayment(ctx, "p1")
		is.NoErr(err) // approved: the send is the machine's problem now
		is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentApproved)
		is.Equal(balance(t, e), payments.Balance{Total: 10000, Blocked: 3000, Available: 7000}) // held while unsent

		rail.set(false, nil)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(rail.sendCount(p.ID), 1) // not due yet: the pass leaves it

		e.clock.Advance(10 * time.Second) // the first retry's backoff
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(rail.sendCount(p.ID), 2)                                       // sent again by the pass
		is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentConfirmed)      // and settled
		is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000}) // the money left once
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(rail.sendCount(p.ID), 2) // a final order is never sent again
		audit(t, e.svc)
	})
}

// TestOrders_HungSendIsResent: a Send that never returns holds no lock and blocks nothing;
// once its lease ends the pass sends the order again and settles it; the late answer of
// the hung call changes nothing.
func TestOrders_HungSendIsResent(t *testing.T) {
	t.Parallel()
	eachStoreRail(t, func(t *testing.T, e env, rail *testRail) {
		is := is.New(t)
		fund(t, e, 10000)
		p := mustPayment(t, e.svc, "p1", 3000, "ana@example.com")
		release := make(chan struct{})
		rail.set(false, release)
		done := make(chan error)
		go func() { _, err := e.svc.ApprovePayment(ctx, "p1"); done <- err }()
		<-rail.entered // the first Send hangs
		rail.set(false, nil)

		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(rail.sendCount(p.ID), 1) // the first send's lease still holds
		e.clock.Advance(time.Minute)      // the lease (timeout + margin) has run out
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(rail.sendCount(p.ID), 2)                                  // sent again
		is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentConfirmed) // settled by the pass

		close(release)
		is.NoErr(<-done)                                                        // the hung call returns at last
		is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000}) // its answer moved nothing twice
		is.Equal(countEvents(t, e.svc, payments.EventMovementConfirmed), 1)     // one event
		audit(t, e.svc)
	})
}

// TestOrders_SendOutlivesRequest: the Rail is called with a context the request's
// cancellation does not reach, bounded by the send timeout.
func TestOrders_SendOutlivesRequest(t *testing.T) {
	t.Parallel()
	eachStoreRail(t, func(t *testing.T, e env, rail *testRail) {
		is := is.New(t)
		fund(t, e, 10000)
		mustPayment(t, e.svc, "p1", 3000, "ana@example.com")
		release := make(chan struct{})
		rail.set(false, release)
		reqCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { _, err := e.svc.ApprovePayment(reqCtx, "p1"); done <- err }()
		<-rail.entered
		cancel() // the client goes away mid-send
		rail.mu.Lock()
		sendCtx := rail.ctxs[0]
		rail.mu.Unlock()
		is.NoErr(sendCtx.Err()) // the send goes on
		_, hasDeadline := sendCtx.Deadline()
		is.True(hasDeadline) // but not for ever
		close(release)
		is.NoErr(<-done)
		is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentConfirmed) // recorded after the request ended
		audit(t, e.svc)
	})
}

// TestOrders_EveryPendingOrderIsReached: the pass pages through the queue, across
// companies, past any page size.
func TestOrders_EveryPendingOrderIsReached(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var rail *testRail
	e := newRailEnv(t, stores[0].open(t), func(c payments.Clock) payments.Rail { rail = newTestRail(c); return rail })
	rail.set(true, nil)
	var companies []*payments.Service
	for i := range 3 {
		svc := e.svc
		if i > 0 {
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: fmt.Sprintf("Co %d", i)})
			is.NoErr(err)
			svc, err = e.svc.Company(ctx, co.ID)
			is.NoErr(err)
		}
		companies = append(companies, svc)
		fund(t, env{svc: svc, clock: e.clock}, 1_000_000)
		for j := range 110 {
			corr := fmt.Sprintf("p%d", j)
			mustPayment(t, svc, corr, 100, "ana@example.com")
			_, err := svc.ApprovePayment(ctx, corr)
			is.NoErr(err)
		}
	}
	rail.set(false, nil)
	e.clock.Advance(time.Minute)
	is.NoErr(e.svc.RunDue(ctx))
	for _, svc := range companies {
		ps, _, err := svc.ListPayments(ctx, payments.PaymentFilter{ListParams: payments.ListParams{Limit: 1000}})
		is.NoErr(err)
		is.Equal(len(ps), 110)
		for _, p := range ps {
			is.Equal(p.Status, payments.PaymentConfirmed) // every one, past the first pages
		}
		a, err := svc.DefaultAccount(ctx)
		is.NoErr(err)
		is.Equal(a.Balance, payments.Balance{Total: 1_000_000 - 11000, Available: 1_000_000 - 11000})
		audit(t, svc)
	}
}

// TestOrders_RefundResentByPass: refunds go through the same machine.
func TestOrders_RefundResentByPass(t *testing.T) {
	t.Parallel()
	eachStoreRail(t, func(t *testing.T, e env, rail *testRail) {
		is := is.New(t)
		x := pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c1", Value: 10000}))
		rail.set(true, nil)
		r, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r1", Value: 1000})
		is.NoErr(err)
		is.Equal(r.Status, payments.RefundInProcessing)
		n, err := e.svc.SettleRefunds(ctx)
		is.NoErr(err)
		is.Equal(n, 0) // not due yet
		rail.set(false, nil)
		e.clock.Advance(10 * time.Second)
		n, err = e.svc.SettleRefunds(ctx)
		is.NoErr(err)
		is.Equal(n, 1) // sent again and settled
		is.Equal(refundStatus(t, e.svc, "r1"), payments.RefundConfirmed)
		audit(t, e.svc)
	})
}

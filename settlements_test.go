package payments_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/sandbox"
)

// pushRail is a bank that accepts every order (PENDING, with its own reference) and
// settles only when told: by a push (RecordSettlement) or when its Status is set. It
// records the orders Status was asked about.
type pushRail struct {
	inner *sandbox.Rail

	mu       sync.Mutex
	outcome  map[string]rail.Settlement // by order id, once settled
	refused  bool                       // Send refuses definitely
	lose     bool                       // Send acts, then its answer is lost
	sends    int
	statuses []rail.PixOrder
}

func newPushRail(c payments.Clock) *pushRail {
	return &pushRail{inner: sandbox.New(c, 0), outcome: map[string]rail.Settlement{}}
}

func (r *pushRail) PollInterval() time.Duration { return time.Hour } // it pushes; asking is the fallback

func (r *pushRail) Send(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sends++
	if r.refused {
		return rail.Settlement{}, rail.Refused(rail.ReasonAC06, "conta bloqueada")
	}
	r.outcome[o.ID] = rail.Settlement{Status: rail.SettlementPending, BankRef: "bank-" + o.ID, At: o.SentAt}
	if r.lose {
		return rail.Settlement{}, errors.New("connection reset after the request was sent")
	}
	return r.outcome[o.ID], nil
}

func (r *pushRail) Status(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, o)
	st, ok := r.outcome[o.ID]
	if !ok {
		return rail.Settlement{}, rail.ErrUnknownOrder
	}
	return st, nil
}

func (r *pushRail) ResolveKey(ctx context.Context, key string, t brcode.KeyType) (rail.KeyOwner, error) {
	return r.inner.ResolveKey(ctx, key, t)
}

func (r *pushRail) set(fn func(r *pushRail)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r)
}

// TestService_RecordSettlement: a bank that confirms by webhook settles the order once,
// with its reference kept and given back to Status; telling again changes nothing; a
// contradiction is a conflict; bad input names its field.
func TestService_RecordSettlement(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			var bank *pushRail
			e := newRailEnv(t, st.open(t), func(c payments.Clock) payments.Rail { bank = newPushRail(c); return bank })
			fund(t, e, 10000)
			p, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
				DestinationAlias: "ana@example.com", AutoApprove: true})
			is.NoErr(err)
			is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentApproved) // accepted, not settled

			e.clock.Advance(time.Hour) // the bank's poll interval: Status is asked with the bank's reference
			is.NoErr(e.svc.RunDue(ctx))
			bank.set(func(r *pushRail) {
				is.Equal(len(r.statuses), 1)                  // asked once, after the bank's interval
				is.Equal(r.statuses[0].BankRef, "bank-"+p.ID) // with the reference the bank gave
			})

			other, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra", PixKey: "outra@example.com"})
			is.NoErr(err)
			co, err := e.svc.Company(ctx, other.ID)
			is.NoErr(err)
			push := payments.Settlement{Status: payments.SettlementConfirmed, EndToEndID: "E12345678202611221200abcdefghijk", BankRef: "bank-" + p.ID, At: t0}
			is.NoErr(co.RecordSettlement(ctx, p.ID, push)) // any company's Service: the order finds its own
			is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentConfirmed)
			is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000})
			got, err := e.svc.GetPayment(ctx, "p1")
			is.NoErr(err)
			is.Equal(got.Transaction.EndToEndID, push.EndToEndID) // the bank's endToEndId

			is.NoErr(e.svc.RecordSettlement(ctx, p.ID, push))                       // told again
			is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000}) // moved nothing twice
			is.Equal(countEvents(t, e.svc, payments.EventMovementConfirmed), 1)

			err = e.svc.RecordSettlement(ctx, p.ID, payments.Settlement{Status: payments.SettlementFailed, Reason: "AC03"})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // the bank contradicts the books
			is.Equal(payments.ErrorField(err), "status")
			is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentConfirmed) // unchanged

			err = e.svc.RecordSettlement(ctx, "no-such-order", push)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			err = e.svc.RecordSettlement(ctx, p.ID, payments.Settlement{Status: "DONE"})
			is.Equal(payments.ErrorField(err), "status")
			err = e.svc.RecordSettlement(ctx, "", push)
			is.Equal(payments.ErrorField(err), "orderID")
			audit(t, e.svc)
		})
	}
}

// TestService_RecordSettlementFailed: a pushed failure releases the held money with the
// bank's reason and words in the MOVEMENT_FAILED event.
func TestService_RecordSettlementFailed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var bank *pushRail
	e := newRailEnv(t, stores[0].open(t), func(c payments.Clock) payments.Rail { bank = newPushRail(c); return bank })
	fund(t, e, 10000)
	p, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
		DestinationAlias: "ana@example.com", AutoApprove: true})
	is.NoErr(err)
	is.NoErr(e.svc.RecordSettlement(ctx, p.ID, payments.Settlement{Status: payments.SettlementFailed, Reason: "AC07", Detail: "conta encerrada"}))
	got, err := e.svc.GetPayment(ctx, "p1")
	is.NoErr(err)
	is.Equal(got.Status, payments.PaymentFailed)
	is.Equal(got.Transaction.ProviderRejectedReason, "AC07")
	is.Equal(balance(t, e), payments.Balance{Total: 10000, Available: 10000}) // returned
	evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
	is.NoErr(err)
	last := evs[len(evs)-1]
	is.Equal(last.Name, e.svc.EventName(payments.EventMovementFailed))
	is.True(strings.Contains(string(last.Data), "conta encerrada")) // the bank's own words reach the company
	audit(t, e.svc)
}

// TestOrders_RefusedFailsAtOnce: a definite refusal fails the order in the call that sent
// it, its money returned, and it is never sent again.
func TestOrders_RefusedFailsAtOnce(t *testing.T) {
	t.Parallel()
	eachStoreRailOf(t, newPushRail, func(t *testing.T, e env, bank *pushRail) {
		is := is.New(t)
		fund(t, e, 10000)
		bank.set(func(r *pushRail) { r.refused = true })
		_, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
			DestinationAlias: "ana@example.com", AutoApprove: true})
		is.NoErr(err)
		got, err := e.svc.GetPayment(ctx, "p1")
		is.NoErr(err)
		is.Equal(got.Status, payments.PaymentFailed) // at once, no retry needed
		is.Equal(got.Transaction.ProviderRejectedReason, payments.ReasonAC06)
		is.Equal(balance(t, e), payments.Balance{Total: 10000, Available: 10000})
		e.clock.Advance(24 * time.Hour)
		is.NoErr(e.svc.RunDue(ctx))
		bank.set(func(r *pushRail) { is.Equal(r.sends, 1) }) // never sent again
		audit(t, e.svc)
	})
}

// TestOrders_LostAnswerAsksFirst: a send whose answer was lost leaves the outcome unknown:
// the next attempt asks Status and does not send again.
func TestOrders_LostAnswerAsksFirst(t *testing.T) {
	t.Parallel()
	eachStoreRailOf(t, newPushRail, func(t *testing.T, e env, bank *pushRail) {
		is := is.New(t)
		fund(t, e, 10000)
		bank.set(func(r *pushRail) { r.lose = true })
		p, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
			DestinationAlias: "ana@example.com", AutoApprove: true})
		is.NoErr(err)
		is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentApproved)
		bank.set(func(r *pushRail) {
			r.lose = false
			r.outcome[p.ID] = rail.Settlement{Status: rail.SettlementConfirmed, EndToEndID: "E12345678202611221200lostanswer1", At: t0}
		})
		e.clock.Advance(10 * time.Second) // the first retry's backoff
		is.NoErr(e.svc.RunDue(ctx))
		bank.set(func(r *pushRail) {
			is.Equal(r.sends, 1)         // not sent twice: the bank had it
			is.Equal(len(r.statuses), 1) // it was asked
		})
		is.Equal(paymentStatus(t, e.svc, "p1"), payments.PaymentConfirmed)
		is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000})
		audit(t, e.svc)
	})
}

// TestOrders_StuckThenSettled: an order whose sends keep failing is marked stuck after
// MaxSendFailures, listed and counted across companies, still retried, and settles
// normally when the bank answers, leaving the list.
func TestOrders_StuckThenSettled(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			clock := payments.NewManualClock(t0)
			bank := newTestRail(clock)
			svc, err := payments.New(st.open(t), payments.Options{Clock: clock, Rail: bank, MaxSendFailures: 3,
				DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
			is.NoErr(err)
			e := env{svc: svc, clock: clock}
			fund(t, e, 10000)
			bank.set(true, nil)
			p := mustPayment(t, svc, "p1", 3000, "ana@example.com")
			_, err = svc.ApprovePayment(ctx, "p1")
			is.NoErr(err)

			n, err := svc.CountStuckOrders(ctx)
			is.NoErr(err)
			is.Equal(n, 0) // one failure is not stuck
			for i := 0; i < 2; i++ {
				clock.Advance(10 * time.Minute) // past every backoff so far
				is.NoErr(svc.RunDue(ctx))
			}
			is.Equal(bank.sendCount(p.ID), 3)
			other, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra", PixKey: "outra@example.com"})
			is.NoErr(err)
			co, err := svc.Company(ctx, other.ID)
			is.NoErr(err)
			stuck, page, err := co.ListStuckOrders(ctx, payments.ListParams{}) // an operator's view, from any company
			is.NoErr(err)
			is.Equal(page.TotalCount, 1)
			is.Equal(len(stuck), 1)
			is.Equal(stuck[0].ID, p.ID)
			is.Equal(stuck[0].Company, svc.CompanyID())
			is.Equal(stuck[0].Kind, payments.OrderPayment)
			is.Equal(stuck[0].Failures, 3)
			is.True(stuck[0].LastError != "")
			n, err = svc.CountStuckOrders(ctx)
			is.NoErr(err)
			is.Equal(n, 1)                                                                          // counted
			is.Equal(balance(t, e), payments.Balance{Total: 10000, Blocked: 3000, Available: 7000}) // still held

			clock.Advance(10 * time.Minute)
			is.NoErr(svc.RunDue(ctx))
			is.Equal(bank.sendCount(p.ID), 4) // still retried while stuck

			bank.set(false, nil)
			clock.Advance(10 * time.Minute)
			is.NoErr(svc.RunDue(ctx))
			is.Equal(paymentStatus(t, svc, "p1"), payments.PaymentConfirmed) // settled normally
			is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000})
			n, err = svc.CountStuckOrders(ctx)
			is.NoErr(err)
			is.Equal(n, 0) // no longer stuck
			stuck, _, err = svc.ListStuckOrders(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(len(stuck), 0)
			audit(t, svc)
		})
	}
}

// TestService_Sandbox: a Service says whether its bank is make-believe.
func TestService_Sandbox(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	is.True(e.svc.Sandbox()) // no Rail given: the sandbox bank
	var bank *pushRail
	e = newRailEnv(t, stores[0].open(t), func(c payments.Clock) payments.Rail { bank = newPushRail(c); return bank })
	is.True(!e.svc.Sandbox()) // a bank that does not say it is a sandbox
}

// eachStoreRailOf runs fn on every store with a Rail made by mk.
func eachStoreRailOf[R payments.Rail](t *testing.T, mk func(payments.Clock) R, fn func(t *testing.T, e env, r R)) {
	t.Helper()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			var r R
			e := newRailEnv(t, st.open(t), func(c payments.Clock) payments.Rail { r = mk(c); return r })
			fn(t, e, r)
		})
	}
}

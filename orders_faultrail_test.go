package payments_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail/railtest"
	"github.com/pixfoundry/payments/rail/sandbox"
)

// TestOrders_UnreliableBank: with a bank that fails a fifth of the calls before acting and
// loses a fifth of its answers after acting, every payment still settles exactly once: the
// money leaves once per payment, each has one MOVEMENT_CONFIRMED, and the ledger audits
// clean. Lost answers are asked about (Status) instead of sent blind.
func TestOrders_UnreliableBank(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			var faults *railtest.FaultRail
			e := newRailEnv(t, st.open(t), func(c payments.Clock) payments.Rail {
				faults = railtest.Faults(sandbox.New(c, 0), 7)
				for _, m := range []railtest.Method{railtest.MethodSend, railtest.MethodStatus} {
					faults.SetRate(m, railtest.Fail, 0.2)
					faults.SetRate(m, railtest.LoseAnswer, 0.2)
				}
				return faults.Rail()
			})
			fund(t, e, 100_000)
			const n = 30
			for i := range n {
				_, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: fmt.Sprint("p", i), Value: 1000,
					DestinationAlias: "ana@example.com", AutoApprove: true})
				is.NoErr(err)
			}
			for round := 0; round < 50 && pendingPayments(t, e, n) > 0; round++ {
				e.clock.Advance(10 * time.Minute) // past any backoff
				is.NoErr(e.svc.RunDue(ctx))
			}
			is.Equal(pendingPayments(t, e, n), 0)                                                    // every payment settled
			is.Equal(balance(t, e), payments.Balance{Total: 70_000, Available: 70_000})              // each one's money left once
			is.Equal(countEvents(t, e.svc, payments.EventMovementConfirmed), n)                      // one event each
			is.True(faults.Injected(railtest.MethodSend)+faults.Injected(railtest.MethodStatus) > 0) // the bank did fail
			audit(t, e.svc)
		})
	}
}

// pendingPayments counts the payments p0..p(n-1) not yet CONFIRMED.
func pendingPayments(t *testing.T, e env, n int) int {
	t.Helper()
	k := 0
	for i := range n {
		if paymentStatus(t, e.svc, fmt.Sprint("p", i)) != payments.PaymentConfirmed {
			k++
		}
	}
	return k
}

package payments_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestService_RunDue_TwoProcesses runs the due pass from two processes sharing one store,
// each with its own clock moved to the same time, twice each and at once: every
// subscription period is generated once and every expiry recorded once. Exactly once
// rests on each entry's work checking, in its transaction, that it is still due; on
// postgres that is two database sessions and SERIALIZABLE.
func TestService_RunDue_TwoProcesses(t *testing.T) {
	t.Parallel()
	for _, stt := range stores {
		t.Run(stt.name, func(t *testing.T) {
			is := is.New(t)
			st := stt.open(t)
			t.Cleanup(func() { st.Close() })
			clockA, clockB := payments.NewManualClock(t0), payments.NewManualClock(t0)
			a, b := process(t, st, clockA, nil), process(t, st, clockB, nil)
			const subs, short = 30, 10
			for i := range subs {
				createSubscription(t, a, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i)})
			}
			for i := range short {
				_, err := b.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("short", i), Value: 100, ExpiresIn: payments.MinChargeExpiresIn})
				is.NoErr(err)
			}
			later := t0.AddDate(0, 3, 0) // three periods: Dec 5, Jan 5, Feb 5
			clockA.Set(later)
			clockB.Set(later)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i, svc := range []*payments.Service{a, b, a, b} {
				wg.Go(func() { errs[i] = svc.RunDue(ctx) })
			}
			wg.Wait()
			for _, err := range errs {
				is.NoErr(err) // every pass ran through
			}
			_, page, err := a.ListCharges(ctx, payments.ChargeFilter{Subscription: "s0"})
			is.NoErr(err)
			is.Equal(page.TotalCount, 3) // one subscription: one charge per period
			_, page, err = a.ListCharges(ctx, payments.ChargeFilter{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 3*subs+short) // every period once, in all
			is.Equal(countEvents(t, a, payments.EventChargeCreated), 3*subs+short)
			_, expired, err := a.ListCharges(ctx, payments.ChargeFilter{Status: payments.ChargeExpired, ListParams: payments.ListParams{Limit: payments.MaxLimit}})
			is.NoErr(err)
			is.True(expired.TotalCount >= short)                                         // the short charges (and past periods' charges) expired
			is.Equal(countEvents(t, a, payments.EventChargeExpired), expired.TotalCount) // each expiry recorded once
			clockA.Advance(time.Hour)
			is.NoErr(a.RunDue(ctx))
			is.Equal(countEvents(t, a, payments.EventChargeExpired), expired.TotalCount) // nothing twice
			audit(t, a)
		})
	}
}

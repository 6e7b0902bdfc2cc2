package payments_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
)

// BenchmarkRunDue_12Months: 10,000 ACTIVE monthly subscriptions, the clock moved 12
// months, one pass: 120,000 charges generated, each period once. Only the pass is timed;
// each iteration sets up a fresh store (run with -benchtime=1x -count=N). cpu-µs/charge
// is the CPU time of the process during the pass per generated charge.
func BenchmarkRunDue_12Months(b *testing.B) {
	benchmarkDue12Months(b, func(e env, to time.Time) error {
		e.clock.Set(to)
		return e.svc.RunDue(ctx)
	})
}

// BenchmarkAdvanceClock_12Months is BenchmarkRunDue_12Months with the clock moved by
// AdvanceClock: a pass on each period's first moment and on each expiry, 24 in all, so
// the 120,000 charges are generated and also expired (with their events), as a year of
// running does.
func BenchmarkAdvanceClock_12Months(b *testing.B) {
	benchmarkDue12Months(b, func(e env, to time.Time) error {
		_, err := e.svc.AdvanceClock(ctx, e.clock, to.Sub(e.clock.Now()))
		return err
	})
}

// benchmarkDue12Months times move, which takes the clock from t0 to 12 months' periods
// later and does the work due, with 10,000 monthly subscriptions, on memory and bolt.
func benchmarkDue12Months(b *testing.B, move func(e env, to time.Time) error) {
	const subs = 10_000
	for _, st := range stores[:2] { // memory and bolt
		b.Run(st.name, func(b *testing.B) {
			var cpu time.Duration // of the passes
			for range b.N {
				b.StopTimer()
				e := newEnv(b, st.open(b))
				var wg sync.WaitGroup
				for g := range 32 {
					wg.Go(func() {
						for i := g; i < subs; i += 32 {
							createSubscription(b, e.svc, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i), Value: 1990})
						}
					})
				}
				wg.Wait()
				b.StartTimer()
				cpu0 := processCPU(b)
				if err := move(e, t0.AddDate(1, 0, 0).Add(-24*time.Hour)); err != nil { // Dec 5 .. Nov 5: 12 periods
					b.Fatal(err)
				}
				cpu += processCPU(b) - cpu0
				b.StopTimer()
				_, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{ListParams: payments.ListParams{Limit: 1}})
				if err != nil || page.TotalCount != 12*subs {
					b.Fatalf("%d charges, %v", page.TotalCount, err)
				}
				e.store.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*12*subs), "cpu-µs/charge")
		})
	}
}

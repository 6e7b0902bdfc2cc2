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
				e.clock.Set(t0.AddDate(1, 0, 0).Add(-24 * time.Hour)) // Dec 5 .. Nov 5: 12 periods
				b.StartTimer()
				cpu0 := processCPU(b)
				if err := e.svc.RunDue(ctx); err != nil {
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

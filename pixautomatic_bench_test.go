package payments_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
)

// BenchmarkPixAutomaticDue: 1,000 monthly Pix Automático subscriptions with approved
// mandates, the clock moved 12 months, one pass: 12,000 installments generated and debited
// (each a received Pix with its ledger entry and four events), each period once. Only the
// pass is timed; cpu-µs/installment is the process's CPU time during the pass per installment
// (the wall time depends on what else the machine runs); each iteration sets up a fresh store (run with -benchtime=1x -count=N).
func BenchmarkPixAutomaticDue(b *testing.B) {
	const subs, periods = 1_000, 12
	for _, st := range stores[:2] { // memory and bolt
		b.Run(st.name, func(b *testing.B) {
			var cpu time.Duration // of the passes
			for range b.N {
				b.StopTimer()
				e := newEnv(b, st.open(b))
				for i := range subs {
					s := createSubscription(b, e.svc, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i), Value: 1990,
						Type: payments.SubscriptionPixRecurring})
					if _, err := e.svc.ApprovePixAutomatic(ctx, s.GlobalID); err != nil {
						b.Fatal(err)
					}
				}
				e.clock.Set(t0.AddDate(1, 0, 0).Add(-24 * time.Hour)) // Dec 5 .. Nov 5: 12 periods
				b.StartTimer()
				cpu0 := processCPU(b)
				if err := e.svc.RunDue(ctx); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU(b) - cpu0
				b.StopTimer()
				_, page, err := e.svc.ListInstallments(ctx, "s0", payments.ListParams{Limit: 1})
				if err != nil || page.TotalCount != periods {
					b.Fatalf("%d installments, %v", page.TotalCount, err)
				}
				if a, err := e.svc.DefaultAccount(ctx); err != nil || a.Balance.Total <= 0 {
					b.Fatalf("balance %+v, %v", a.Balance, err)
				}
				e.store.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*subs*periods), "cpu-µs/installment")
		})
	}
}

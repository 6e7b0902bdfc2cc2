package payments_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/bolt"
)

// fanoutBCallers is how many goroutines of company B create charges at once in
// BenchmarkFanoutFairness.
const fanoutBCallers = 4

// BenchmarkFanoutFairness: one company's webhooks must not slow the others' writes down.
// On bolt (one writer, group commit), company A creates charges from one goroutine, first
// alone, then while company B, with the most webhooks a company may have on one event
// (DefaultMaxWebhooksPerEvent e-mail webhooks on CHARGE_CREATED), creates charges from
// fanoutBCallers goroutines. Each iteration is one A charge alone and one under B's load.
// It reports A's create latency alone (A-p50-unloaded-µs, A-p99-unloaded-µs) and under
// B's load (A-p50-µs, A-p99-µs), their ratio at p99 (A-p99-ratio), and B's (B-p50-µs,
// B-p99-µs, B-creates for how many B made).
//
// A B charge's own transaction writes one fan-out entry at most; queueing the webhooks
// happens after it, in short transactions (webhook_fanout.go). How B's webhooks are
// delivered decides how much of that there is:
//   - delivery=none: nothing delivers; they stay queued after B's first charge, as in a
//     backlog, and B's later charges queue none of them.
//   - delivery=serve: a ServeWebhooks worker mails B's events meanwhile; its transactions
//     compete for the writer too, and a webhook that catches up goes off the queue.
//   - delivery=drain: each B goroutine runs a delivery pass (RunWebhooks, not timed) after
//     each of its charges, so nearly every B charge finds the webhooks off the queue and
//     has all of them queued again: the most fan-out B's charges cause.
//
// hooks=0 is the control: B's writes without webhooks, what A's latency under B's load
// cannot go below.
func BenchmarkFanoutFairness(b *testing.B) {
	for _, c := range []struct {
		hooks    int
		delivery string
	}{{0, "none"}, {payments.DefaultMaxWebhooksPerEvent, "none"}, {payments.DefaultMaxWebhooksPerEvent, "serve"}, {payments.DefaultMaxWebhooksPerEvent, "drain"}} {
		b.Run(fmt.Sprintf("hooks=%d/delivery=%s", c.hooks, c.delivery), func(b *testing.B) {
			st, err := bolt.Open(filepath.Join(b.TempDir(), "payments.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			a, err := payments.New(st, payments.Options{Mailer: discardMailer{},
				DefaultCompany: payments.CreateCompanyParams{Name: "A", PixKey: "pix@a.example.com"}})
			if err != nil {
				b.Fatal(err)
			}
			co, err := a.CreateCompany(ctx, payments.CreateCompanyParams{Name: "B"})
			if err != nil {
				b.Fatal(err)
			}
			bsvc, err := a.Company(ctx, co.ID)
			if err != nil {
				b.Fatal(err)
			}
			for i := range c.hooks {
				if _, err := bsvc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: fmt.Sprint("mail ", i),
					Email: fmt.Sprintf("ops%d@b.example.com", i), Event: bsvc.EventName(payments.EventChargeCreated)}); err != nil {
					b.Fatal(err)
				}
			}
			if c.delivery == "serve" {
				serveCtx, stop := context.WithCancel(ctx)
				served := make(chan struct{})
				go func() {
					defer close(served)
					a.ServeWebhooks(serveCtx, time.Second)
				}()
				defer func() {
					stop()
					<-served
				}()
			}

			b.ResetTimer()
			alone, err := fanoutCreates(a, "alone-", b.N)
			if err != nil {
				b.Fatal(err)
			}
			stopB := make(chan struct{})
			bLat := make([][]time.Duration, fanoutBCallers)
			bErr := make([]error, fanoutBCallers)
			var wg sync.WaitGroup
			for g := range fanoutBCallers {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stopB:
							return
						default:
						}
						t := time.Now()
						if _, err := bsvc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("b%d-%d", g, i), Value: 100}); err != nil {
							bErr[g] = err
							return
						}
						bLat[g] = append(bLat[g], time.Since(t))
						if c.delivery == "drain" {
							if err := bsvc.RunWebhooks(ctx); err != nil {
								bErr[g] = err
								return
							}
						}
					}
				})
			}
			loaded, err := fanoutCreates(a, "loaded-", b.N)
			close(stopB)
			wg.Wait()
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range bErr {
				if err != nil {
					b.Fatal(err)
				}
			}
			bAll := slices.Concat(bLat...)
			b.ReportMetric(micros(percentile(alone, 50)), "A-p50-unloaded-µs")
			b.ReportMetric(micros(percentile(alone, 99)), "A-p99-unloaded-µs")
			b.ReportMetric(micros(percentile(loaded, 50)), "A-p50-µs")
			b.ReportMetric(micros(percentile(loaded, 99)), "A-p99-µs")
			b.ReportMetric(micros(percentile(loaded, 99))/micros(percentile(alone, 99)), "A-p99-ratio")
			b.ReportMetric(micros(percentile(bAll, 50)), "B-p50-µs")
			b.ReportMetric(micros(percentile(bAll, 99)), "B-p99-µs")
			b.ReportMetric(float64(len(bAll)), "B-creates")
		})
	}
}

// fanoutCreates creates n charges of svc one after another and returns the latency of
// each.
func fanoutCreates(svc *payments.Service, prefix string, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for i := range n {
		t := time.Now()
		if _, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint(prefix, i), Value: 1990}); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}

// percentile is the p-th percentile of d (0 when d is empty); it sorts d.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// discardMailer accepts every e-mail and sends nothing.
type discardMailer struct{}

func (discardMailer) SendMail(context.Context, payments.MailMessage) error { return nil }

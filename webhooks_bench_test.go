package payments_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// BenchmarkWebhookDelivery: events delivered per second by one pass (RunWebhooks) to a
// receiver on 127.0.0.1, per webhook in order, signed (RSA-2048 + two HMACs) and recorded;
// with 1 and 4 webhooks on the event. The events are emitted (charges created) outside the
// timer.
func BenchmarkWebhookDelivery(b *testing.B) {
	for _, hooks := range []int{1, 4} {
		b.Run(fmt.Sprintf("webhooks=%d", hooks), func(b *testing.B) {
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
			defer rcv.Close()
			svc, err := payments.New(memory.New(), payments.Options{
				WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true})})
			if err != nil {
				b.Fatal(err)
			}
			for i := range hooks {
				if _, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: fmt.Sprintf("%s/%d", rcv.URL, i), Event: svc.EventName(payments.EventChargeCreated)}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			for i := range b.N {
				if _, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("b-", i), Value: 100}); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			for range b.N/1000 + 1 { // a pass delivers at most 1000 events per webhook
				if err := svc.RunWebhooks(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*hooks)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// slowCommitStore is a store whose every Update, once slow is set, answers delay after its
// commit: a disk whose fdatasync takes that long, or a database a round trip away.
type slowCommitStore struct {
	store.Store
	delay time.Duration
	slow  atomic.Bool
}

func (s *slowCommitStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := s.Store.Update(ctx, fn)
	if s.slow.Load() {
		time.Sleep(s.delay)
	}
	return err
}

// BenchmarkWebhookDeliverySlowCommit: deliveries per second of one webhook's 1,000 events
// (one pass) when every commit takes commit to answer, to an in-process receiver that
// answers 200 after a millisecond: how much a delivery run's sends wait for its steps'
// commits. A step runs beside the sends and the run keeps events claimed ahead, so while
// a commit is on its way the sends that end are followed by the next at once; run in turn,
// each step's commit stopped the sends that ended meanwhile from being replaced. The
// signatures (RSA-2048, a millisecond of CPU or so each) bound it as the commits shorten.
func BenchmarkWebhookDeliverySlowCommit(b *testing.B) {
	const events = 1000
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	for _, commit := range []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("commit=%s", commit), func(b *testing.B) {
			var delivered float64
			for range b.N {
				b.StopTimer()
				var sent atomic.Int64
				st := &slowCommitStore{Store: memory.New(), delay: commit}
				svc, err := payments.New(st, payments.Options{WebhookSigningKey: key,
					WebhookSender: senderFunc(func(ctx context.Context, req payments.WebhookRequest) (payments.WebhookResponse, error) {
						time.Sleep(time.Millisecond)
						sent.Add(1)
						return payments.WebhookResponse{Status: http.StatusOK}, nil
					})})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://receiver.example.com/hook", Event: svc.EventName(payments.EventChargeCreated)}); err != nil {
					b.Fatal(err)
				}
				for i := range events {
					if _, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("s-", i), Value: 100}); err != nil {
						b.Fatal(err)
					}
				}
				sent.Store(0) // CreateWebhook's test call
				st.slow.Store(true)
				start := time.Now()
				b.StartTimer()
				if err := svc.RunWebhooks(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if n := sent.Load(); n != events {
					b.Fatalf("sent %d, want %d", n, events)
				}
				delivered += events / time.Since(start).Seconds()
			}
			b.ReportMetric(delivered/float64(b.N), "deliveries/s")
		})
	}
}

package payments_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
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

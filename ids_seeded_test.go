package payments_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// TestOptionsIDs_Repeatable: with a seeded Options.IDs and a ManualClock, the same calls
// give the same ids, run after run, even where the Service works on several goroutines:
// the due pass's preparation of many subscriptions' charges at once, and a delivery pass to
// several webhooks. Before, the charges of subscriptions falling due together swapped
// transactionIDs between runs, and webhook attempts their ids.
func TestOptionsIDs_Repeatable(t *testing.T) {
	t.Parallel()
	run := func() string {
		clock := payments.NewManualClock(t0)
		svc, err := payments.New(memory.New(), payments.Options{Clock: clock, IDs: rand.NewChaCha8([32]byte{1}),
			WebhookSender: senderFunc(func(context.Context, payments.WebhookRequest) (payments.WebhookResponse, error) {
				return payments.WebhookResponse{Status: 200}, nil
			}), DefaultCompany: payments.CreateCompanyParams{Name: "Loja"}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			if _, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: fmt.Sprint("w", i), URL: fmt.Sprintf("https://h%d.example.com/", i), Event: "OPENPIX:CHARGE_CREATED"}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 16 {
			if _, err := svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i), Value: int64(100 + i),
				Customer: &payments.CreateCustomerParams{Name: "C", Email: fmt.Sprintf("c%d@example.com", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.AdvanceClock(ctx, clock, 40*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		cs, _, err := svc.ListCharges(ctx, payments.ChargeFilter{ListParams: payments.ListParams{Limit: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			fmt.Fprintln(&b, c.Subscription, c.CreatedAt, c.TransactionID, c.PaymentLinkID, c.GlobalID)
		}
		ws, _, err := svc.ListWebhooks(ctx, "", payments.ListParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			as, _, err := svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				fmt.Fprintln(&b, w.ID, a.ID, a.Event)
			}
		}
		return b.String()
	}
	is := is.New(t)
	first := run()
	is.True(strings.Count(first, "\n") > 40) // charges and attempts were made
	for range 5 {
		is.Equal(run(), first) // the same ids every run
	}
}

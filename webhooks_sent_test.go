package payments_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestService_WebhookSent: a delivery of an event carrying a Pix that ends (delivered, or
// given up) adds a webhookSent entry to its transaction; retries in between add none; the
// list's HasWebhook filter finds the transactions with and without, combined with the
// other filters.
func TestService_WebhookSent(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{WebhookAttempts: 2}, func(t *testing.T, e env) {
		is := is.New(t)
		before, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 500})
		is.NoErr(err)
		r := newReceiver(t)
		received := createWebhook(t, e.svc, r.URL+"/received", payments.EventTransactionReceived)
		completed := createWebhook(t, e.svc, r.URL+"/completed", payments.EventChargeCompleted)
		createWebhook(t, e.svc, r.URL+"/created", payments.EventChargeCreated)
		r.answer = func(n int, d delivery) int {
			if d.event == e.svc.EventName(payments.EventChargeCompleted) {
				return 500 // fails every time: given up after the second attempt
			}
			return 200
		}
		c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 1000})
		is.NoErr(err)
		x := pay(t, e, c)
		is.NoErr(e.svc.RunDue(ctx))
		got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(len(got.WebhookSent), 1) // TRANSACTION_RECEIVED delivered; CHARGE_COMPLETED still retried
		is.Equal(got.WebhookSent[0], payments.WebhookSent{Event: received.Event, Status: payments.WebhookSentSuccess, Time: t0, IsRetry: false})
		e.clock.Advance(10 * time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		got, err = e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(len(got.WebhookSent), 2) // CHARGE_COMPLETED given up
		is.Equal(got.WebhookSent[1], payments.WebhookSent{Event: completed.Event, Status: payments.WebhookSentFailed, Time: t0.Add(10 * time.Second), IsRetry: true})

		// the manual redelivery is audited too
		evs, err := e.svc.Events(ctx, 0, 100)
		is.NoErr(err)
		var seq uint64
		for _, ev := range evs {
			if ev.Name == received.Event {
				seq = ev.Seq // x's: the last one (before's came before the webhook)
			}
		}
		_, err = e.svc.ResendWebhookEvent(ctx, received.ID, seq)
		is.NoErr(err)
		got, err = e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(len(got.WebhookSent), 3) // a third entry
		is.Equal(got.WebhookSent[2].Status, payments.WebhookSentSuccess)
		is.True(got.WebhookSent[2].IsRetry) // a redelivery is a retry

		// the wire shape of an entry
		b, err := json.Marshal(got.WebhookSent[1])
		is.NoErr(err)
		is.Equal(string(b), `{"OPENPIX:CHARGE_COMPLETED":{"status":"FAILED","time":"2026-11-22T12:00:10Z"},"isRetry":true}`)
		var back payments.WebhookSent
		is.NoErr(json.Unmarshal(b, &back))
		is.Equal(back, got.WebhookSent[1]) // it reads back

		yes, no := true, false
		list := func(f payments.TransactionFilter) []string {
			t.Helper()
			xs, _, err := e.svc.ListTransactions(ctx, f)
			is.NoErr(err)
			var ids []string
			for _, x := range xs {
				ids = append(ids, x.EndToEndID)
			}
			return ids
		}
		is.Equal(list(payments.TransactionFilter{HasWebhook: &yes}), []string{x.EndToEndID})               // with
		is.Equal(list(payments.TransactionFilter{HasWebhook: &no}), []string{before.EndToEndID})           // without
		is.Equal(len(list(payments.TransactionFilter{})), 2)                                               // both without the filter
		is.Equal(list(payments.TransactionFilter{HasWebhook: &yes, Charge: "c1"}), []string{x.EndToEndID}) // with the charge filter
		is.Equal(len(list(payments.TransactionFilter{HasWebhook: &no, Charge: "c1"})), 0)
		is.Equal(list(payments.TransactionFilter{HasWebhook: &no, Type: payments.TransactionPayment}), []string{before.EndToEndID}) // with type
		is.Equal(len(list(payments.TransactionFilter{HasWebhook: &yes, Start: t0.Add(time.Second)})), 0)                            // with start: x is at t0
		is.Equal(list(payments.TransactionFilter{HasWebhook: &yes, Start: t0, End: t0}), []string{x.EndToEndID})
	})
}

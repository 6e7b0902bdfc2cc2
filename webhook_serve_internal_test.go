package payments

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store/memory"
)

// TestServeWebhooks_NoSenderDoesNotSpin: a process without a WebhookSender (another
// process on a shared store, say) finds a URL webhook due and sends nothing: deliverWebhook
// says so (errNoSender), and the worker then waits for its next tick instead of looking
// again at once. Answered nil, the worker looked again at once, forever: ten thousand
// store reads in under two seconds after one commit.
func TestServeWebhooks_NoSenderDoesNotSpin(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	ok := senderOK{}
	a, err := New(st, Options{Clock: clock, WebhookSender: ok})
	is.NoErr(err)
	w, err := a.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	b, err := New(st, Options{Clock: clock}) // no sender
	is.NoErr(err)
	_, err = b.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c1", Value: 100})
	is.NoErr(err)
	is.NoErr(b.fanOut(ctx)) // the charge's event queues the webhook

	is.Equal(b.deliverWebhook(ctx, w.ID), errNoSender) // nothing sent, and said so
	page, _, err := b.dueWebhooks(ctx, "", sortTime(b.now())+"~")
	is.NoErr(err)
	is.Equal(len(page), 1) // still queued, for a Service with a sender

	d := &webhookDispatch{svc: b, slots: make(chan struct{}, 1), perCompany: 1, inFlight: map[string]int{}, freed: make(chan struct{}, 1)}
	for _, look := range []bool{false, true} {
		d.slots <- struct{}{}
		d.inFlight[b.company]++
		d.ended(b.company, look)
		is.Equal(len(d.freed), map[bool]int{false: 0, true: 1}[look]) // the worker is woken only after progress
		is.Equal(len(d.slots), 0)                                     // the turn is given back either way
	}
	is.NoErr(a.RunWebhooks(ctx)) // the process with a sender delivers it
	page, _, err = a.dueWebhooks(ctx, "", sortTime(a.now())+"~")
	is.NoErr(err)
	is.Equal(len(page), 0)
}

type senderOK struct{}

func (senderOK) SendWebhook(context.Context, WebhookRequest) (WebhookResponse, error) {
	return WebhookResponse{Status: 200}, nil
}

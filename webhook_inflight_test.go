package payments_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// TestService_WebhookInFlight: one webhook's events are sent several at once, at most
// Options.WebhookInFlight: the window opens at one and grows by one with each delivery,
// each event is delivered once and its attempt recorded.
func TestService_WebhookInFlight(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const window, events = 3, 8
	type held struct {
		id      string
		release chan struct{}
		out     chan struct{} // closed once it is no longer counted in flight
	}
	entered := make(chan held, events)
	var mu sync.Mutex
	cur, peak := 0, 0
	sender := senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
		if strings.Contains(string(r.Body), "teste_webhook") {
			return payments.WebhookResponse{Status: 200}, nil
		}
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		h := held{id: r.Header.Get("webhook-id"), release: make(chan struct{}), out: make(chan struct{})}
		entered <- h
		<-h.release
		mu.Lock()
		cur--
		mu.Unlock()
		close(h.out)
		return payments.WebhookResponse{Status: 200}, nil
	})
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0), WebhookSender: sender, WebhookInFlight: window})
	is.NoErr(err)
	w := createWebhook(t, svc, "https://hooks.example.com/in", payments.EventChargeCreated)
	for i := range events {
		newCharge(t, svc, fmt.Sprint("c", i))
	}
	done := make(chan error, 1)
	go func() { done <- svc.RunWebhooks(ctx) }()
	next := func() held {
		select {
		case h := <-entered:
			return h
		case <-time.After(10 * time.Second): // a guard against a hang, not a wait for time
			t.Fatal("no delivery started")
			return held{}
		}
	}
	var pending []held
	seen := map[string]int{}
	for r := range events { // r deliveries released so far, oldest first
		for len(pending) < min(r+1, window, events-r) {
			h := next()
			pending = append(pending, h)
			seen[h.id]++
		}
		mu.Lock()
		is.Equal(cur, len(pending)) // these are in flight at once
		mu.Unlock()
		close(pending[0].release)
		<-pending[0].out
		pending = pending[1:]
	}
	is.NoErr(<-done)
	is.Equal(peak, window)      // several at once, never more than the window
	is.Equal(len(seen), events) // every event
	for id, n := range seen {
		is.Equal(n, 1) // once
		is.True(strings.HasPrefix(id, "msg_"+w.ID+"_"))
	}
	as, page, err := svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, events) // each attempt recorded
	for _, a := range as {
		is.Equal(a.Outcome, "delivered")
	}
	lag, err := svc.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag.Events, uint64(0)) // nothing owed
}

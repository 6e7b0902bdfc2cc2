package payments

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// TestEventHead: the seq and name read from the start of every stored event are the ones
// its full decode gives; a record in another form says so, for the caller to decode.
func TestEventHead(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	s, err := New(st, Options{Clock: NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))})
	is.NoErr(err)
	for i := range 3 {
		_, err := s.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("h", i), Value: 100})
		is.NoErr(err)
	}
	var recs []store.Record
	is.NoErr(s.view(ctx, func(t *txn) error {
		p, err := t.tx.List(collEvents, t.company, store.Query{Index: indexAll, Limit: 100, NoTotal: true})
		recs = p.Records
		return err
	}))
	is.True(len(recs) >= 3) // a CHARGE_CREATED each at least
	for _, r := range recs {
		var e Event
		is.NoErr(decode(r, &e))
		seq, name, ok := eventHead(r.Data)
		is.True(ok)                    // the form eventJSON writes
		is.Equal(seq, e.Seq)           // the same seq
		is.Equal(string(name), e.Name) // and name
	}
	for _, b := range []string{
		`{"event":"OPENPIX:CHARGE_CREATED","seq":1}`,      // another key order (a store's own JSON form)
		`{"seq":1,"event":"OPENPIX:CHARGE\u005fCREATED"}`, // an escape in the name
		`{"seq": 1,"event":"OPENPIX:CHARGE_CREATED"}`,     // a space
		`{"seq":,"event":"OPENPIX:CHARGE_CREATED"}`,       // no number
		`{"seq":1,"event":"OPENPIX:CHARGE_CREATED`,        // cut short
		``,
	} {
		_, _, ok := eventHead([]byte(b))
		is.True(!ok) // not read: the caller decodes it whole
	}
}

// heldSender holds each delivery (not the test call) until released or its context ends,
// and counts how many it holds at once.
type heldSender struct {
	entered chan string // webhook-id of each delivery as it arrives
	release chan struct{}

	mu        sync.Mutex
	cur, peak int
}

func (h *heldSender) SendWebhook(ctx context.Context, req WebhookRequest) (WebhookResponse, error) {
	if strings.HasPrefix(req.Header.Get("webhook-id"), "test_") {
		return WebhookResponse{Status: 200}, nil // CreateWebhook's test call
	}
	h.mu.Lock()
	h.cur++
	h.peak = max(h.peak, h.cur)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.cur--
		h.mu.Unlock()
	}()
	h.entered <- req.Header.Get("webhook-id")
	select {
	case <-h.release:
		return WebhookResponse{Status: 200}, nil
	case <-ctx.Done():
		return WebhookResponse{}, ctx.Err()
	}
}

// TestDeliverWebhook_ClaimAhead: with one process on the store, a run holds up to twice the
// window claimed, sends no more than the window at once, and a process that stops with
// events claimed ahead and never sent leaves them owed: the next process sends each of
// them, and those in flight, once, and nothing is left owed.
func TestDeliverWebhook_ClaimAhead(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	held := &heldSender{entered: make(chan string, 16), release: make(chan struct{})}
	a, err := New(st, Options{Clock: clock, WebhookSender: held, WebhookInFlight: 2})
	is.NoErr(err)
	is.Equal(a.core.webhooks.claimAhead(), 2) // no leases: claims ahead
	w, err := a.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	for i := range 6 {
		_, err := a.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100})
		is.NoErr(err)
	}
	next := func() string {
		t.Helper()
		select {
		case id := <-held.entered:
			return id
		case <-time.After(10 * time.Second): // a guard against a hang, not a wait for time
			t.Fatal("no delivery started")
			return ""
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.RunWebhooks(runCtx) }()
	first := next()
	held.release <- struct{}{} // delivered: the window grows to two
	second, third := next(), next()
	var rec webhookRecord
	is.NoErr(a.view(ctx, func(t *txn) error { return t.get(collWebhooks, w.ID, "webhook", &rec) }))
	is.Equal(len(rec.Open), 4) // two being sent, two claimed ahead
	stop()                     // the process stops with them unrecorded
	is.NoErr(<-done)
	held.mu.Lock()
	is.Equal(held.peak, 2) // never more than the window at once
	held.mu.Unlock()

	rs := &recordingSender{}
	b, err := New(st, Options{Clock: clock, WebhookSender: rs})
	is.NoErr(err)
	is.NoErr(b.RunWebhooks(ctx))
	evs, err := b.Events(ctx, 0, 100)
	is.NoErr(err)
	var want []string
	for _, e := range evs {
		if e.Name == w.Event {
			want = append(want, webhookMessageID(w.ID, e.Seq))
		}
	}
	is.Equal(len(want), 6)
	is.Equal(first, want[0])
	flying, sent := []string{second, third}, slices.Clone(want[1:3])
	slices.Sort(flying)
	slices.Sort(sent)
	is.Equal(flying, sent) // in flight when it stopped: the next two
	got := rs.got()
	slices.Sort(got)
	rest := slices.Clone(want[1:])
	slices.Sort(rest)
	is.Equal(got, rest) // the five not recorded, each once: in flight, claimed ahead and new
	_, page, err := b.ListWebhookAttempts(ctx, w.ID, ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, 6) // one attempt each
	lag, err := b.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, OutboxLag{}) // nothing owed
}

package payments

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// TestDeliverWebhook_ClaimAhead: with one process on the store, a run holds up to three
// windows claimed, sends no more than the window at once, and a process that stops with
// events claimed ahead and never sent leaves them owed: the next process sends each of
// them, and those in flight, once, and nothing is left owed.
func TestDeliverWebhook_ClaimAhead(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	held := &heldSender{entered: make(chan string, 16), release: make(chan struct{})}
	recorded := make(chan WebhookAttempt, 16)
	a, err := New(st, Options{Clock: clock, WebhookSender: held, WebhookInFlight: 2,
		OnWebhookAttempt: func(at WebhookAttempt) { recorded <- at }})
	is.NoErr(err)
	is.Equal(a.core.webhooks.claimAhead(), 3) // no leases: claims ahead
	w, err := a.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	const charges = 8
	for i := range charges {
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
	select { // the step that records the first, and claims ahead, has committed
	case at := <-recorded:
		is.Equal(webhookMessageID(w.ID, at.Seq), first)
	case <-time.After(10 * time.Second): // a guard against a hang, not a wait for time
		t.Fatal("the first delivery was not recorded")
	}
	var rec webhookRecord
	is.NoErr(a.view(ctx, func(t *txn) error { return t.get(collWebhooks, w.ID, "webhook", &rec) }))
	is.Equal(len(rec.Open), 6) // two being sent, four claimed ahead: three windows
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
	is.Equal(len(want), charges)
	is.Equal(first, want[0])
	flying, sent := []string{second, third}, slices.Clone(want[1:3])
	slices.Sort(flying)
	slices.Sort(sent)
	is.Equal(flying, sent) // in flight when it stopped: the next two
	got := rs.got()
	slices.Sort(got)
	rest := slices.Clone(want[1:])
	slices.Sort(rest)
	is.Equal(got, rest) // the seven not recorded, each once: in flight, claimed ahead and new
	_, page, err := b.ListWebhookAttempts(ctx, w.ID, ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, charges) // one attempt each
	lag, err := b.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, OutboxLag{}) // nothing owed
}

// gatedStore holds every Update while closed, signalling each one that waits on waiting.
type gatedStore struct {
	store.Store
	closed  atomic.Bool
	waiting chan struct{}
	open    chan struct{}
}

func (g *gatedStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if g.closed.Load() {
		g.waiting <- struct{}{}
		<-g.open
	}
	return g.Store.Update(ctx, fn)
}

// TestDeliverWebhook_SendsWhileStepWaits: a step runs beside the sends. While its
// transaction waits (here, held at the store; on a busy machine, behind the signatures),
// a send that ends is followed at once by an event claimed ahead, not after the commit.
// Once the store lets the step through, every event is sent once and recorded, and
// nothing is left owed.
func TestDeliverWebhook_SendsWhileStepWaits(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := &gatedStore{Store: memory.New(), waiting: make(chan struct{}, 16), open: make(chan struct{})}
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	held := &heldSender{entered: make(chan string, 16), release: make(chan struct{})}
	recorded := make(chan WebhookAttempt, 16)
	a, err := New(st, Options{Clock: clock, WebhookSender: held, WebhookInFlight: 2,
		OnWebhookAttempt: func(at WebhookAttempt) { recorded <- at }})
	is.NoErr(err)
	w, err := a.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	const charges = 8
	for i := range charges {
		_, err := a.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100})
		is.NoErr(err)
	}
	guard := func(what string) { // a guard against a hang, not a wait for time
		t.Helper()
		t.Fatal(what)
	}
	next := func() string {
		t.Helper()
		select {
		case id := <-held.entered:
			return id
		case <-time.After(10 * time.Second):
			guard("no delivery started")
			return ""
		}
	}
	done := make(chan error, 1)
	go func() { done <- a.RunWebhooks(ctx) }()
	seen := []string{next()}
	held.release <- struct{}{} // delivered: the window grows to two
	seen = append(seen, next(), next())
	select { // the step that recorded the first, and claimed ahead, has committed
	case <-recorded:
	case <-time.After(10 * time.Second):
		guard("the first delivery was not recorded")
	}

	st.closed.Store(true)      // from now on a step waits at the store
	held.release <- struct{}{} // one of the two ends: the next starts
	seen = append(seen, next())
	held.release <- struct{}{} // the other ends: the next starts, and a step begins to record the two
	seen = append(seen, next())
	select {
	case <-st.waiting: // the step waits
	case <-time.After(10 * time.Second):
		guard("no step began")
	}
	held.release <- struct{}{}  // a send ends while the step waits
	seen = append(seen, next()) // and a queued event goes at once

	st.closed.Store(false)
	close(st.open)      // the step goes through
	close(held.release) // and every send ends
	for len(seen) < charges {
		seen = append(seen, next())
	}
	is.NoErr(<-done)
	evs, err := a.Events(ctx, 0, 100)
	is.NoErr(err)
	var want []string
	for _, e := range evs {
		if e.Name == w.Event {
			want = append(want, webhookMessageID(w.ID, e.Seq))
		}
	}
	slices.Sort(seen)
	is.Equal(seen, want) // each sent once
	_, page, err := a.ListWebhookAttempts(ctx, w.ID, ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, charges) // and recorded once
	lag, err := a.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, OutboxLag{}) // nothing owed
}

// keyedSender holds each delivery (not the test call) until the test answers it by its
// webhook-id: answer[id] <- status.
type keyedSender struct {
	entered chan string
	mu      sync.Mutex
	answer  map[string]chan int
}

func (k *keyedSender) ch(id string) chan int {
	k.mu.Lock()
	defer k.mu.Unlock()
	c, ok := k.answer[id]
	if !ok {
		c = make(chan int, 1)
		k.answer[id] = c
	}
	return c
}

func (k *keyedSender) SendWebhook(ctx context.Context, req WebhookRequest) (WebhookResponse, error) {
	id := req.Header.Get("webhook-id")
	if strings.HasPrefix(id, "test_") {
		return WebhookResponse{Status: 200}, nil // CreateWebhook's test call
	}
	k.entered <- id
	select {
	case status := <-k.ch(id):
		return WebhookResponse{Status: status}, nil
	case <-ctx.Done():
		return WebhookResponse{}, ctx.Err()
	}
}

// TestDeliverWebhook_FailureDuringStep: a step that began before a send failed claims
// events the failure would have held back; they are not sent: they wait, Open, behind the
// failed event, which goes first once its retry is due, and then they go, each once.
func TestDeliverWebhook_FailureDuringStep(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := &gatedStore{Store: memory.New(), waiting: make(chan struct{}, 16), open: make(chan struct{})}
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	ks := &keyedSender{entered: make(chan string, 16), answer: map[string]chan int{}}
	recorded := make(chan WebhookAttempt, 16)
	a, err := New(st, Options{Clock: clock, WebhookSender: ks, WebhookInFlight: 2,
		OnWebhookAttempt: func(at WebhookAttempt) { recorded <- at }})
	is.NoErr(err)
	w, err := a.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	const charges = 8
	for i := range charges {
		_, err := a.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100})
		is.NoErr(err)
	}
	evs, err := a.Events(ctx, 0, 100)
	is.NoErr(err)
	var ids []string // the deliveries' webhook-ids, in outbox order
	var seqs []uint64
	for _, e := range evs {
		if e.Name == w.Event {
			ids = append(ids, webhookMessageID(w.ID, e.Seq))
			seqs = append(seqs, e.Seq)
		}
	}
	is.Equal(len(ids), charges)
	wait := func(ch <-chan string, what string) string {
		t.Helper()
		select {
		case id := <-ch:
			return id
		case <-time.After(10 * time.Second): // a guard against a hang, not a wait for time
			t.Fatal(what)
			return ""
		}
	}
	attempt := func() WebhookAttempt {
		t.Helper()
		select {
		case at := <-recorded:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no attempt recorded")
			return WebhookAttempt{}
		}
	}
	answer := func(i, status int) { ks.ch(ids[i]) <- status }

	done := make(chan error, 1)
	go func() { done <- a.RunWebhooks(ctx) }()
	is.Equal(wait(ks.entered, "no delivery"), ids[0])
	answer(0, 200) // the window grows to two: the next two go
	got := []string{wait(ks.entered, "no delivery"), wait(ks.entered, "no delivery")}
	slices.Sort(got)
	is.Equal(got, ids[1:3])
	is.Equal(attempt().Seq, seqs[0]) // recorded, with the next four claimed ahead

	st.closed.Store(true) // steps wait at the store from now on
	answer(1, 200)
	is.Equal(wait(ks.entered, "no delivery"), ids[3])
	answer(2, 200) // two ended: a step begins, and waits
	is.Equal(wait(ks.entered, "no delivery"), ids[4])
	select {
	case <-st.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("no step began")
	}
	answer(3, 500) // fails while the step waits: the window falls to one

	st.closed.Store(false)
	close(st.open)                            // the step goes through, with what it claimed
	for at := attempt(); at.Seq != seqs[3]; { // the next step records the failure
		at = attempt()
	}
	answer(4, 200) // the last one out ends (only now: ended before the failure, it would start the next)
	is.NoErr(<-done)
	select {
	case id := <-ks.entered:
		t.Fatalf("%s was sent behind a failed event", id)
	default:
	}
	lag, err := a.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag.Webhooks, 1) // the failed event and those behind it are owed

	clock.Advance(webhookRetryBase) // the retry is due
	go func() { done <- a.RunWebhooks(ctx) }()
	is.Equal(wait(ks.entered, "no retry"), ids[3]) // the failed one goes first, alone
	answer(3, 200)
	var rest []string
	for range ids[5:] {
		id := wait(ks.entered, "no delivery")
		rest = append(rest, id)
		ks.ch(id) <- 200
	}
	is.NoErr(<-done)
	slices.Sort(rest)
	is.Equal(rest, ids[5:]) // then the rest, each once
	_, page, err := a.ListWebhookAttempts(ctx, w.ID, ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, charges+1) // one attempt each, two for the failed one
	lag, err = a.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, OutboxLag{}) // nothing owed
}

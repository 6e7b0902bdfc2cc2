package payments

import (
	"context"
	"fmt"
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

// claimAheadRun is a Service on st sending with sender, WebhookInFlight 2, with a webhook
// on CHARGE_CREATED and charges charges created: the set-up of the claim-ahead tests.
type claimAheadRun struct {
	svc      *Service
	clock    *ManualClock
	hook     Webhook
	recorded chan WebhookAttempt // each attempt, once its step has committed
	ids      []string            // the deliveries' webhook-ids, in outbox order
	seqs     []uint64            // their events' numbers
}

func newClaimAheadRun(t *testing.T, st store.Store, sender WebhookSender, charges int) *claimAheadRun {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	r := &claimAheadRun{clock: NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), recorded: make(chan WebhookAttempt, 16)}
	var err error
	r.svc, err = New(st, Options{Clock: r.clock, WebhookSender: sender, WebhookInFlight: 2,
		OnWebhookAttempt: func(at WebhookAttempt) { r.recorded <- at }})
	is.NoErr(err)
	r.hook, err = r.svc.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: r.svc.EventName(EventChargeCreated)})
	is.NoErr(err)
	for i := range charges {
		_, err := r.svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100})
		is.NoErr(err)
	}
	evs, err := r.svc.Events(ctx, 0, 100)
	is.NoErr(err)
	for _, e := range evs {
		if e.Name == r.hook.Event {
			r.ids = append(r.ids, webhookMessageID(r.hook.ID, e.Seq))
			r.seqs = append(r.seqs, e.Seq)
		}
	}
	is.Equal(len(r.ids), charges)
	return r
}

// settled checks that svc recorded attempts attempts of r's webhook and owes nothing.
func (r *claimAheadRun) settled(t *testing.T, svc *Service, attempts int) {
	t.Helper()
	is := is.New(t)
	_, page, err := svc.ListWebhookAttempts(context.Background(), r.hook.ID, ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, attempts)
	lag, err := svc.OutboxLag(context.Background())
	is.NoErr(err)
	is.Equal(lag, OutboxLag{}) // nothing owed
}

// within is the next value of ch, failing t with what after a guard against a hang (not a
// wait for time to pass).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal(what)
		var zero T
		return zero
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
	held := &heldSender{entered: make(chan string, 16), release: make(chan struct{})}
	r := newClaimAheadRun(t, st, held, 8)
	a := r.svc
	is.Equal(a.core.webhooks.claimAhead(), 3) // no leases: claims ahead
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.RunWebhooks(runCtx) }()
	is.Equal(within(t, held.entered, "no delivery started"), r.ids[0])
	held.release <- struct{}{} // delivered: the window grows to two
	flying := []string{within(t, held.entered, "no delivery started"), within(t, held.entered, "no delivery started")}
	is.Equal(sorted(flying), sorted(r.ids[1:3])) // the next two
	// the step that records the first, and claims ahead, has committed
	is.Equal(within(t, r.recorded, "the first delivery was not recorded").Seq, r.seqs[0])
	var rec webhookRecord
	is.NoErr(a.view(ctx, func(t *txn) error { return t.get(collWebhooks, r.hook.ID, "webhook", &rec) }))
	is.Equal(len(rec.Open), 6) // two being sent, four claimed ahead: three windows
	stop()                     // the process stops with them unrecorded
	is.NoErr(<-done)
	held.mu.Lock()
	is.Equal(held.peak, 2) // never more than the window at once
	held.mu.Unlock()

	rs := &recordingSender{}
	b, err := New(st, Options{Clock: r.clock, WebhookSender: rs})
	is.NoErr(err)
	is.NoErr(b.RunWebhooks(ctx))
	is.Equal(sorted(rs.got()), sorted(r.ids[1:])) // the seven not recorded, each once: in flight, claimed ahead and new
	r.settled(t, b, len(r.ids))                   // one attempt each
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

func newGatedStore() *gatedStore {
	return &gatedStore{Store: memory.New(), waiting: make(chan struct{}, 16), open: make(chan struct{})}
}

// TestDeliverWebhook_SendsWhileStepWaits: a step runs beside the sends. While its
// transaction waits (here, held at the store; on a busy machine, behind the signatures),
// a send that ends is followed at once by an event claimed ahead, not after the commit.
// Once the store lets the step through, every event is sent once and recorded, and
// nothing is left owed.
func TestDeliverWebhook_SendsWhileStepWaits(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	st := newGatedStore()
	held := &heldSender{entered: make(chan string, 16), release: make(chan struct{})}
	r := newClaimAheadRun(t, st, held, 8)
	next := func() string { t.Helper(); return within(t, held.entered, "no delivery started") }
	done := make(chan error, 1)
	go func() { done <- r.svc.RunWebhooks(context.Background()) }()
	seen := []string{next()}
	held.release <- struct{}{} // delivered: the window grows to two
	seen = append(seen, next(), next())
	within(t, r.recorded, "the first delivery was not recorded") // its step, which claimed ahead, has committed

	st.closed.Store(true)      // from now on a step waits at the store
	held.release <- struct{}{} // one of the two ends: the next starts
	seen = append(seen, next())
	held.release <- struct{}{} // the other ends: the next starts, and a step begins to record the two
	seen = append(seen, next())
	within(t, st.waiting, "no step began")
	held.release <- struct{}{}  // a send ends while the step waits
	seen = append(seen, next()) // and a queued event goes at once

	st.closed.Store(false)
	close(st.open)      // the step goes through
	close(held.release) // and every send ends
	for len(seen) < len(r.ids) {
		seen = append(seen, next())
	}
	is.NoErr(<-done)
	is.Equal(sorted(seen), sorted(r.ids)) // each sent once
	r.settled(t, r.svc, len(r.ids))
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
	st := newGatedStore()
	ks := &keyedSender{entered: make(chan string, 16), answer: map[string]chan int{}}
	r := newClaimAheadRun(t, st, ks, 8)
	ids := r.ids
	next := func() string { t.Helper(); return within(t, ks.entered, "no delivery") }
	answer := func(i, status int) { ks.ch(ids[i]) <- status }

	done := make(chan error, 1)
	go func() { done <- r.svc.RunWebhooks(ctx) }()
	is.Equal(next(), ids[0])
	answer(0, 200) // the window grows to two: the next two go
	is.Equal(sorted([]string{next(), next()}), sorted(ids[1:3]))
	is.Equal(within(t, r.recorded, "no attempt recorded").Seq, r.seqs[0]) // recorded, with the next four claimed ahead

	st.closed.Store(true) // steps wait at the store from now on
	answer(1, 200)
	is.Equal(next(), ids[3])
	answer(2, 200) // two ended: a step begins, and waits
	is.Equal(next(), ids[4])
	within(t, st.waiting, "no step began")
	answer(3, 500) // fails while the step waits: the window falls to one

	st.closed.Store(false)
	close(st.open) // the step goes through, with what it claimed
	for at := within(t, r.recorded, "no attempt recorded"); at.Seq != r.seqs[3]; {
		at = within(t, r.recorded, "no attempt recorded") // until the next step records the failure
	}
	answer(4, 200) // the last one out ends (only now: ended before the failure, it would start the next)
	is.NoErr(<-done)
	select {
	case id := <-ks.entered:
		t.Fatalf("%s was sent behind a failed event", id)
	default:
	}
	lag, err := r.svc.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag.Webhooks, 1) // the failed event and those behind it are owed

	r.clock.Advance(webhookRetryBase) // the retry is due
	go func() { done <- r.svc.RunWebhooks(ctx) }()
	is.Equal(next(), ids[3]) // the failed one goes first, alone
	answer(3, 200)
	var rest []string
	for range ids[5:] {
		id := next()
		rest = append(rest, id)
		ks.ch(id) <- 200
	}
	is.NoErr(<-done)
	is.Equal(sorted(rest), sorted(ids[5:])) // then the rest, each once
	r.settled(t, r.svc, len(ids)+1)         // one attempt each, two for the failed one
}

package payments

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store/memory"
)

// flakySender answers 503 to about one delivery in failEvery (chosen by its seeded source)
// while failing is set, else 200, and keeps the webhook-ids it answered 200.
type flakySender struct {
	mu        sync.Mutex
	rng       *rand.Rand
	failEvery int
	failing   bool
	seen      map[string]int
}

func (f *flakySender) SendWebhook(_ context.Context, req WebhookRequest) (WebhookResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Contains(string(req.Body), "teste_webhook") {
		return WebhookResponse{Status: 200}, nil // the test call on create
	}
	if f.failing && f.rng.IntN(f.failEvery) == 0 {
		return WebhookResponse{Status: 503}, nil
	}
	f.seen[req.Header.Get("webhook-id")]++
	return WebhookResponse{Status: 200}, nil
}

// TestDeliverWebhook_NoEventLost: a webhook's window (events claimed ahead, several in
// flight, a failure making the events after it wait) loses no event, whatever the order in
// which sends fail and runs stop. Runs of deliverWebhook are cut off at random points (a
// process stopping: the sends in flight unrecorded), the receiver fails now and then, and
// new events keep coming; at the end, with the receiver well and the clock moved past
// every retry, every event has reached it. The crash harness
// (examples/server TestCrash_Harness) found events lost this way: a failure while events
// claimed ahead waited gave them back by moving the scan back, and the cursor, taken
// from the first Open event, then passed over them.
func TestDeliverWebhook_NoEventLost(t *testing.T) {
	t.Parallel()
	for seed := range uint64(24) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(seed, 1))
			clock := NewManualClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
			snd := &flakySender{rng: rand.New(rand.NewPCG(seed, 2)), failEvery: 4, failing: true, seen: map[string]int{}}
			s, err := New(memory.New(), Options{Clock: clock, WebhookSender: snd, WebhookInFlight: 4, WebhookAttempts: 1000})
			is.NoErr(err)
			w, err := s.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: s.EventName(EventChargeCreated)})
			is.NoErr(err)
			n := 0
			for range 30 {
				is.NoErr(s.update(ctx, func(t *txn) error { // the webhook's events, and others between them
					for range 1 + rng.IntN(8) {
						name := EventChargeCreated
						if rng.IntN(3) == 0 {
							name = EventChargeExpired
						}
						n++
						if err := t.emit(name, map[string]any{"charge": map[string]any{"correlationID": "c" + strconv.Itoa(n)}}); err != nil {
							return err
						}
					}
					return nil
				}))
				is.NoErr(s.fanOut(ctx))
				runCtx, cancel := context.WithCancel(ctx)
				if rng.IntN(2) == 0 {
					cut := time.Duration(rng.IntN(300)) * time.Microsecond
					time.AfterFunc(cut, cancel) // a process stopping mid-run (not a wait for time to pass)
				}
				err := s.deliverWebhook(runCtx, w.ID)
				if runCtx.Err() == nil {
					is.NoErr(err) // a run cut off may fail its last step: a stop, not a failure
				}
				cancel()
				clock.Advance(time.Duration(rng.IntN(30)) * time.Second)
			}
			snd.mu.Lock()
			snd.failing = false
			snd.mu.Unlock()
			for range 5 {
				clock.Advance(time.Hour)
				is.NoErr(s.RunWebhooks(ctx))
			}
			evs, err := s.Events(ctx, 0, MaxLimit)
			is.NoErr(err)
			snd.mu.Lock()
			defer snd.mu.Unlock()
			missing := 0
			for _, e := range evs {
				if e.Name == w.Event && snd.seen[webhookMessageID(w.ID, e.Seq)] == 0 {
					t.Errorf("event %d never delivered", e.Seq)
					missing++
				}
			}
			lag, err := s.OutboxLag(ctx)
			is.NoErr(err)
			is.Equal(lag, OutboxLag{}) // nothing owed
			is.Equal(missing, 0)
		})
	}
}

// TestWebhookStep_RepairsMovedBackScan: a webhook record the earlier version left with its
// scan moved back below its cursor (events claimed ahead given back after a failure,
// Cursor moved past them to the failed event) has those events sent, once the failed
// event is handled, and the failed event is not claimed twice.
func TestWebhookStep_RepairsMovedBackScan(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := NewManualClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	rec := &recordingSender{}
	s, err := New(memory.New(), Options{Clock: clock, WebhookSender: rec})
	is.NoErr(err)
	w, err := s.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: s.EventName(EventChargeCreated)})
	is.NoErr(err)
	var seqs []uint64
	for _, c := range []string{"c1", "c2", "c3", "c4"} {
		_, err := s.CreateCharge(ctx, CreateChargeParams{CorrelationID: c, Value: 100})
		is.NoErr(err)
		evs, err := s.Events(ctx, 0, MaxLimit)
		is.NoErr(err)
		seqs = append(seqs, evs[len(evs)-1].Seq)
	}
	is.NoErr(s.update(ctx, func(t *txn) error { // c1 delivered, c2 and c3 given back, c4 failed
		var r webhookRecord
		if err := t.get(collWebhooks, w.ID, "webhook", &r); err != nil {
			return err
		}
		r.Scanned, r.Cursor = seqs[0], seqs[3]-1
		r.Open = []openEvent{{Seq: seqs[3], Failures: 1, NextAt: t.now.Add(webhookRetryBase)}}
		return t.queueWebhook(&r, t.now.Add(webhookRetryBase))
	}))
	is.NoErr(s.RunWebhooks(ctx))
	is.Equal(rec.got(), []string(nil)) // the retry is not due, and the events before it wait
	clock.Advance(webhookRetryBase)
	is.NoErr(s.RunWebhooks(ctx))
	got := rec.got()
	slices.Sort(got)
	want := []string{webhookMessageID(w.ID, seqs[1]), webhookMessageID(w.ID, seqs[2]), webhookMessageID(w.ID, seqs[3])}
	slices.Sort(want)
	is.Equal(got, want) // each once
	lag, err := s.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, OutboxLag{})
}

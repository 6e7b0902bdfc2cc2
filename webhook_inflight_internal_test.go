package payments

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store/memory"
)

// recordingSender answers 200 and keeps the webhook-id of each delivery (not the test call).
type recordingSender struct {
	mu  sync.Mutex
	ids []string
}

func (r *recordingSender) SendWebhook(_ context.Context, req WebhookRequest) (WebhookResponse, error) {
	if !strings.Contains(string(req.Body), "teste_webhook") {
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		r.mu.Unlock()
	}
	return WebhookResponse{Status: 200}, nil
}

func (r *recordingSender) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// TestWebhookStep_GroupedAndCrash: the outcomes of several sends are recorded in one
// transaction; a process that dies with events claimed and not recorded leaves them owed,
// and the next process sends those (and only those) again, the failed one when its retry
// is due, and the events after it once it is handled.
func TestWebhookStep_GroupedAndCrash(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := &updates{Store: memory.New()}
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	a, err := New(st, Options{Clock: clock, WebhookSender: senderOK{}, WebhookInFlight: 4})
	is.NoErr(err)
	w, err := a.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	for _, c := range []string{"c1", "c2", "c3", "c4", "c5"} {
		_, err := a.CreateCharge(ctx, CreateChargeParams{CorrelationID: c, Value: 100})
		is.NoErr(err)
	}
	is.NoErr(a.fanOut(ctx))

	run := &webhookRun{flying: map[uint64]bool{}, window: 4}
	step, err := a.webhookStep(ctx, w.ID, run, nil, 4)
	is.NoErr(err)
	is.Equal(len(step.claimed), 4) // the window: four of the five
	ev := step.claimed
	for _, e := range ev {
		run.flying[e.Seq] = true
	}
	sends := []webhookSend{{ev: ev[0], res: WebhookResponse{Status: 200}}, {ev: ev[1], res: WebhookResponse{Status: 200}},
		{ev: ev[2], res: WebhookResponse{Status: 500}, failure: "HTTP 500"}}
	for _, sd := range sends {
		delete(run.flying, sd.ev.Seq)
	}
	before := st.n.Load()
	step, err = a.webhookStep(ctx, w.ID, run, sends, 0)
	is.NoErr(err)
	is.Equal(st.n.Load()-before, int64(1)) // three outcomes, one transaction
	var outcomes []string
	for _, at := range step.recorded {
		outcomes = append(outcomes, at.Outcome)
	}
	is.Equal(outcomes, []string{"delivered", "delivered", "retry"})

	// the process dies with ev[3] in flight
	rec := &recordingSender{}
	b, err := New(st, Options{Clock: clock, WebhookSender: rec})
	is.NoErr(err)
	is.NoErr(b.RunWebhooks(ctx))
	msg := func(e Event) string { return webhookMessageID(w.ID, e.Seq) }
	is.Equal(rec.got(), []string(nil)) // the retry is not due, and ev[3] (owed again) and c5 wait behind it
	clock.Advance(webhookRetryBase)
	is.NoErr(b.RunWebhooks(ctx))
	evs, err := b.Events(ctx, ev[3].Seq, 100)
	is.NoErr(err)
	var fifth Event
	for _, e := range evs {
		if e.Name == w.Event {
			fifth = e
			break
		}
	}
	got := rec.got()
	is.Equal(len(got), 3)
	is.Equal(got[0], msg(ev[2]))                                                                               // the retry, due,
	is.Equal(map[string]bool{got[1]: true, got[2]: true}, map[string]bool{msg(ev[3]): true, msg(fifth): true}) // then the events behind it, at once
	_, page, err := b.ListWebhookAttempts(ctx, w.ID, ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, 6) // 3 recorded before the crash, then 3
	lag, err := b.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, OutboxLag{}) // nothing owed
}

// TestWebhookStep_RecordBeforeTheWindow: a webhook stored before the window, with failed
// attempts of the event after its cursor (webhookRecord.Failures), goes on counting them:
// the next attempt of that event is numbered after them.
func TestWebhookStep_RecordBeforeTheWindow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	s, err := New(memory.New(), Options{Clock: clock, WebhookSender: senderOK{}, WebhookAttempts: 5})
	is.NoErr(err)
	w, err := s.CreateWebhook(ctx, CreateWebhookParams{Name: "h", URL: "https://ok.example.com/h", Event: s.EventName(EventChargeCreated)})
	is.NoErr(err)
	_, err = s.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c1", Value: 100})
	is.NoErr(err)
	is.NoErr(s.fanOut(ctx))
	is.NoErr(s.update(ctx, func(t *txn) error { // as the version before the window left it after two failures
		var rec webhookRecord
		if err := t.get(collWebhooks, w.ID, "webhook", &rec); err != nil {
			return err
		}
		rec.Failures = 2
		return t.putWebhook(&rec, false)
	}))
	is.NoErr(s.RunWebhooks(ctx))
	as, _, err := s.ListWebhookAttempts(ctx, w.ID, ListParams{})
	is.NoErr(err)
	is.Equal(len(as), 1)
	is.Equal(as[0].Attempt, 3) // after the two recorded before
	is.Equal(as[0].Outcome, "delivered")
}

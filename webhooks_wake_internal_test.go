package payments

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// webhookReads is a store that counts the webhook records its transactions read.
type webhookReads struct {
	store.Store
	n atomic.Int64
}

func (s *webhookReads) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(webhookReadsTx{Tx: tx, n: &s.n}) })
}

func (s *webhookReads) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(webhookReadsTx{Tx: tx, n: &s.n}) })
}

type webhookReadsTx struct {
	store.Tx
	n *atomic.Int64
}

func (t webhookReadsTx) Get(collection, company, id string) (store.Record, error) {
	r, err := t.Tx.Get(collection, company, id)
	if collection == collWebhooks && err == nil {
		t.n.Add(1)
	}
	return r, err
}

func (t webhookReadsTx) List(collection, company string, q store.Query) (store.Page, error) {
	p, err := t.Tx.List(collection, company, q)
	if collection == collWebhooks {
		t.n.Add(int64(len(p.Records)))
	}
	return p, err
}

// TestWakeWebhooks_ReadsOnlyUnqueued: an event reads the webhooks it queues and none of
// those queued already, however many there are.
func TestWakeWebhooks_ReadsOnlyUnqueued(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	st := &webhookReads{Store: memory.New()}
	s, err := New(st, Options{Clock: NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), Mailer: &MemoryMailer{}})
	is.NoErr(err)
	const hooks = 5
	for i := range hooks {
		_, err := s.CreateWebhook(ctx, CreateWebhookParams{Email: "ops@loja.example.com", Name: string(rune('a' + i)), Event: s.EventName(EventChargeCreated)})
		is.NoErr(err)
	}
	charge := func(corr string) int64 {
		before := st.n.Load()
		_, err := s.CreateCharge(ctx, CreateChargeParams{CorrelationID: corr, Value: 100})
		is.NoErr(err)
		return st.n.Load() - before
	}
	is.Equal(charge("c1"), int64(hooks)) // each webhook read once, to queue it
	is.Equal(charge("c2"), int64(0))     // all queued: none read
	is.NoErr(s.RunWebhooks(ctx))         // delivered, off the queue
	is.Equal(charge("c3"), int64(hooks)) // each read again, to queue it again
}

// TestWakeWebhooks_QueuedBeforeTheSplit: a queued webhook stored when the wake index
// listed every active webhook (queued ones too) is counted once toward the limit, moves
// to the queued index on the next event, and misses nothing.
func TestWakeWebhooks_QueuedBeforeTheSplit(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	mailer := &MemoryMailer{}
	s, err := New(memory.New(), Options{Clock: NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), Mailer: mailer, MaxWebhooksPerEvent: 2})
	is.NoErr(err)
	event := s.EventName(EventChargeCreated)
	a, err := s.CreateWebhook(ctx, CreateWebhookParams{Email: "a@loja.example.com", Event: event})
	is.NoErr(err)
	_, err = s.CreateWebhook(ctx, CreateWebhookParams{Email: "b@loja.example.com", Event: event})
	is.NoErr(err)
	_, err = s.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c1", Value: 100})
	is.NoErr(err)                               // queues both
	is.NoErr(s.update(ctx, func(t *txn) error { // a as stored before the queued index
		var rec webhookRecord
		if err := t.get(collWebhooks, a.ID, "webhook", &rec); err != nil {
			return err
		}
		oid := webhookObjectID(rec.ID)
		return t.put(collWebhooks, rec.ID, "webhook", rec, nil, []store.Index{byCreationThen(rec.CreatedAt, oid),
			{Name: indexWebhookURL, Sort: rec.URL + "\x00" + sortTime(rec.CreatedAt) + oid}, {Name: webhookWakeIndex(rec.Event), Sort: sortTime(rec.CreatedAt)}})
	}))
	totals := func() (wake, queued int) {
		is.NoErr(s.view(ctx, func(t *txn) error {
			w, err := t.tx.List(collWebhooks, t.company, store.Query{Index: webhookWakeIndex(event)})
			if err != nil {
				return err
			}
			q, err := t.tx.List(collWebhooks, t.company, store.Query{Index: webhookQueuedIndex(event)})
			wake, queued = w.Total, q.Total
			return err
		}))
		return wake, queued
	}
	wake, queued := totals()
	is.Equal([]int{wake, queued}, []int{1, 1}) // a in the wake index although queued
	_, err = s.CreateWebhook(ctx, CreateWebhookParams{Email: "c@loja.example.com", Event: event})
	is.Equal(ErrorCode(err), EPRECONDITION) // a counted once: the two fill the limit

	_, err = s.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c2", Value: 100})
	is.NoErr(err)
	wake, queued = totals()
	is.Equal([]int{wake, queued}, []int{0, 2}) // a moved to the queued index
	is.NoErr(s.RunWebhooks(ctx))
	to := map[string]int{}
	for _, m := range mailer.Messages() {
		to[m.To]++
	}
	is.Equal(to, map[string]int{"a@loja.example.com": 2, "b@loja.example.com": 2}) // both events to both
}

package payments

import (
	"context"
	"fmt"
	"slices"
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

// TestWakeWebhooks_ReadsOnlyUnqueued: an event's transaction reads one webhook at most,
// however many are on the event; the fan-out after it reads each unqueued webhook once, in
// transactions of fanoutChunk, and none of those queued already.
func TestWakeWebhooks_ReadsOnlyUnqueued(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := &webhookReads{Store: memory.New()}
	s, err := New(st, Options{Clock: NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), Mailer: &MemoryMailer{}})
	is.NoErr(err)
	const hooks = 2*fanoutChunk + 3
	for i := range hooks {
		_, err := s.CreateWebhook(ctx, CreateWebhookParams{Email: "ops@loja.example.com", Name: fmt.Sprint("h", i), Event: s.EventName(EventChargeCreated)})
		is.NoErr(err)
	}
	reads := func(fn func()) int64 {
		before := st.n.Load()
		fn()
		return st.n.Load() - before
	}
	charge := func(corr string) func() {
		return func() {
			_, err := s.CreateCharge(ctx, CreateChargeParams{CorrelationID: corr, Value: 100})
			is.NoErr(err)
		}
	}
	fanOut := func() { is.NoErr(s.fanOut(ctx)) }
	is.Equal(reads(charge("c1")), int64(1)) // the event's transaction: one webhook, to see there is work
	is.Equal(reads(fanOut), int64(hooks))   // the fan-out: each webhook once, to queue it
	is.Equal(reads(charge("c2")), int64(0)) // all queued: none read
	is.Equal(reads(fanOut), int64(0))       // and nothing to fan out
	is.NoErr(s.RunWebhooks(ctx))            // delivered, off the queue
	is.Equal(reads(charge("c3")), int64(1)) // work again
	is.Equal(reads(charge("c4")), int64(1)) // noted once: the second event writes nothing more
	is.Equal(reads(fanOut), int64(hooks))   // each read again, to queue it again
	is.NoErr(s.RunWebhooks(ctx))
}

// TestFanOut_ChunksAndTurns: the fan-out queues a company's webhooks fanoutChunk per
// transaction, the companies taking turns, and leaves no entry behind.
func TestFanOut_ChunksAndTurns(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := &updates{Store: memory.New()}
	a, err := New(st, Options{Clock: NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), Mailer: &MemoryMailer{}})
	is.NoErr(err)
	co, err := a.CreateCompany(ctx, CreateCompanyParams{Name: "B"})
	is.NoErr(err)
	b, err := a.Company(ctx, co.ID)
	is.NoErr(err)
	for i := range 3 * fanoutChunk {
		_, err := b.CreateWebhook(ctx, CreateWebhookParams{Email: "ops@b.example.com", Name: fmt.Sprint("b", i), Event: b.EventName(EventChargeCreated)})
		is.NoErr(err)
	}
	_, err = a.CreateWebhook(ctx, CreateWebhookParams{Email: "ops@a.example.com", Name: "a", Event: a.EventName(EventChargeCreated)})
	is.NoErr(err)
	_, err = b.CreateCharge(ctx, CreateChargeParams{CorrelationID: "b1", Value: 100})
	is.NoErr(err)
	_, err = a.CreateCharge(ctx, CreateChargeParams{CorrelationID: "a1", Value: 100})
	is.NoErr(err)

	st.n.Store(0)
	is.NoErr(a.fanOut(ctx))
	is.Equal(st.n.Load(), int64(3+1+1)) // B's 48 in 3 chunks, one more to find none left; A's one
	queued := func(svc *Service) int {
		n := 0
		is.NoErr(svc.view(ctx, func(t *txn) error {
			p, err := t.tx.List(collWebhooks, t.company, store.Query{Index: webhookQueuedIndex(svc.EventName(EventChargeCreated))})
			n = p.Total
			return err
		}))
		return n
	}
	is.Equal(queued(b), 3*fanoutChunk) // every webhook of B's queued
	is.Equal(queued(a), 1)             // and A's
	is.NoErr(a.view(ctx, func(t *txn) error {
		p, err := t.tx.List(collWebhookFanout, systemSpace, store.Query{Index: indexAll})
		is.Equal(p.Total, 0) // no entry left
		return err
	}))
	is.True(slices.Index(st.order, a.company) <= 1) // A's chunk went first or second, not after B's three
}

// updates is a store that counts its write transactions and the companies of the
// fan-out's, in order.
type updates struct {
	store.Store
	n     atomic.Int64
	order []string
}

func (s *updates) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.n.Add(1)
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(fanoutTx{Tx: tx, s: s}) })
}

type fanoutTx struct {
	store.Tx
	s *updates
}

func (t fanoutTx) List(collection, company string, q store.Query) (store.Page, error) {
	if collection == collWebhooks && q.Limit == fanoutChunk {
		t.s.order = append(t.s.order, company)
	}
	return t.Tx.List(collection, company, q)
}

// TestWakeWebhooks_QueuedBeforeTheSplit: a queued webhook stored when the wake index
// listed every active webhook (queued ones too) is counted once toward the limit, moves
// to the queued index on the next event, and misses nothing.
func TestWakeWebhooks_QueuedBeforeTheSplit(t *testing.T) {
	t.Parallel()
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
	is.NoErr(err)
	is.NoErr(s.fanOut(ctx))                     // queues both
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
	is.NoErr(s.fanOut(ctx))
	wake, queued = totals()
	is.Equal([]int{wake, queued}, []int{0, 2}) // a moved to the queued index
	is.NoErr(s.RunWebhooks(ctx))
	to := map[string]int{}
	for _, m := range mailer.Messages() {
		to[m.To]++
	}
	is.Equal(to, map[string]int{"a@loja.example.com": 2, "b@loja.example.com": 2}) // both events to both
}

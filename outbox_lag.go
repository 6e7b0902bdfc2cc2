package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

// OutboxLag is how far webhook delivery is behind the outbox, over every company: what an
// operator graphs and alerts on. See Service.OutboxLag.
type OutboxLag struct {
	// Webhooks is the number of active webhooks with work owed: those on the delivery
	// queue, due now or waiting for a retry.
	Webhooks int
	// Events is the number of outbox events committed after those webhooks' cursors (the
	// last event each has handled), summed over them. It counts the events of every name,
	// so it bounds from above the deliveries owed: a webhook gets only its event's name,
	// and steps over the others when its turn comes.
	Events uint64
	// Oldest is the age, on the Service clock, of the oldest of those events: how long the
	// longest-waiting delivery has waited at most. Zero when nothing is owed.
	Oldest time.Duration
}

// outboxLagScan bounds the queue entries OutboxLag reads, so that a scrape stays cheap
// however many webhooks have work; past it the figures cover the first entries by due time.
const outboxLagScan = 10_000

// OutboxLag measures webhook delivery's lag behind the outbox, in one read transaction,
// at a cost of three reads per webhook with work owed (at most outboxLagScan of them). It
// reads every company's webhooks, like RunWebhooks: it is for the operator (metrics), not
// for a company's caller. The webhooks owed are those on the delivery queue and those an
// event has still to queue (webhook_fanout.go).
func (s *Service) OutboxLag(ctx context.Context) (OutboxLag, error) {
	var lag OutboxLag
	err := s.view(ctx, func(t *txn) error {
		lag = OutboxLag{}
		owed, err := owedWebhooks(t)
		if err != nil {
			return err
		}
		last := map[string]uint64{} // company -> its last event's seq
		for _, o := range owed {
			w := o.rec
			if !w.IsActive {
				continue
			}
			seq, ok := last[o.company]
			if !ok {
				co := &txn{svc: t.svc, tx: t.tx, company: o.company, now: t.now}
				if seq, err = co.lastSeq(); err != nil {
					return err
				}
				last[o.company] = seq
			}
			if seq <= w.Cursor {
				continue // queued, but nothing after its cursor yet
			}
			lag.Webhooks++
			lag.Events += seq - w.Cursor
			ev, err := t.tx.List(collEvents, o.company, store.Query{Index: indexAll, From: seqID(w.Cursor + 1), Limit: 1})
			if err != nil {
				return internal(err)
			}
			if len(ev.Records) == 1 {
				var e Event
				if err := decode(ev.Records[0], &e); err != nil {
					return err
				}
				lag.Oldest = max(lag.Oldest, t.now.Sub(e.Time))
			}
		}
		return nil
	})
	return lag, err
}

// owedWebhook is a webhook with work owed, and its company.
type owedWebhook struct {
	company string
	rec     webhookRecord
}

// owedWebhooks reads the webhooks on the delivery queue and those of the pending fan-out
// entries, outboxLagScan of each at most.
func owedWebhooks(t *txn) ([]owedWebhook, error) {
	p, err := t.tx.List(collWebhookQueue, systemSpace, store.Query{Index: indexDue, Limit: outboxLagScan})
	if err != nil {
		return nil, internal(err)
	}
	var owed []owedWebhook
	for _, r := range p.Records {
		var q webhookQueued
		if err := decode(r, &q); err != nil {
			return nil, err
		}
		rec, err := t.tx.Get(collWebhooks, q.Company, q.ID)
		if ok, err := found(storeErr(err, "webhook")); err != nil {
			return nil, err
		} else if !ok {
			continue // deleted: the next pass drops the entry
		}
		o := owedWebhook{company: q.Company}
		if err := decode(rec, &o.rec); err != nil {
			return nil, err
		}
		owed = append(owed, o)
	}
	f, err := t.tx.List(collWebhookFanout, systemSpace, store.Query{Index: indexAll, Limit: outboxLagScan})
	if err != nil {
		return nil, internal(err)
	}
	for _, r := range f.Records {
		var e fanoutEntry
		if err := decode(r, &e); err != nil {
			return nil, err
		}
		w, err := t.tx.List(collWebhooks, e.Company, store.Query{Index: webhookWakeIndex(e.Event), Limit: outboxLagScan, NoTotal: true})
		if err != nil {
			return nil, internal(err)
		}
		for _, r := range w.Records {
			o := owedWebhook{company: e.Company}
			if err := decode(r, &o.rec); err != nil {
				return nil, err
			}
			if !o.rec.Queued { // a queued one is counted from the queue
				owed = append(owed, o)
			}
		}
	}
	return owed, nil
}

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
// for a company's caller.
func (s *Service) OutboxLag(ctx context.Context) (OutboxLag, error) {
	var lag OutboxLag
	err := s.view(ctx, func(t *txn) error {
		lag = OutboxLag{}
		p, err := t.tx.List(collWebhookQueue, systemSpace, store.Query{Index: indexDue, Limit: outboxLagScan})
		if err != nil {
			return internal(err)
		}
		last := map[string]uint64{} // company -> its last event's seq
		for _, r := range p.Records {
			var q webhookQueued
			if err := decode(r, &q); err != nil {
				return err
			}
			rec, err := t.tx.Get(collWebhooks, q.Company, q.ID)
			if ok, err := found(storeErr(err, "webhook")); err != nil {
				return err
			} else if !ok {
				continue // deleted: the next pass drops the entry
			}
			var w webhookRecord
			if err := decode(rec, &w); err != nil {
				return err
			}
			if !w.IsActive {
				continue
			}
			seq, ok := last[q.Company]
			if !ok {
				co := &txn{svc: t.svc, tx: t.tx, company: q.Company, now: t.now}
				if seq, err = co.lastSeq(); err != nil {
					return err
				}
				last[q.Company] = seq
			}
			if seq <= w.Cursor {
				continue // queued, but nothing after its cursor yet
			}
			lag.Webhooks++
			lag.Events += seq - w.Cursor
			ev, err := t.tx.List(collEvents, q.Company, store.Query{Index: indexAll, From: seqID(w.Cursor + 1), Limit: 1})
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

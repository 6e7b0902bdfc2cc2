package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Fan-out: which webhooks an event goes to is worked out after the event's transaction
// has committed, not inside it.
//
// The emitting transaction (emitJSON) writes the event and, when the company has an
// active webhook on that event with no queue entry yet, one fan-out entry for the company
// and event name, in the system space: one index read and at most one small write,
// whatever the number of webhooks. The delivery side (fanOut, at the start of every
// RunWebhooks pass and every ServeWebhooks look) then queues those webhooks in
// transactions of at most fanoutChunk webhooks each, taking the entries of all companies
// in turn, a chunk each, so that a company with many webhooks neither holds the writer
// for long nor goes before the others. The entry is removed with the last chunk.
//
// Nothing is lost: the entry commits with the event, so a crash before the fan-out leaves
// it for the next pass. While an entry waits, later events of the same name find it and
// write nothing: a webhook's delivery reads every event after its cursor, so queueing the
// webhook once covers them all.
const (
	collWebhookFanout = "webhook_fanout" // in systemSpace: events whose webhooks are still to be queued
	// fanoutChunk is how many webhooks one fan-out transaction queues at most.
	fanoutChunk = 16
)

// fanoutEntry says that company has webhooks on event to queue, from At (the time of the
// first event that found them unqueued; their queue entries are due then).
type fanoutEntry struct {
	Company string    `json:"company"`
	Event   string    `json:"event"`
	At      time.Time `json:"at"`
}

func fanoutID(company, event string) string { return company + "|" + event }

// wakeWebhooks notes, in t, that the webhooks of the company subscribed to event with no
// queue entry yet are to be queued: see the fan-out above.
func (t *txn) wakeWebhooks(event string) error {
	p, err := t.tx.List(collWebhooks, t.company, store.Query{Index: webhookWakeIndex(event), Limit: 1, NoTotal: true})
	if err != nil {
		return internal(err)
	}
	if len(p.Records) == 0 {
		return nil // no webhook on the event, or all of them queued already
	}
	id := fanoutID(t.company, event)
	if ok, err := t.queued(collWebhookFanout, id); err != nil || ok {
		return err // ok: noted already, by this transaction or an earlier one
	}
	err = t.enqueue(collWebhookFanout, id, fanoutEntry{Company: t.company, Event: event, At: t.now}, []store.Index{{Name: indexAll, Sort: id}}, true)
	if err != nil {
		return err
	}
	t.after(func(context.Context) { t.svc.core.webhooks.wake() })
	return nil
}

// fanOut queues the webhooks of every fan-out entry, a chunk per entry in turn, until no
// entry is left; a chunk that fails is logged and left for the next pass, and the first
// error returned.
func (s *Service) fanOut(ctx context.Context) error {
	var first error
	failed := map[string]bool{}
	for {
		var page []fanoutEntry
		err := s.view(ctx, func(t *txn) error {
			var err error
			page, _, err = keysetPageOf[fanoutEntry](t, collWebhookFanout, systemSpace,
				store.Query{Index: indexAll, Limit: webhookQueuePage, NoTotal: true})
			return err
		})
		if err != nil {
			return err
		}
		progress := false
		for _, e := range page {
			id := fanoutID(e.Company, e.Event)
			if failed[id] {
				continue
			}
			co := &Service{core: s.core, company: e.Company}
			if err := co.update(ctx, func(t *txn) error { return t.fanOutChunk(e) }); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				s.core.log.Error("webhook fan-out", "company", e.Company, "event", e.Event, "err", err)
				failed[id] = true
				if first == nil {
					first = err
				}
				continue
			}
			progress = true
		}
		if !progress {
			return first // nothing left but entries that failed in this pass
		}
	}
}

// fanOutChunk queues up to fanoutChunk of the webhooks on e.Event with no queue entry, and
// removes the entry when none is left.
func (t *txn) fanOutChunk(e fanoutEntry) error {
	id := fanoutID(e.Company, e.Event)
	if ok, err := t.queued(collWebhookFanout, id); err != nil || !ok {
		return err // !ok: another pass (another process) did it
	}
	p, err := t.tx.List(collWebhooks, t.company, store.Query{Index: webhookWakeIndex(e.Event), Limit: fanoutChunk, NoTotal: true})
	if err != nil {
		return internal(err)
	}
	woke := false
	for _, r := range p.Records {
		var rec webhookRecord
		if err := decode(r, &rec); err != nil {
			return err
		}
		if rec.Queued {
			// written without the queued index: stored again, it moves there
			if err := t.putWebhook(&rec, false); err != nil {
				return err
			}
			continue
		}
		if err := t.queueWebhook(&rec, e.At); err != nil {
			return err
		}
		woke = true
	}
	if woke {
		t.after(func(context.Context) { t.svc.core.webhooks.wake() })
	}
	if len(p.Records) == fanoutChunk {
		return nil // perhaps more: the next chunk
	}
	return t.dequeue(collWebhookFanout, id)
}

package payments

import (
	"errors"

	"github.com/pixfoundry/payments/store"
)

// Work queues. Four collections of the system space hold the work the Service owes in
// every company, one entry per thing, ordered by an index:
//
//   - the due queue (due.go): what the clock makes due (expiries, subscription periods);
//   - the order queue (orders.go): outgoing Pix waiting for a send or an answer;
//   - the webhook queue (webhooks.go): webhooks with events to deliver;
//   - the fan-out (webhook_fanout.go): events whose webhooks are still to be queued.
//
// Each is written through enqueue and dequeue, in the transaction of the change that
// makes the work, and read a page at a time by keyset (keyset.go). A claim under a lease
// is enqueue at the lease's end: the entry moves out of every pass's sight until then, so
// one pass (one process) owns the work, and if it dies the entry falls due again by
// itself. The work's own record says whether it is still owed, so a stale entry costs
// its reader one transaction and no harm.

// enqueue puts the entry id of queue coll, made of v and indexes. isNew says the caller
// knows it has no entry yet (one store call instead of two); otherwise an entry is
// replaced, or inserted when there is none.
func (t *txn) enqueue(coll, id string, v any, indexes []store.Index, isNew bool) error {
	r, err := encode(id, v, nil, indexes)
	if err != nil {
		return err
	}
	if !isNew {
		err := t.tx.Put(coll, systemSpace, r)
		if !errors.Is(err, store.ErrNotFound) {
			return storeErr(err, "queue entry")
		}
	}
	return storeErr(t.tx.Insert(coll, systemSpace, r), "queue entry")
}

// dequeue removes the entry id of queue coll, if there is one.
func (t *txn) dequeue(coll, id string) error {
	_, err := found(storeErr(t.tx.Delete(coll, systemSpace, id), "queue entry"))
	return err
}

// queued reports whether queue coll has the entry id.
func (t *txn) queued(coll, id string) (bool, error) {
	_, err := t.tx.Get(coll, systemSpace, id)
	return found(storeErr(err, "queue entry"))
}

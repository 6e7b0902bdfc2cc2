package payments

import (
	"fmt"

	"github.com/pixfoundry/payments/store"
)

// Passes over queues and indexes (the due queue, the order queue, the webhook queue, a
// company's pending orders, the ledger's audit) read them a page at a time by keyset: each
// page starts just after the last sort value of the page before, so a page costs its own
// size however deep into the index it is, and entries added behind the cursor are not
// read again. An index read this way must have unique sort values (the queues end theirs
// with the company and id).

// keysetPage reads one page of q.Index in collection and space, and returns its records
// with the From of the page after it: just after the last record's sort value, or "" when
// the page is empty.
func keysetPage(t *txn, collection, space string, q store.Query) ([]store.Record, string, error) {
	p, err := t.tx.List(collection, space, q)
	if err != nil {
		return nil, "", internal(err)
	}
	if len(p.Records) == 0 {
		return nil, "", nil
	}
	last := p.Records[len(p.Records)-1]
	sort, ok := sortIn(last, q.Index)
	if !ok {
		return nil, "", internal(fmt.Errorf("%s %s is not in index %s", collection, last.ID, q.Index))
	}
	return p.Records, sort + "\x00", nil
}

// keysetPageOf is keysetPage with the records decoded into T.
func keysetPageOf[T any](t *txn, collection, space string, q store.Query) ([]T, string, error) {
	recs, next, err := keysetPage(t, collection, space, q)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, 0, len(recs))
	for _, r := range recs {
		var v T
		if err := decode(r, &v); err != nil {
			return nil, "", err
		}
		out = append(out, v)
	}
	return out, next, nil
}

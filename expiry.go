package payments

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/pixfoundry/payments/store"
)

// A charge past its expiry time shows EXPIRED on every read, but stays ACTIVE in the store
// until the periodic pass (RunDue, through the due queue) or ExpireCharges, below, records
// it. Reads never write, so a
// list filtered by status corrects its page by the charges that are due and not yet
// recorded: they leave an ACTIVE list and join an EXPIRED one, in their place by creation.
// That costs a read of those charges, which the periodic pass keeps few.

// listCharges reads one page of charges of q's index as a read shows them now: with
// status ACTIVE or EXPIRED in f, the charges past their expiry and not yet recorded move
// from the first to the second. It returns the page and the total.
func (t *txn) listCharges(q store.Query, f ChargeFilter) ([]Charge, int, error) {
	present := func(c *Charge, id string) { c.ID = id; t.present(c) }
	if f.Status != ChargeActive && f.Status != ChargeExpired {
		return list(t, collCharges, q, present)
	}
	due, err := t.dueInList(q, f)
	if err != nil {
		return nil, 0, err
	}
	if len(due) == 0 {
		return list(t, collCharges, q, present)
	}
	for i := range due {
		t.present(&due[i])
	}
	before := func(a, b Charge) bool { return listOrder(q, a, b) < 0 }
	s, l, k := q.Skip, q.Limit, len(due)

	if f.Status == ChargeActive {
		// The due charges are in the index: fetch k more to make up for them, and drop from
		// the front what the due charges before the page pushed into it.
		bq := q
		bq.Limit = l + k
		got, total, err := list(t, collCharges, bq, present)
		if err != nil {
			return nil, 0, err
		}
		drop := 0
		isDue := make(map[string]bool, k)
		for _, d := range due {
			isDue[d.ID] = true
			if len(got) > 0 && before(d, got[0]) {
				drop++
			}
		}
		out := make([]Charge, 0, l)
		for _, c := range got {
			switch {
			case isDue[c.ID]:
			case drop > 0:
				drop--
			case len(out) < l:
				out = append(out, c)
			}
		}
		return out, total - k, nil
	}

	// EXPIRED: the due charges are merged into the index. The index entries that can land
	// on the page are those from k before it to its end.
	bq := q
	bq.Skip = max(0, s-k)
	bq.Limit = s + l - bq.Skip
	got, total, err := list(t, collCharges, bq, present)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Charge, 0, l)
	i, j := 0, 0 // next of got, next of due
	for i < len(got) || j < len(due) {
		// pos counts the index entries and due charges before this one: exact, except for a
		// due charge before the fetched entries (when some were skipped) or after them (when
		// the index has more). Such a charge is off the page either way: before it, since
		// pos < bq.Skip+k = s; after it, since the fetched entries reach the page's end.
		pos := bq.Skip + i + j
		var c Charge
		if i < len(got) && (j == len(due) || before(got[i], due[j])) {
			c, i = got[i], i+1
		} else {
			c, j = due[j], j+1
		}
		if pos >= s && pos < s+l {
			out = append(out, c)
		}
	}
	return out, total + k, nil
}

// dueInList returns the charges still recorded ACTIVE whose expiry time has passed and
// that the list of q and f holds, in the list's order.
func (t *txn) dueInList(q store.Query, f ChargeFilter) ([]Charge, error) {
	_, n, err := t.dueCharges(0)
	if err != nil || n == 0 {
		return nil, err
	}
	all, _, err := t.dueCharges(n)
	if err != nil {
		return nil, err
	}
	due := slices.DeleteFunc(all, func(c Charge) bool {
		created := sortTime(c.CreatedAt)
		return f.Customer != "" && (c.Customer == nil || c.Customer.CorrelationID != f.Customer) ||
			f.Subscription != "" && c.Subscription != f.Subscription ||
			q.From != "" && created < q.From || q.To != "" && created >= q.To
	})
	slices.SortFunc(due, func(a, b Charge) int { return listOrder(q, a, b) })
	return due, nil
}

// listOrder compares two charges as their index lists them: by creation, then id, and
// reversed for a descending query.
func listOrder(q store.Query, a, b Charge) int {
	c := cmp.Or(cmp.Compare(sortTime(a.CreatedAt), sortTime(b.CreatedAt)), cmp.Compare(a.ID, b.ID))
	if q.Desc {
		return -c
	}
	return c
}

// expireBatch is how many charges one expiry transaction records.
const expireBatch = 500

// ExpireCharges records as EXPIRED every ACTIVE charge of this company whose expiry time
// has passed, with one CHARGE_EXPIRED event each, and returns how many it recorded. Reads
// already show such charges as EXPIRED; this makes it permanent, once. It costs one index
// seek when nothing is due. RunDue does the same for every company through the due queue
// (due.go); both record a charge once, whichever comes first.
//
// It is not one transaction: it records up to 500 charges per transaction, so a failure
// leaves the batches before it recorded, and running it again finishes the rest.
func (s *Service) ExpireCharges(ctx context.Context) (int, error) {
	total := 0
	for {
		var due []Charge
		err := s.view(ctx, func(t *txn) error {
			var err error
			due, _, err = t.dueCharges(1)
			return err
		})
		if err != nil || len(due) == 0 {
			return total, err
		}
		n := 0
		err = s.update(ctx, func(t *txn) error {
			var err error
			n, err = t.expireCharges(expireBatch) // afresh on every run: the store may run this again
			return err
		})
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

// expireCharges records EXPIRED, with its event, each of up to limit ACTIVE charges of
// the company whose expiry time is not after now, earliest first, and returns how many.
func (t *txn) expireCharges(limit int) (int, error) {
	due, _, err := t.dueCharges(limit)
	if err != nil {
		return 0, err
	}
	for _, c := range due {
		if err := t.expireCharge(c); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// expireCharge records the ACTIVE charge c, whose time is up, EXPIRED, with its event.
func (t *txn) expireCharge(c Charge) error {
	c.Status = ChargeExpired
	if err := t.saveCharge(&c); err != nil {
		return err
	}
	t.present(&c)
	return t.emitCharge(EventChargeExpired, c)
}

// dueCharges returns up to limit ACTIVE charges whose expiry time is not after now, and,
// when limit is 0, how many there are (a count costs a walk of them all).
func (t *txn) dueCharges(limit int) ([]Charge, int, error) {
	q := store.Query{Index: indexExpiry, To: sortTime(t.now.Add(time.Nanosecond)), Limit: limit, NoTotal: limit > 0}
	return list(t, collCharges, q, func(c *Charge, id string) { c.ID = id })
}

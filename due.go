package payments

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pixfoundry/payments/store"
)

// duePage is how many companies a migration reads per transaction.
const duePage = 100

// The due queue is a collection of the system space with one entry per thing the clock
// will make due, in every company, ordered by due time (then company, kind and id):
//
//   - dueExpiries: a company's ACTIVE charges, one entry per company, at the earliest expiry
//     among them or before it. Creating a charge moves the entry earlier when the charge
//     expires first (scheduleExpiry); a charge paid or deleted leaves it as it is, early.
//     Handling it records EXPIRED the charges whose time is up, through the company's
//     expiry index of charges, and moves it to the next ACTIVE charge's expiry, or drops
//     it when there is none (expireCompany). One entry per company instead of one per
//     charge keeps a charge's creation, payment and deletion off the queue.
//   - dueExpiry: one ACTIVE charge, at its expiry time: what versions before dueExpiries
//     wrote for each charge. Such an entry is still handled when due (expireDue), so a
//     database upgraded in place loses none.
//   - dueSubscription: an ACTIVE subscription, at the start of its next period. The entry
//     moves to the next period when a period's charge is generated, and goes on cancel.
//
// The entry's id is "<kind>|<company>|<id>", so each thing has one entry at most. The pass
// (runDue) reads the entries due at or before its start a page at a time and handles them
// in due order; an entry whose thing is gone, final or not due yet is dropped or moved,
// so a stale entry costs one transaction and no harm. Outgoing orders have their own
// queue (orders.go), with leases and calls to the Rail.
const (
	collDueQueue = "due_queue"

	dueExpiries     = "expiries"
	dueExpiry       = "expiry"
	dueSubscription = "subscription"

	// dueExpireBatch is how many charges of one company a due pass records EXPIRED per
	// transaction; a company with more goes round again (runDue).
	dueExpireBatch = 500

	// dueQueuePage is how many entries the pass handles per transaction.
	dueQueuePage = 100
)

// dueEntry is one entry of the due queue.
type dueEntry struct {
	Kind    string `json:"kind"`
	Company string `json:"company"`
	ID      string `json:"id"`
}

func dueEntryID(kind, company, id string) string { return kind + "|" + company + "|" + id }

// dueSort is the due index's sort of the entry eid due at at.
func dueSort(at time.Time, eid string) string { return sortTime(at) + "|" + eid }

// schedule puts the entry of (kind, id) of this company at time at; isNew says it has none
// yet (one store call instead of two).
func (t *txn) schedule(kind, id string, at time.Time, isNew bool) error {
	eid := dueEntryID(kind, t.company, id)
	return t.enqueue(collDueQueue, eid, dueEntry{Kind: kind, Company: t.company, ID: id},
		[]store.Index{{Name: indexDue, Sort: dueSort(at, eid)}}, isNew)
}

// unschedule removes the entry of (kind, id) of this company, if there is one.
func (t *txn) unschedule(kind, id string) error {
	return t.dequeue(collDueQueue, dueEntryID(kind, t.company, id))
}

// RunDue does, once, the work the clock makes due in every company: it generates the
// charge of every subscription period that has started (catching up period by period
// after downtime), records the charges that have expired with their CHARGE_EXPIRED event,
// and advances every outgoing order that is due (refunds, cashback, payments,
// withdrawals: re-sent when a send failed or hung, asked about when the bank accepted it,
// recorded when it settled; see orders.go). It finds the work through two queues ordered
// by due time (the due queue, above, and the order queue), without visiting companies or
// records that are not due: when nothing is due it costs two index seeks. A server calls
// it periodically (examples/server does, every -tick); tests call it after moving a
// ManualClock. The company s acts for does not matter.
//
// Each page of due entries is handled in one transaction; when that fails, each entry of
// the page is tried in its own, so one failing entry holds back no other. A failure is
// logged and does not stop the rest; RunDue returns the first one. Running it again, or
// from two processes at once, is safe: each entry's work checks, in its transaction,
// that it is still due, and a period's charge has a correlationID of its own, so a period
// is generated and an expiry recorded exactly once.
func (s *Service) RunDue(ctx context.Context) error {
	return s.runDuePass(ctx, false)
}

// runDuePass is RunDue. Its last step delivers the webhooks due (RunWebhooks), unless a
// ServeWebhooks worker runs and wait is false: then it wakes the worker, so that a pass is
// not held up by a slow receiver the worker is waiting on. AdvanceClock passes wait true:
// what falls due at a step is delivered before the clock moves on.
func (s *Service) runDuePass(ctx context.Context, wait bool) error {
	var first error
	if err := s.runDue(ctx); err != nil {
		s.core.log.Error("running due work", "err", err)
		first = err
	}
	if _, err := s.runOrders(ctx); err != nil {
		s.core.log.Error("advancing outgoing orders", "err", err)
		first = cmp.Or(first, err)
	}
	if !wait && s.core.webhooks.served() {
		s.core.webhooks.wake()
		return first
	}
	if err := s.RunWebhooks(ctx); err != nil {
		s.core.log.Error("delivering webhooks", "err", err)
		first = cmp.Or(first, err)
	}
	return first
}

// AdvanceClock moves clock, which must be the Service's (Options.Clock), forward by d as if
// the time passed with the Service running, as the sandbox's clock route does: it runs
// RunDue first at the time it starts, then stops at each moment work falls due on the way
// (a subscription's period, a charge's expiry, an outgoing order's next step, a webhook's
// retry), in order, and runs RunDue there, and last at the end. So a month's charge
// generated on its day has expired a week later, with its event at that time, before the
// next month's is generated. Before each move it waits for the webhook deliveries this
// process has in flight (a worker's), so each is sent, and stamped, at the time it was
// due. It returns the clock's time at the end.
//
// Moving a clock and calling RunDue once does the work of the whole interval at the new
// time instead: what a process down for that long does when it starts again (late
// periods are generated then and are payable from then; see subscriptions.go).
//
// Moves run one at a time (a second waits for the first), so two moves of a month, asked
// for at once, take the clock two months on.
//
// A negative d is refused (EINVALID on "advance"), as is a move an *OffsetClock cannot make
// (beyond MaxClockOffset); then the clock does not move. A pass that fails does not stop
// the move, as a failing entry does not stop a pass: the clock goes on to the end, the
// work that failed is tried again at each later step, and the first failure is returned
// wrapped in ErrDueFailed, which says the move itself was made. A failure to find the
// next step (the store's) stops the move where it is.
func (s *Service) AdvanceClock(ctx context.Context, clock MovableClock, d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, errBackwards()
	}
	if clock == nil {
		return time.Time{}, invalid("clock", "clock is required: the MovableClock the Service was given (Options.Clock)")
	}
	s.core.moving.Lock()
	defer s.core.moving.Unlock()
	if got, want := clock.Now(), s.now(); got.Sub(want).Abs() > time.Second {
		// Told before it moves: a clock that is not the Service's is found out otherwise
		// only once moving it has not moved the Service's. (A clock that runs, an
		// OffsetClock on the system's, reads a little later the second time: hence the
		// margin.)
		return time.Time{}, invalid("clock", "clock is not the Service's: it reads %s, the Service %s", got.UTC().Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	to := clock.Now().Add(d)
	if c, ok := clock.(interface{ reaches(time.Time) error }); ok {
		if err := c.reaches(to); err != nil {
			return time.Time{}, err
		}
	}
	// moved is how far the steps below jumped the clock. A clock that runs (an OffsetClock
	// on the system's) also runs during the move, which waits for passes and deliveries:
	// the end is d past the start plus that running, so the move adds exactly d to the
	// clock's offset (ending at to, fixed at the start, took the running time off: after
	// moving a server's clock by an hour it stood behind the others by the time its move
	// took, and saw their webhook leases run out early).
	var moved time.Duration
	first := s.runDuePass(ctx, true) // what is due already is done at the time it is due
	for {
		if err := ctx.Err(); err != nil {
			return clock.Now(), internal(err)
		}
		s.core.webhooks.settle(ctx) // and so are the deliveries in flight
		now := s.now()
		next, ok, err := s.nextDue(ctx, now, to)
		if err != nil {
			return clock.Now(), err
		}
		if !ok {
			break
		}
		// The Service reads its clock to the millisecond (now): a step to the millisecond
		// at or after next makes the entry due.
		step := next.Add(time.Millisecond - 1).Truncate(time.Millisecond)
		moved += max(step.Sub(clock.Now()), 0) // a clock that ran past it stays
		if err := clock.MoveTo(step); err != nil {
			return clock.Now(), err
		}
		if !s.now().After(now) { // next is after now: the Service's clock did not move
			return clock.Now(), invalid("clock", "clock is not the Service's: moving it did not move the Service's")
		}
		first = cmp.Or(first, s.runDuePass(ctx, true))
	}
	s.core.webhooks.settle(ctx)
	if err := clock.MoveTo(clock.Now().Add(d - moved)); err != nil {
		return clock.Now(), err
	}
	if err := cmp.Or(first, s.runDuePass(ctx, true)); err != nil {
		return clock.Now(), fmt.Errorf("%w: %w", ErrDueFailed, err)
	}
	return clock.Now(), nil
}

// ErrDueFailed is wrapped, with the first failure, by the error AdvanceClock returns when
// the clock made the whole move but some work due on the way failed (RunDue logged it; the
// next pass tries it again). The failure may be any company's: the clock and the due
// passes are the server's.
var ErrDueFailed = errors.New("the clock moved, but due work failed")

// nextDue is the earliest due time after now, and at or before to, of an entry in the
// due queue, the order queue or the webhook queue; ok is false when none is.
func (s *Service) nextDue(ctx context.Context, now, to time.Time) (next time.Time, ok bool, err error) {
	from, until := sortTime(now)+"~", sortTime(to)+"~" // after every entry due at now
	var first string
	err = s.view(ctx, func(t *txn) error {
		for _, coll := range []string{collDueQueue, collOrderQueue, collWebhookQueue} {
			p, err := t.tx.List(coll, systemSpace, store.Query{Index: indexDue, From: from, To: until, Limit: 1, NoTotal: true})
			if err != nil {
				return internal(err)
			}
			if len(p.Records) == 0 {
				continue
			}
			if sort, _ := sortIn(p.Records[0], indexDue); first == "" || sort < first {
				first = sort
			}
		}
		return nil
	})
	if err != nil || first == "" {
		return time.Time{}, false, err
	}
	at, _, _ := strings.Cut(first, "|")
	next, err = time.Parse(sortTimeLayout, at)
	if err != nil {
		return time.Time{}, false, internal(fmt.Errorf("due entry sort %q: %w", first, err))
	}
	return next, true, nil
}

// runDue pages through the due queue up to the time it starts. Handling an entry leaves
// it gone or due after that time (a subscription catches up every started period at
// once; a generated charge expires days later), so the pages ahead are never changed
// behind the cursor and one pass does all that is due. That is also why the next page
// can be read, and its charges prepared (prepareDue), while this one commits.
func (s *Service) runDue(ctx context.Context) error {
	to := sortTime(s.now()) + "~" // every entry due at or before now ('~' sorts after '|')
	for {
		var again atomic.Bool
		if err := s.dueSweep(ctx, to, &again); err != nil || !again.Load() {
			return err
		}
	}
}

// dueSweep is one walk of runDue through the due queue up to to. It sets again when an
// entry it handled is left due still, behind the walk (a company with more charges to
// expire than one transaction records): runDue then walks again, and each walk records
// more, so the walks end.
func (s *Service) dueSweep(ctx context.Context, to string, again *atomic.Bool) error {
	var first error
	next := s.loadDuePage(ctx, "", to)
	for {
		pg := <-next
		if pg.err != nil || len(pg.entries) == 0 {
			return cmp.Or(first, pg.err)
		}
		next = s.loadDuePage(ctx, pg.next, to)
		err := s.updateAt(ctx, pg.now, func(t *txn) error {
			t.preps, t.dueAgain = pg.preps, again
			return t.handleDue(pg.entries...)
		})
		if err == nil {
			continue
		}
		for _, e := range pg.entries { // one at a time, to get past the one that fails
			if err := ctx.Err(); err != nil {
				<-next
				return internal(err)
			}
			if err := s.update(ctx, func(t *txn) error { t.dueAgain = again; return t.handleDue(e) }); err != nil {
				s.core.log.Error("due work failed", "company", e.Company, "kind", e.Kind, "id", e.ID, "err", err)
				first = cmp.Or(first, err)
			}
		}
	}
}

// dueBatch is a page of the due queue with the charges it will generate, prepared at now.
type dueBatch struct {
	entries []dueEntry
	next    string // where the page after it starts
	now     time.Time
	preps   map[prepKey]*chargePrep
	err     error
}

// loadDuePage reads the page of entries from "from" (up to "to") and prepares its charges,
// in a goroutine; the channel gets the page.
func (s *Service) loadDuePage(ctx context.Context, from, to string) <-chan dueBatch {
	out := make(chan dueBatch, 1)
	go func() {
		var pg dueBatch
		pg.err = s.view(ctx, func(t *txn) error {
			var err error
			pg.entries, pg.next, err = keysetPageOf[dueEntry](t, collDueQueue, systemSpace,
				store.Query{Index: indexDue, From: from, To: to, Limit: dueQueuePage, NoTotal: true})
			return err
		})
		if pg.err == nil && len(pg.entries) > 0 {
			pg.now = s.now()
			pg.preps = s.prepareDue(ctx, pg.now, pg.entries)
		}
		out <- pg
	}()
	return out
}

// dueWork is, by kind of due entry, the work it stands for, done in the transaction of the
// entry's company with the entry's id. A new kind of due work is a row here and its
// function in its noun's file.
var dueWork = map[string]func(t *txn, id string) error{
	dueExpiries:     func(t *txn, _ string) error { return t.expireCompany() }, // a company's charges, below
	dueExpiry:       (*txn).expireDue,                                          // one charge, below
	dueSubscription: (*txn).generateDue,                                        // subscriptions.go
	dueInstallment:  (*txn).retryDue,                                           // installments.go
}

// handleDue does the work of due entries, each in the company it names, in t.
func (t *txn) handleDue(entries ...dueEntry) error {
	for _, e := range entries {
		co := &txn{svc: &Service{core: t.svc.core, company: e.Company}, tx: t.tx, company: e.Company, now: t.now, preps: t.preps, dueAgain: t.dueAgain}
		var err error
		if work, ok := dueWork[e.Kind]; ok {
			err = work(co, e.ID)
		} else { // a kind this version does no work for: the entry goes
			err = storeErr(t.tx.Delete(collDueQueue, systemSpace, dueEntryID(e.Kind, e.Company, e.ID)), "due entry")
		}
		t.afterCommit = append(t.afterCommit, co.afterCommit...)
		if err != nil {
			return err
		}
	}
	return nil
}

// scheduleExpiry makes the company's expiries entry due no later than at, the expiry of
// a new ACTIVE charge: it reads the entry and writes it only when there is none or it is
// due later.
func (t *txn) scheduleExpiry(at time.Time) error {
	eid := dueEntryID(dueExpiries, t.company, "")
	r, err := t.tx.Get(collDueQueue, systemSpace, eid)
	if ok, err := found(storeErr(err, "due entry")); err != nil {
		return err
	} else if !ok {
		return t.schedule(dueExpiries, "", at, true)
	}
	if sort, ok := sortIn(r, indexDue); ok && sort <= dueSort(at, eid) {
		return nil
	}
	return t.schedule(dueExpiries, "", at, false)
}

// expireCompany handles the company's expiries entry: it records EXPIRED, with their
// events, up to dueExpireBatch of its ACTIVE charges whose time is up, and moves the entry
// to the expiry of the first ACTIVE charge left, or drops it when there is none. When a
// full batch was recorded and the next is due already, the pass goes round again.
func (t *txn) expireCompany() error {
	n, err := t.expireCharges(dueExpireBatch)
	if err != nil {
		return err
	}
	p, err := t.tx.List(collCharges, t.company, store.Query{Index: indexExpiry, Limit: 1})
	if err != nil {
		return internal(err)
	}
	if len(p.Records) == 0 {
		return t.unschedule(dueExpiries, "")
	}
	sort, _ := sortIn(p.Records[0], indexExpiry)
	at, err := time.Parse(sortTimeLayout, sort)
	if err != nil {
		return internal(fmt.Errorf("charge %s: expiry sort %q: %w", p.Records[0].ID, sort, err))
	}
	if again := t.dueAgain; n == dueExpireBatch && !at.After(t.now) && again != nil {
		t.after(func(context.Context) { again.Store(true) })
	}
	return t.schedule(dueExpiries, "", at, false)
}

// expireDue handles an entry of the older kind, for the one charge id: it records the
// charge EXPIRED, with its event, if it is ACTIVE and its time is up; otherwise it drops
// the entry, leaving a charge still to expire to its company's expiries entry.
func (t *txn) expireDue(id string) error {
	if err := t.unschedule(dueExpiry, id); err != nil {
		return err
	}
	var c Charge
	err := t.get(collCharges, id, "charge", &c) // as stored: a read would show it EXPIRED
	if ok, err := found(err); err != nil || !ok || c.Status != ChargeActive {
		return err
	}
	c.ID = id
	if c.ExpiresDate.After(t.now) {
		return t.scheduleExpiry(c.ExpiresDate)
	}
	return t.expireCharge(c)
}

// migrateDue gives every ACTIVE charge of every company its due-queue entry, once per
// database (see migrateOnce): charges created by a version without the due queue have none.
func (s *Service) migrateDue(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationDue1, func(co *Service) error { return co.scheduleActiveCharges(ctx) })
}

// scheduleActiveCharges puts the company's expiries entry in the due queue at the expiry
// of its first ACTIVE charge, if it has one.
func (s *Service) scheduleActiveCharges(ctx context.Context) error {
	return s.update(ctx, func(t *txn) error {
		cs, _, err := list(t, collCharges, store.Query{Index: indexExpiry, Limit: 1}, func(c *Charge, id string) { c.ID = id })
		if err != nil || len(cs) == 0 {
			return err
		}
		return t.scheduleExpiry(cs[0].ExpiresDate)
	})
}

// eachBatch calls fn for every record of the company's collection coll in the index, in
// order, decoded as a T, a batch of expireBatch per transaction: for the migrations, which
// run once per database over indexes that new records only add to at the end. A page
// starts at the sort of the last entry of the one before, skipping the entries of that
// sort already seen, so that a page costs its own length rather than a walk over every
// page before it (paging by skip alone, a migration of a million charges walked the index
// 2,000 times).
func eachBatch[T any](ctx context.Context, s *Service, coll, index string, fn func(t *txn, id string, v *T) error) error {
	from, skip := "", 0
	for {
		var n, run int
		var last string
		err := s.update(ctx, func(t *txn) error {
			n, run, last = 0, 0, ""
			page, err := t.tx.List(coll, t.company, store.Query{Index: index, From: from, Skip: skip, Limit: expireBatch, NoTotal: true})
			if err != nil {
				return internal(err)
			}
			for _, r := range page.Records {
				var v T
				if err := decode(r, &v); err != nil {
					return err
				}
				if err := fn(t, r.ID, &v); err != nil {
					return err
				}
				sort, _ := sortIn(r, index)
				if n > 0 && sort == last {
					run++
				} else {
					last, run = sort, 1
				}
				n++
			}
			return nil
		})
		if err != nil || n < expireBatch {
			return err
		}
		if last == from {
			skip += run // the whole page had the sort it started at
		} else {
			from, skip = last, run
		}
	}
}

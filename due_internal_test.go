package payments

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// TestMigrateDue: ACTIVE charges of a version without the due queue (no entries) get
// their company's expiries entry when the database is opened, in every company, and the
// pass expires them once, more than one transaction's batch of them; charges already
// final are not expired.
func TestMigrateDue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	opts := Options{Clock: clock}
	svc, err := New(st, opts)
	is.NoErr(err)
	co, err := svc.CreateCompany(ctx, CreateCompanyParams{Name: "Second"})
	is.NoErr(err)
	other, err := svc.Company(ctx, co.ID)
	is.NoErr(err)
	const n = expireBatch + 10
	for i := range n {
		_, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100})
		is.NoErr(err)
	}
	_, err = other.CreateCharge(ctx, CreateChargeParams{CorrelationID: "o", Value: 100})
	is.NoErr(err)
	_, err = svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "gone", Value: 100})
	is.NoErr(err)
	is.NoErr(svc.DeleteCharge(ctx, "gone"))

	// Make it what the previous version left: no queue entries, no migration marker.
	is.NoErr(st.Update(ctx, func(tx store.Tx) error {
		page, err := tx.List(collDueQueue, systemSpace, store.Query{Index: indexDue, Limit: 10 * n})
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			if err := tx.Delete(collDueQueue, systemSpace, r.ID); err != nil {
				return err
			}
		}
		return tx.Delete(collMigrations, systemSpace, migrationDue1)
	}))
	clock.Advance(48 * time.Hour)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(countEventsOf(t, svc, EventChargeExpired), 0) // no entries: the pass cannot see them

	svc, err = New(st, opts) // open again: the migration runs
	is.NoErr(err)
	is.NoErr(svc.view(ctx, func(t *txn) error {
		p, err := t.tx.List(collDueQueue, systemSpace, store.Query{Index: indexDue})
		is.Equal(p.Total, 2) // one expiries entry per company with ACTIVE charges
		return err
	}))
	is.NoErr(svc.RunDue(ctx))
	is.Equal(countEventsOf(t, svc, EventChargeExpired), n)   // recorded
	is.Equal(countEventsOf(t, other, EventChargeExpired), 1) // in the other company too
	is.NoErr(svc.RunDue(ctx))
	is.Equal(countEventsOf(t, svc, EventChargeExpired), n) // once
	_, err = New(st, opts)
	is.NoErr(err) // the marker: opening again migrates nothing
}

func countEventsOf(t *testing.T, svc *Service, name string) int {
	t.Helper()
	k := 0
	for after := uint64(0); ; {
		evs, err := svc.Events(context.Background(), after, MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return k
		}
		for _, ev := range evs {
			if ev.Name == svc.EventName(name) {
				k++
			}
			after = ev.Seq
		}
	}
}

// TestDueQueue_Entries: a company with ACTIVE charges has one expiries entry, at the
// earliest expiry: a new charge moves it earlier, never later; a charge paid or deleted
// leaves it early, and the pass then moves it to the next expiry, and drops it when no
// ACTIVE charge is left. A subscription's entry goes when it is canceled.
func TestDueQueue_Entries(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, clock := newMemoryService(t)
	due := func() []string { // the entries, each as "kind at", in due order
		var out []string
		for _, q := range queued(t, svc) {
			out = append(out, q.Kind+" "+q.at)
		}
		return out
	}
	at := func(d time.Duration) string { return sortTime(clock.Now().Add(d)) }
	var cs []Charge
	for i, expiresIn := range []int64{7200, 3600, 10800} {
		c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100, ExpiresIn: expiresIn})
		is.NoErr(err)
		cs = append(cs, c)
		if i == 0 {
			is.Equal(due(), []string{"expiries " + at(2*time.Hour)}) // the company's entry, at its charge's expiry
		}
	}
	is.Equal(due(), []string{"expiries " + at(time.Hour)}) // moved to the earliest expiry, not later
	sub, err := svc.CreateSubscription(ctx, CreateSubscriptionParams{Value: 100, Customer: &CreateCustomerParams{Name: "Ana", Email: "ana@example.com"}})
	is.NoErr(err)
	is.Equal(len(due()), 2) // and the subscription's
	_, err = svc.CancelSubscription(ctx, sub.GlobalID)
	is.NoErr(err)
	is.Equal(due(), []string{"expiries " + at(time.Hour)}) // canceled: gone

	_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200000000001", Value: 100, TxID: cs[1].Identifier})
	is.NoErr(err)
	is.Equal(due(), []string{"expiries " + at(time.Hour)}) // the earliest was paid: the entry stays, early
	clock.Advance(time.Hour)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(due(), []string{"expiries " + at(time.Hour)}) // due with nothing to expire: moved to the next expiry
	is.Equal(countEventsOf(t, svc, EventChargeExpired), 0) // and nothing recorded
	is.NoErr(svc.DeleteCharge(ctx, "c2"))
	clock.Advance(time.Hour)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(len(due()), 0)                                // the last ACTIVE charge expired: gone
	is.Equal(countEventsOf(t, svc, EventChargeExpired), 1) // only the ACTIVE one, once
	c, err := svc.GetCharge(ctx, "c0")
	is.NoErr(err)
	is.Equal(c.Status, ChargeExpired)
}

// TestDueQueue_OldEntries: entries of the kind versions before the expiries entry wrote,
// one per charge, are still handled: a due one expires its charge once, one of a paid
// charge is dropped, and one not due yet hands its charge to the company's entry.
func TestDueQueue_OldEntries(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, clock := newMemoryService(t)
	var cs []Charge
	for i, expiresIn := range []int64{3600, 3600, 7200} {
		c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100, ExpiresIn: expiresIn})
		is.NoErr(err)
		cs = append(cs, c)
	}
	_, err := svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200000000001", Value: 100, TxID: cs[1].Identifier})
	is.NoErr(err)
	// What an older version left: an entry per charge, no expiries entry.
	is.NoErr(svc.update(ctx, func(t *txn) error {
		if err := t.unschedule(dueExpiries, ""); err != nil {
			return err
		}
		for _, c := range cs {
			if err := t.schedule(dueExpiry, c.ID, cs[0].ExpiresDate, true); err != nil { // c2's early
				return err
			}
		}
		return nil
	}))
	clock.Advance(time.Hour)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(countEventsOf(t, svc, EventChargeExpired), 1) // the due one
	var kinds []string
	for _, q := range queued(t, svc) {
		kinds = append(kinds, q.Kind)
	}
	is.Equal(kinds, []string{dueExpiries}) // the old entries are gone; c2 is the company's entry's now
	clock.Advance(time.Hour)
	is.NoErr(svc.RunDue(ctx))
	is.NoErr(svc.RunDue(ctx))
	is.Equal(countEventsOf(t, svc, EventChargeExpired), 2) // c2 too, once
}

// queuedEntry is an entry of the due queue with the time it is due (sortTime).
type queuedEntry struct {
	dueEntry
	at string
}

// queued is the due queue, in due order.
func queued(t *testing.T, svc *Service) []queuedEntry {
	t.Helper()
	var out []queuedEntry
	err := svc.view(context.Background(), func(tx *txn) error {
		p, err := tx.tx.List(collDueQueue, systemSpace, store.Query{Index: indexDue, Limit: MaxLimit})
		for _, r := range p.Records {
			var q queuedEntry
			if err := decode(r, &q.dueEntry); err != nil {
				return err
			}
			sort, _ := sortIn(r, indexDue)
			q.at = sort[:len(sortTimeLayout)]
			out = append(out, q)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newMemoryService is a Service on a new memory store, with a ManualClock at noon UTC of
// 2026-11-22.
func newMemoryService(t *testing.T) (*Service, *ManualClock) {
	t.Helper()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := New(memory.New(), Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return svc, clock
}

// TestAdvanceClock_SubMillisecond: work due between two milliseconds (a webhook timeout
// or lease configured below a millisecond would make one) is reached: the Service reads
// its clock to the millisecond, so the step goes to the next one, and the move ends.
func TestAdvanceClock_SubMillisecond(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, clock := newMemoryService(t)
	t0 := clock.Now()
	clock.Set(t0.Add(time.Microsecond)) // off the millisecond, as a system clock is
	at := t0.Add(1500 * time.Microsecond)
	is.NoErr(svc.update(context.Background(), func(t *txn) error {
		eid := dueEntryID("test", "co", "x") // a kind no version handles: the pass drops it
		r, err := encode(eid, dueEntry{Kind: "test", Company: "co", ID: "x"}, nil, []store.Index{{Name: indexDue, Sort: dueSort(at, eid)}})
		if err != nil {
			return err
		}
		return t.tx.Insert(collDueQueue, systemSpace, r)
	}))
	now, err := svc.AdvanceClock(context.Background(), clock, time.Hour)
	is.NoErr(err)
	is.Equal(now, t0.Add(time.Hour+time.Microsecond)) // at the end
	is.Equal(len(queued(t, svc)), 0)                  // the entry handled on the way
}

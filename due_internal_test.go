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

// TestMigrateDue: ACTIVE charges of a version without the due queue (no entries) get their
// entries when the database is opened, in every company and past a batch, and the pass
// expires them once; charges already final get none.
func TestMigrateDue(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	opts := Options{Clock: clock}
	svc, err := New(st, opts)
	is.NoErr(err)
	co, err := svc.CreateCompany(ctx, CompanyParams{Name: "Second"})
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
		is.Equal(p.Total, n+1) // every ACTIVE charge, of both companies; not the deleted one
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

// TestDueQueue_Entries: an ACTIVE charge has one entry, which goes when it is paid,
// deleted or expired; a subscription's goes when it is canceled.
func TestDueQueue_Entries(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := New(memory.New(), Options{Clock: clock})
	is.NoErr(err)
	entries := func() int {
		n := 0
		is.NoErr(svc.view(ctx, func(t *txn) error {
			p, err := t.tx.List(collDueQueue, systemSpace, store.Query{Index: indexDue})
			n = p.Total
			return err
		}))
		return n
	}
	var cs []Charge
	for i := range 3 {
		c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100})
		is.NoErr(err)
		cs = append(cs, c)
	}
	sub, err := svc.CreateSubscription(ctx, CreateSubscriptionParams{Value: 100, Customer: &CreateCustomerParams{Name: "Ana", Email: "ana@example.com"}})
	is.NoErr(err)
	is.Equal(entries(), 4) // one per ACTIVE charge and subscription
	_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200000000001", Value: 100, TxID: cs[0].Identifier})
	is.NoErr(err)
	is.Equal(entries(), 3) // paid: gone
	is.NoErr(svc.DeleteCharge(ctx, "c1"))
	is.Equal(entries(), 2) // deleted: gone
	_, err = svc.CancelSubscription(ctx, sub.GlobalID)
	is.NoErr(err)
	is.Equal(entries(), 1) // canceled: gone
	clock.Advance(25 * time.Hour)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(entries(), 0)                                 // expired: gone
	is.Equal(countEventsOf(t, svc, EventChargeExpired), 1) // only the ACTIVE one expired
}

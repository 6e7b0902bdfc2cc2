package payments

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// Charges made by a subscription carry its correlationID; subscriptions themselves come
// later, so this test sets the unexported field the way they will.
func TestListCharges_SubscriptionFilter(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, err := New(memory.New(), Options{})
	is.NoErr(err)
	for _, p := range []CreateChargeParams{
		{CorrelationID: "s1", Value: 100, subscription: "sub-a"},
		{CorrelationID: "s2", Value: 100, subscription: "sub-b"},
		{CorrelationID: "s3", Value: 100, subscription: "sub-a"},
		{CorrelationID: "none", Value: 100},
	} {
		_, err := svc.CreateCharge(ctx, p)
		is.NoErr(err)
	}
	cs, page, err := svc.ListCharges(ctx, ChargeFilter{Subscription: "sub-a"})
	is.NoErr(err)
	is.Equal(page.TotalCount, 2) // only sub-a's charges
	is.Equal(cs[0].Subscription, "sub-a")
	_, page, err = svc.ListCharges(ctx, ChargeFilter{Subscription: "sub-a", Status: ChargeActive})
	is.NoErr(err)
	is.Equal(page.TotalCount, 2) // combined with status
	_, _, err = svc.ListCharges(ctx, ChargeFilter{Subscription: "sub-a", Customer: "x"})
	is.Equal(ErrorField(err), "subscription") // one of customer or subscription
}

// A charge is found and paid by its txid whether its transactionID is implied by the txid
// (made now: no txid key stored) or random after it (made by an older version: found by
// its txid key, which it keeps when saved).
func TestCharge_FoundByTxid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		transactionID string // "" for one made now
		txidKey       bool
	}{
		{"Implied", "", false},
		{"Legacy", "019ab0c0ffee0123456789abcdef0123", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			st := memory.New()
			svc, err := New(st, Options{})
			is.NoErr(err)
			var c Charge
			if tc.transactionID == "" {
				c, err = svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "o1", Value: 100})
			} else {
				is.True(!txidImplied(tc.transactionID))
				err = svc.update(ctx, func(t *txn) error {
					ids := *svc.core.ids.chargeIDs(t.now)
					ids.transactionID = tc.transactionID
					c, err = t.createCharge(CreateChargeParams{CorrelationID: "o1", Value: 100, ids: &ids})
					return err
				})
			}
			is.NoErr(err)
			keys := func() []string {
				var ks []string
				is.NoErr(st.View(ctx, func(tx store.Tx) error {
					r, err := tx.Get(collCharges, svc.company, c.ID)
					ks = r.Keys
					return err
				}))
				return ks
			}
			is.Equal(slices.Contains(keys(), "txid:"+c.txid()), tc.txidKey)
			got, err := svc.GetCharge(ctx, c.txid())
			is.NoErr(err)
			is.Equal(got.ID, c.ID)
			_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200TXID00001", Value: 100, TxID: c.txid()})
			is.NoErr(err)
			got, err = svc.GetCharge(ctx, c.txid()) // after the charge was saved paid
			is.NoErr(err)
			is.Equal(got.Status, ChargeCompleted)
			is.Equal(slices.Contains(keys(), "txid:"+c.txid()), tc.txidKey)
		})
	}
}

// A charge is found by its paymentLinkID through the link's system-space record (no key
// of its own), by its company only; one made by an older version (a link record without
// the charge id, and a paymentLinkID key) is found by its key, and after migrateLinks,
// which gives its link record the id, by the record, also once saved without the key.
func TestCharge_FoundByPaymentLink(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	svc, err := New(st, Options{})
	is.NoErr(err)
	record := func(coll, company, id string) (r store.Record) {
		is.NoErr(st.View(ctx, func(tx store.Tx) error {
			var err error
			r, err = tx.Get(coll, company, id)
			return err
		}))
		return r
	}
	found := func(s *Service, c Charge) bool {
		got, err := s.GetCharge(ctx, c.PaymentLinkID)
		if ErrorCode(err) == ENOTFOUND {
			return false
		}
		is.NoErr(err)
		is.Equal(got.ID, c.ID)
		return true
	}

	c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "new", Value: 100})
	is.NoErr(err)
	is.True(!slices.Contains(record(collCharges, svc.company, c.ID).Keys, "paymentLinkID:"+c.PaymentLinkID))
	is.True(found(svc, c))
	view, err := svc.PaymentLink(ctx, c.PaymentLinkID)
	is.NoErr(err)
	is.Equal(view.Value, int64(100))
	co, err := svc.CreateCompany(ctx, CreateCompanyParams{Name: "Other"})
	is.NoErr(err)
	other, err := svc.Company(ctx, co.ID)
	is.NoErr(err)
	is.True(!found(other, c)) // another company's link

	// An older charge: its link record without the id, and a paymentLinkID key.
	old, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "old", Value: 100})
	is.NoErr(err)
	is.NoErr(st.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(collPaymentLinks, systemSpace, store.Record{ID: old.PaymentLinkID, Data: []byte(`{"company":"` + svc.company + `","kind":"charge"}`)}); err != nil {
			return err
		}
		r, err := tx.Get(collCharges, svc.company, old.ID)
		if err != nil {
			return err
		}
		r.Keys = append(r.Keys, "paymentLinkID:"+old.PaymentLinkID)
		if err := tx.Put(collCharges, svc.company, r); err != nil {
			return err
		}
		return tx.Delete(collMigrations, systemSpace, migrationLinks1)
	}))
	is.True(found(svc, old)) // by its key
	is.True(!found(other, old))

	svc, err = New(st, Options{}) // migrates
	is.NoErr(err)
	is.True(strings.Contains(string(record(collPaymentLinks, systemSpace, old.PaymentLinkID).Data), `"id":"`+old.ID+`"`))
	_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200LINK00001", Value: 100, TxID: old.txid()})
	is.NoErr(err)
	is.True(!slices.Contains(record(collCharges, svc.company, old.ID).Keys, "paymentLinkID:"+old.PaymentLinkID)) // saved without it
	is.True(found(svc, old))
	l, err := svc.PaymentLink(ctx, old.PaymentLinkID)
	is.NoErr(err)
	is.Equal(l.Status, PaymentLinkPaid) // the page finds it, paid
	_, err = svc.QRCodeImageByLink(ctx, old.PaymentLinkID, 0)
	is.Equal(ErrorCode(err), EPRECONDITION) // found, and no longer drawn for payers
}

// TestAmountsAt_NoOverflow: the largest value with the largest fine and interest, 2999
// days late, computes without wrapping. New charges cannot accrue past MaxChargeValue
// (setOverdue), but a charge stored before that check was made may.
func TestAmountsAt_NoOverflow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := Charge{Type: ChargeOverdue, Value: MaxChargeValue, CreatedAt: t0, DaysForDueDate: 1, DaysAfterDueDate: MaxOverdueDays,
		Fines: &Fines{Value: 10000, Type: FinePercentage}, Interests: &Interests{Value: 10000}}
	_, due := c.amountsAt(t0.Add(3000 * 24 * time.Hour))
	is.Equal(due, int64(MaxChargeValue*(1+1+2999))) // value, fine, 2999 days of interest
}

// TestMigrateChargeIndexes: charges stored with the status joined to the customer and
// subscription index names by "|" get withStatus's names on open, once, and are listed by
// customer and status as before; charges without either are left as they are.
func TestMigrateChargeIndexes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	svc, err := New(st, Options{})
	is.NoErr(err)
	ana := &CreateCustomerParams{Name: "Ana", Email: "ana@example.com", CorrelationID: "ana"}
	c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c1", Value: 100, Customer: ana})
	is.NoErr(err)
	plain, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c2", Value: 100})
	is.NoErr(err)
	record := func(id string) (r store.Record) {
		is.NoErr(st.View(ctx, func(tx store.Tx) error {
			var err error
			r, err = tx.Get(collCharges, svc.company, id)
			return err
		}))
		return r
	}
	names := func(r store.Record) []string {
		var out []string
		for _, ix := range r.Indexes {
			out = append(out, ix.Name)
		}
		return out
	}
	plainBefore := record(plain.ID)
	is.NoErr(st.Update(ctx, func(tx store.Tx) error { // as an older version stored it
		if err := oldIndexNames(tx, svc.company, c.ID); err != nil {
			return err
		}
		return tx.Delete(collMigrations, systemSpace, migrationChargeIndex1)
	}))
	old := record(c.ID)
	is.True(slices.Contains(names(old), "customer:ana|status:ACTIVE"))
	list := func() int {
		cs, _, err := svc.ListCharges(ctx, ChargeFilter{Customer: "ana", Status: ChargeActive})
		is.NoErr(err)
		return len(cs)
	}
	is.Equal(list(), 0) // under the old name: not found

	svc, err = New(st, Options{}) // migrates
	is.NoErr(err)
	after := record(c.ID)
	is.True(slices.Contains(names(after), "customer:ana\x1fstatus:ACTIVE"))
	is.True(!slices.Contains(names(after), "customer:ana|status:ACTIVE"))
	is.Equal(list(), 1)
	is.Equal(string(after.Data), string(old.Data)) // the record's data as it was
	is.Equal(record(plain.ID), plainBefore)        // a charge without a customer untouched
	is.NoErr(st.View(ctx, func(tx store.Tx) error {
		_, err := tx.Get(collMigrations, systemSpace, migrationChargeIndex1)
		return err
	})) // marked done
}

// TestMigrateChargeIndexes_Pages: the migration reaches every charge over several pages,
// when many charges share a creation time (a stopped clock) across page boundaries and
// when they do not.
func TestMigrateChargeIndexes_Pages(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := New(st, Options{Clock: clock})
	is.NoErr(err)
	ana := &CreateCustomerParams{Name: "Ana", Email: "ana@example.com", CorrelationID: "ana"}
	const same, spread = 1100, 300 // more than two pages at one instant, then one per second
	for i := range same + spread {
		if i >= same {
			clock.Advance(time.Second)
		}
		_, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 100, Customer: ana})
		is.NoErr(err)
	}
	var ids []string
	is.NoErr(st.View(ctx, func(tx store.Tx) error {
		p, err := tx.List(collCharges, svc.company, store.Query{Index: indexAll, Limit: same + spread})
		for _, r := range p.Records {
			ids = append(ids, r.ID)
		}
		return err
	}))
	is.Equal(len(ids), same+spread)
	for chunk := range slices.Chunk(ids, 200) { // back to the old names
		is.NoErr(st.Update(ctx, func(tx store.Tx) error {
			for _, id := range chunk {
				if err := oldIndexNames(tx, svc.company, id); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	is.NoErr(st.Update(ctx, func(tx store.Tx) error { return tx.Delete(collMigrations, systemSpace, migrationChargeIndex1) }))
	count := func() int {
		_, page, err := svc.ListCharges(ctx, ChargeFilter{Customer: "ana", Status: ChargeActive, ListParams: ListParams{Limit: 1}})
		is.NoErr(err)
		return page.TotalCount
	}
	is.Equal(count(), 0) // all under the old name

	svc, err = New(st, Options{Clock: clock}) // migrates
	is.NoErr(err)
	is.Equal(count(), same+spread) // every one renamed
}

// oldIndexNames stores the charge id of company with its status index names joined by
// "|", as versions before migrationChargeIndex1 did.
func oldIndexNames(tx store.Tx, company, id string) error {
	r, err := tx.Get(collCharges, company, id)
	if err != nil {
		return err
	}
	for i, ix := range r.Indexes {
		r.Indexes[i].Name = strings.Replace(ix.Name, "\x1fstatus:", "|status:", 1)
	}
	return tx.Put(collCharges, company, r)
}

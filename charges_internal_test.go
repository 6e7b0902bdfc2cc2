package payments

import (
	"context"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// Charges made by a subscription carry its correlationID; subscriptions themselves come
// later, so this test sets the unexported field the way they will.
func TestListCharges_SubscriptionFilter(t *testing.T) {
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

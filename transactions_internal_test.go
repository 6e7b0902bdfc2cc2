package payments

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// TestMigrateTransactionIndexes: transactions stored by a version that wrote only the
// single filter indexes (all, type, charge, pixQrCode) get the combined ones on open,
// once, so "charge and type", "pixQrCode and type" and hasWebhook list them. Before, a
// database from such a version listed a paid charge's Pix under ?charge= but not under
// ?charge=&type=PAYMENT.
func TestMigrateTransactionIndexes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	svc, err := New(st, Options{})
	is.NoErr(err)
	c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "c1", Value: 1000})
	is.NoErr(err)
	_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E1", Value: 1000, TxID: c.Identifier[:25]})
	is.NoErr(err)
	q, err := svc.CreatePixQRCode(ctx, CreatePixQRCodeParams{Name: "Caixa", CorrelationID: "q1"})
	is.NoErr(err)
	_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E2", Value: 700, TxID: q.Identifier})
	is.NoErr(err)

	is.NoErr(st.Update(ctx, func(tx store.Tx) error { // as that version stored them
		page, err := tx.List(collTransactions, svc.company, store.Query{Index: indexAll, Limit: 10})
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			var kept []store.Index
			for _, ix := range r.Indexes {
				if !strings.Contains(ix.Name, "|") && !strings.HasPrefix(ix.Name, "hasWebhook:") {
					kept = append(kept, ix)
				}
			}
			r.Indexes = kept
			if err := tx.Put(collTransactions, svc.company, r); err != nil {
				return err
			}
		}
		return tx.Delete(collMigrations, systemSpace, migrationTransactionIndex1)
	}))
	no := false
	count := func(f TransactionFilter) int {
		_, page, err := svc.ListTransactions(ctx, f)
		is.NoErr(err)
		return page.TotalCount
	}
	filters := []TransactionFilter{
		{Charge: "c1", Type: TransactionPayment}, {PixQrCode: "q1", Type: TransactionPayment},
		{Charge: "c1", HasWebhook: &no}, {HasWebhook: &no}, {Type: TransactionPayment, HasWebhook: &no},
	}
	is.Equal(count(TransactionFilter{Charge: "c1"}), 1)
	is.Equal(count(filters[0]), 0) // the combined entry is missing

	svc, err = New(st, Options{}) // migrates
	is.NoErr(err)
	for _, f := range filters {
		is.True(count(f) > 0)
	}
	is.Equal(count(filters[0]), 1)
	is.Equal(count(filters[3]), 2)
	is.NoErr(st.View(ctx, func(tx store.Tx) error {
		_, err := tx.Get(collMigrations, systemSpace, migrationTransactionIndex1)
		return err
	})) // marked done
	rep, err := svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK())
}

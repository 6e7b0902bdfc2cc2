package payments

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
)

// TestMigrateRouting: a database from before the Pix key registry, the txid routes and the
// received-Pix registry gets them on open, once; one key in two companies (which older
// versions allowed) stays with the first company created, with a warning, and the open
// does not fail.
func TestMigrateRouting(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		ctx := context.Background()
		b := mustCompany(t, e.svc, "B", "b@example.com")
		acct, err := b.CreateAccount(ctx, CreateAccountParams{PixKey: "caixa@b.example.com"})
		is.NoErr(err)
		_, _, err = b.CreateSubaccount(ctx, CreateSubaccountParams{PixKey: "vendedor@b.example.com", Name: "Vendedor"})
		is.NoErr(err)
		c, err := b.CreateCharge(ctx, CreateChargeParams{CorrelationID: "old", Value: 1000})
		is.NoErr(err)
		x, err := b.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E00000000202611221200old0000001", Value: 500})
		is.NoErr(err)
		e.clock.Advance(time.Second) // C is created after B
		cc := mustCompany(t, e.svc, "C", "c@example.com")

		// The data as an older version left it: no registries, no markers, and C with
		// B's key.
		me, err := e.svc.GetCompany(ctx)
		is.NoErr(err)
		is.NoErr(e.store.Update(ctx, func(tx store.Tx) error {
			for coll, ids := range map[string][]string{
				collPixKeys:     {me.PixKey, "b@example.com", "caixa@b.example.com", "c@example.com"},
				collTxidRoutes:  {c.txid()},
				collReceivedPix: {x.EndToEndID},
				collMigrations:  {migrationPixKeys1, migrationTxidRoutes1, migrationReceivedPix1},
			} {
				for _, id := range ids {
					if err := tx.Delete(coll, systemSpace, id); err != nil {
						return err
					}
				}
			}
			r, err := tx.Get(collCompanies, systemSpace, cc.company)
			if err != nil {
				return err
			}
			var co Company
			if err := decode(r, &co); err != nil {
				return err
			}
			co.PixKey = "b@example.com"
			nr, err := encode(co.ID, co, r.Keys, r.Indexes)
			if err != nil {
				return err
			}
			return tx.Put(collCompanies, systemSpace, nr)
		}))

		var logs bytes.Buffer
		svc, err := New(e.store, Options{Clock: e.clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		is.NoErr(err)                                                             // opens, whatever the older data holds
		is.True(strings.Contains(logs.String(), "Pix key held by two companies")) // warned
		is.True(strings.Contains(logs.String(), "key=b@example.com"))

		route := func(p rail.ReceivedPix) RoutedPix {
			t.Helper()
			p.At = e.clock.Now()
			r, err := svc.ReceiveBankPix(ctx, p)
			is.NoErr(err)
			return r
		}
		is.Equal(route(rail.ReceivedPix{EndToEndID: "E1", Key: "b@example.com", Value: 100}).CompanyID, b.company) // the first company keeps the key
		is.Equal(route(rail.ReceivedPix{EndToEndID: "E2", Key: "caixa@b.example.com", Value: 100}).CompanyID, b.company)
		is.True(route(rail.ReceivedPix{EndToEndID: "E3", Key: "vendedor@b.example.com", Value: 100}).Unmatched != nil) // a subaccount's key is its owner's, not B's
		is.Equal(route(rail.ReceivedPix{EndToEndID: "E4", TxID: c.txid(), Value: 1000}).CompanyID, b.company)          // the old charge's txid
		old := route(rail.ReceivedPix{EndToEndID: x.EndToEndID, Key: "c@example.com", Value: 500})
		is.True(!old.New)                                        // the old Pix is known
		is.Equal(old.Transaction.TransactionID, x.TransactionID) // where it was recorded
		got, err := b.GetAccount(ctx, acct.AccountID)
		is.NoErr(err)
		is.True(got.Balance.Total > 0) // the account's key led to it

		logs.Reset()
		_, err = New(e.store, Options{Clock: e.clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		is.NoErr(err)
		is.Equal(logs.String(), "") // once per database
	})
}

// mustCompany creates a company with the Pix key, registered by svc's.
func mustCompany(t *testing.T, svc *Service, name, key string) *Service {
	t.Helper()
	co, err := svc.CreateCompany(context.Background(), CreateCompanyParams{Name: name, PixKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return &Service{core: svc.core, company: co.ID}
}

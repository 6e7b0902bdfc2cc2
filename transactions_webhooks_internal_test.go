package payments

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// TestMigrateTransactionWebhooks_V1File opens a bbolt file written by the version before
// transactionWebhooks (37b0bef), whose transactions carried their webhook audit and
// hasWebhook index entries: testdata/transactions-v1.db.gz, made by
// testdata/transactions-v1.go.txt on that version (Pix with and without webhooks, to a
// static QR code, three charges and a refund, with delivered and given-up entries), with
// testdata/transactions-v1.json.gz, what that version's ListTransactions answered to 27
// filters. On open the migration moves each audit to the transaction's record; every
// filter then answers the same, transactions no longer carry an audit or hasWebhook
// entries, and an entry added after migration shows with the old ones and moves the
// transaction from hasWebhook=false to true.
func TestMigrateTransactionWebhooks_V1File(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := openGzipped(t, "testdata/transactions-v1.db.gz")
	var want []struct {
		Filter TransactionFilter
		Got    []Transaction
		Info   PageInfo
	}
	is.NoErr(json.Unmarshal(gunzipped(t, "testdata/transactions-v1.json.gz"), &want))
	is.Equal(len(want), 27)

	legacy := 0 // transactions carrying their audit before the migration
	is.NoErr(st.View(ctx, func(tx store.Tx) error {
		for _, co := range companiesIn(t, tx) {
			page, err := tx.List(collTransactions, co, store.Query{Index: indexAll, Limit: 100})
			is.NoErr(err)
			for _, r := range page.Records {
				if strings.Contains(string(r.Data), `"webhookSent"`) {
					legacy++
				}
			}
		}
		return nil
	}))
	is.Equal(legacy, 4)

	svc, err := New(st, Options{Clock: NewManualClock(time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC))}) // migrates
	is.NoErr(err)
	for _, w := range want {
		got, info, err := svc.ListTransactions(ctx, w.Filter)
		is.NoErr(err)
		is.Equal(info, w.Info)
		gotJSON, err := json.Marshal(got)
		is.NoErr(err)
		wantJSON, err := json.Marshal(w.Got)
		is.NoErr(err)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("filter %+v:\n got %s\nwant %s", w.Filter, gotJSON, wantJSON)
		}
	}
	is.NoErr(st.View(ctx, func(tx store.Tx) error {
		page, err := tx.List(collTransactions, svc.company, store.Query{Index: indexAll, Limit: 100})
		is.NoErr(err)
		is.Equal(len(page.Records), 7)
		for _, r := range page.Records {
			is.True(!strings.Contains(string(r.Data), `"webhookSent"`)) // moved out
			for _, ix := range r.Indexes {
				is.True(!strings.Contains(ix.Name, "hasWebhook")) // the audit record's now
			}
		}
		_, err = tx.Get(collMigrations, systemSpace, migrationTransactionWebhooks)
		return err // marked done
	}))

	// an entry after the migration: with the old ones, and the filter follows
	const unaudited = "E00000000202611221200000000000001"
	yes, no := true, false
	count := func(f TransactionFilter) int {
		_, info, err := svc.ListTransactions(ctx, f)
		is.NoErr(err)
		return info.TotalCount
	}
	is.Equal(count(TransactionFilter{HasWebhook: &yes}), 4)
	is.Equal(count(TransactionFilter{HasWebhook: &no}), 3)
	withOld := want[0].Got[1] // E...0003, to the QR code: one entry
	is.Equal(len(withOld.WebhookSent), 1)
	entry := WebhookSent{Event: "OPENPIX:TRANSACTION_RECEIVED", Status: WebhookSentSuccess, Time: time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC), IsRetry: true}
	for _, e2e := range []string{unaudited, withOld.EndToEndID} {
		is.NoErr(svc.update(ctx, func(t *txn) error { return t.appendWebhookSent(e2e, entry) }))
	}
	x, err := svc.GetTransaction(ctx, withOld.EndToEndID)
	is.NoErr(err)
	is.Equal(x.WebhookSent, append(withOld.WebhookSent, entry))
	x, err = svc.GetTransaction(ctx, unaudited)
	is.NoErr(err)
	is.Equal(x.WebhookSent, []WebhookSent{entry})
	is.Equal(count(TransactionFilter{HasWebhook: &yes}), 5)
	is.Equal(count(TransactionFilter{HasWebhook: &no}), 2)
	is.Equal(count(TransactionFilter{HasWebhook: &no, Type: TransactionPayment}), 1)
	rep, err := svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK())
}

// companiesIn are the ids of the companies in the store.
func companiesIn(t *testing.T, tx store.Tx) []string {
	t.Helper()
	page, err := tx.List(collCompanies, systemSpace, store.Query{Index: indexAll, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range page.Records {
		ids = append(ids, r.ID)
	}
	return ids
}

func gunzipped(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openGzipped opens, as a bbolt store closed when t ends, a copy of the gzipped file
// name (a file written by an earlier version, in testdata).
func openGzipped(t *testing.T, name string) *bolt.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "payments.db")
	if err := os.WriteFile(path, gunzipped(t, name), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

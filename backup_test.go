package payments_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
)

// TestService_Backup takes snapshots while goroutines pay charges, refund them and
// transfer between accounts, restores each, and audits the copy: a snapshot is one
// committed state, so its ledger balances and its books agree with the journal.
func TestService_Backup(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		restore := restorer(e.store)
		if restore == nil {
			err := e.svc.Backup(ctx, io.Discard)
			is.Equal(payments.ErrorCode(err), payments.ENOTIMPLEMENTED) // a store without online backup says so
			return
		}
		def, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		is.NoErr(e.svc.FundAccountForTest(ctx, def.AccountID, 1_000_000))
		mustAccount(t, e.svc, "caixa@loja.example.com", 0)

		const workers = 8
		var ops atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if err := moveMoney(e, fmt.Sprintf("w%d-%d", w, i)); err != nil {
						t.Error(err)
						return
					}
					ops.Add(1)
				}
			})
		}
		var snaps [][]byte
		for len(snaps) < 3 && !t.Failed() { // a failed worker stops the load
			if ops.Load() < int64(10*(len(snaps)+1)) {
				runtime.Gosched() // let the load get going between snapshots
				continue
			}
			var buf bytes.Buffer
			is.NoErr(e.svc.Backup(ctx, &buf)) // while the load runs
			snaps = append(snaps, buf.Bytes())
		}
		close(stop)
		wg.Wait()

		for i, snap := range snaps {
			copySvc, err := payments.New(restore(t, snap), payments.Options{Clock: e.clock})
			is.NoErr(err)
			report, err := copySvc.Audit(ctx)
			is.NoErr(err)
			is.True(report.OK()) // the restored ledger audits clean
			if !report.OK() {
				t.Logf("snapshot %d: %v", i, report.Problems)
			}
			_, page, err := copySvc.ListCharges(ctx, payments.ChargeFilter{ListParams: payments.ListParams{Limit: 1}})
			is.NoErr(err)
			is.True(page.TotalCount >= 10*(i+1)) // the copy holds what was acknowledged before it began
		}
		live, err := e.svc.Audit(ctx)
		is.NoErr(err)
		is.True(live.OK()) // and so does the live one
	})
}

// moveMoney pays a new charge, refunds part of the Pix, and moves money between the
// company's accounts: three balanced movements, each in its own transaction.
func moveMoney(e env, id string) error {
	c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-" + id, Value: 1000})
	if err != nil {
		return err
	}
	x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, TxID: c.Identifier[:25]})
	if err != nil {
		return err
	}
	if _, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "refund-" + id, Value: 300}); err != nil {
		return err
	}
	_, err = e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 50, FromPixKey: companyKey, ToPixKey: "caixa@loja.example.com", CorrelationID: "transfer-" + id})
	return err
}

// restorer opens a snapshot of st's kind as a new store; nil for a store without backup.
func restorer(st store.Store) func(t *testing.T, snap []byte) store.Store {
	switch st.(type) {
	case *bolt.Store:
		return func(t *testing.T, snap []byte) store.Store {
			path := filepath.Join(t.TempDir(), "restored.db")
			if err := os.WriteFile(path, snap, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := bolt.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	case *memory.Store:
		return func(t *testing.T, snap []byte) store.Store {
			s, err := memory.Restore(bytes.NewReader(snap))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	return nil
}

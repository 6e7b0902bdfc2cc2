package payments

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// TestMigrateOrders: a refund left IN_PROCESSING by a version without the order machine
// (a hold, no order) gets its order when the database is opened, and the pass settles it.
func TestMigrateOrders(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := memory.New()
	clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	opts := Options{Clock: clock, Rail: NewSandboxRail(clock, time.Minute)}
	svc, err := New(st, opts)
	is.NoErr(err)
	acct := defaultAccountID(t, svc)
	is.NoErr(svc.FundAccountForTest(ctx, acct, 5000))
	var x Transaction
	x, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200000000001", Value: 5000})
	is.NoErr(err)
	r, err := svc.CreateRefund(ctx, CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "old", Value: 1000})
	is.NoErr(err)
	// Make it what the previous version left: no order, no queue entry, no migration marker.
	is.NoErr(st.Update(ctx, func(tx store.Tx) error {
		if err := tx.Delete(collOrders, svc.company, r.RefundID); err != nil {
			return err
		}
		if err := tx.Delete(collOrderQueue, systemSpace, queueID(svc.company, r.RefundID)); err != nil {
			return err
		}
		return tx.Delete(collMigrations, systemSpace, migrationOrders1)
	}))
	clock.Advance(time.Minute)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(refundStatusOf(t, svc, "old"), RefundInProcessing) // no order: the pass cannot see it

	svc, err = New(st, opts) // open again: the migration runs
	is.NoErr(err)
	is.NoErr(svc.RunDue(ctx))
	is.Equal(refundStatusOf(t, svc, "old"), RefundConfirmed) // adopted and settled
	auditOK(t, svc)
	n, err := svc.adoptRefunds(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // once
}

func refundStatusOf(t *testing.T, svc *Service, id string) RefundStatus {
	t.Helper()
	r, err := svc.GetRefund(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

// TestHold_Subaccount: a subaccount's holds live in its own blocked book, resolve like an
// account's, and the audit checks that book against them.
func TestHold_Subaccount(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		ctx := context.Background()
		_, _, err := e.svc.CreateSubaccount(ctx, CreateSubaccountParams{PixKey: "s@example.com", Name: "S"})
		is.NoErr(err)
		is.NoErr(e.svc.FundSubaccountForTest(ctx, "s@example.com", 1000))
		src := subaccountSource("s@example.com")
		holdOn := func(v int64, ref string) error {
			return e.svc.update(ctx, func(t *txn) error { _, err := t.holdOn(src, v, "test.hold", ref); return err })
		}
		is.NoErr(holdOn(600, "w1"))
		is.Equal(ErrorCode(holdOn(401, "w2")), EPRECONDITION) // only 400 left to hold
		is.Equal(bookBalance(t, e.svc, subaccountBlockedBook("s@example.com")), int64(600))
		sa, err := e.svc.GetSubaccount(ctx, "s@example.com")
		is.NoErr(err)
		is.Equal(sa.Balance, int64(400)) // what it can spend
		auditOK(t, e.svc)
		err = e.svc.update(ctx, func(t *txn) error {
			_, err := t.resolveHold(src, "test.settle", "w1", Posting{Book: bookPixNetwork, Amount: 500}, Posting{Book: src.available(), Amount: 100})
			return err
		})
		is.NoErr(err)
		is.Equal(bookBalance(t, e.svc, subaccountBlockedBook("s@example.com")), int64(0)) // resolved in one entry
		auditOK(t, e.svc)
		is.NoErr(holdOn(100, "w3"))
		corrupt(t, e, collHolds, "w3", func(h *hold) []store.Index { h.Remaining = 50; return h.indexes() })
		rep, err := e.svc.Audit(ctx)
		is.NoErr(err)
		is.Equal(rep.Problems, []string{"book subaccount:s@example.com:blocked: balance 100, open holds 50"}) // checked like an account's
	})
}

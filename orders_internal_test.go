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

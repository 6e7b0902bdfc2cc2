package payments_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestService_Concurrency runs 32 goroutines that receive Pix, resubmit the same ones, and
// refund them with shared correlationIDs, then drain the account with refunds it cannot
// all afford. Effects happen exactly once, the account is never overdrawn, and the ledger
// audits clean.
func TestService_Concurrency(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		const goroutines, pixes, perGoroutine = 32, 100, 20
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
		is.NoErr(err)
		e2e := func(i int) string { return fmt.Sprintf("E9999999920261122120000000%05d", i) }

		run := func(fn func(g int) error) {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := fn(g); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}

		// Phase 1: receipts, each endToEndId sent by several goroutines, and a refund of 100
		// per Pix, each correlationID sent by several goroutines.
		run(func(g int) error {
			for j := range perGoroutine {
				i := (g*7 + j) % pixes
				if _, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e(i), Value: 1000, TxID: q.Identifier}); err != nil {
					return err
				}
				_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: e2e(i), CorrelationID: fmt.Sprintf("r-%d", i), Value: 100})
				if err != nil {
					return err
				}
			}
			return nil
		})
		_, page, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionPayment})
		is.NoErr(err)
		is.Equal(page.TotalCount, pixes) // one transaction per endToEndId
		_, page, err = e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionRefund})
		is.NoErr(err)
		is.Equal(page.TotalCount, pixes) // and one per refund
		_, page, err = e.svc.ListRefunds(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, pixes) // one refund per correlationID
		want := int64(pixes * (1000 - 50 - 100))
		is.Equal(balance(t, e), payments.Balance{Total: want, Available: want}) // every effect exactly once
		audit(t, e.svc)

		// Phase 2: a large Pix that goes to a subaccount, so the company account holds only
		// `want`; 32 goroutines each try to refund 5000 of it.
		_, _, err = e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "sub@example.com", Name: "Sub"})
		is.NoErr(err)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "big", Value: 1_000_000, Subaccount: "sub@example.com"})
		big := pay(t, e, c)
		var mu sync.Mutex
		ok, refused := 0, 0
		run(func(g int) error {
			_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: big.EndToEndID, CorrelationID: fmt.Sprintf("big-%d", g), Value: 5000})
			mu.Lock()
			defer mu.Unlock()
			switch payments.ErrorCode(err) {
			case "":
				ok++
			case payments.EPRECONDITION:
				refused++
			default:
				return err
			}
			return nil
		})
		is.Equal(ok, int(want/5000))     // exactly as many as the balance affords
		is.Equal(refused, goroutines-ok) // the rest refused
		b := balance(t, e)
		is.True(b.Available >= 0) // never overdrawn
		is.Equal(b.Total, want-int64(ok)*5000)
		audit(t, e.svc)
	})
}

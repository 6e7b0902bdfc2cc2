package payments_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestService_ConcurrentMoves runs 64 goroutines that debit and credit subaccounts and
// transfer between accounts and between subaccounts, all against one company account,
// with correlationIDs shared between goroutines; then as many again that try to drain
// them. Each correlationID moves money once, nothing is ever overdrawn, money is neither
// made nor lost, and the ledger audits clean.
func TestService_ConcurrentMoves(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		const goroutines, shared = 64, 16 // each shared correlationID is sent by 4 goroutines
		def, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		is.NoErr(e.svc.FundAccountForTest(ctx, def.AccountID, 100_000))
		caixa := mustAccount(t, e.svc, "caixa@loja.example.com", 0)
		mustSubaccount(t, e.svc, "s1@example.com", 1000)
		mustSubaccount(t, e.svc, "s2@example.com", 0)

		run := func(fn func(g int) error) {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for g := range goroutines {
				wg.Go(func() {
					if err := fn(g); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}
		// state: default account, caixa (available), s1, s2.
		state := func() []int64 {
			t.Helper()
			out := available(t, e.svc, def.AccountID, caixa.AccountID)
			for _, k := range []string{"s1@example.com", "s2@example.com"} {
				sa, err := e.svc.GetSubaccount(ctx, k)
				is.NoErr(err)
				out = append(out, sa.Balance)
			}
			return out
		}

		// Phase 1: every move affordable, so the result is exact.
		run(func(g int) error {
			if _, err := e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 100,
				FromPixKey: companyKey, ToPixKey: "caixa@loja.example.com", CorrelationID: fmt.Sprintf("ab-%d", g%shared)}); err != nil {
				return err
			}
			if _, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 10,
				FromPixKey: "s1@example.com", ToPixKey: "s2@example.com", CorrelationID: fmt.Sprintf("ss-%d", g%shared)}); err != nil {
				return err
			}
			if _, err := e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s1@example.com", Value: 1}); err != nil {
				return err
			}
			if _, err := e.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s2@example.com", Value: 2}); err != nil {
				return err
			}
			_, err := e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s1@example.com", Value: 3, CorrelationID: fmt.Sprintf("d-%d", g%shared)})
			return err
		})
		is.Equal(state(), []int64{
			100_000 - shared*100 + goroutines*1 - goroutines*2 + shared*3, // each shared correlationID once
			shared * 100,
			1000 - shared*10 - goroutines*1 - shared*3,
			shared*10 + goroutines*2,
		})
		audit(t, e.svc)

		// Phase 2: every goroutine tries to drain s1, caixa and the default account at once.
		var mu sync.Mutex
		debits, transfers, credits := 0, 0, 0
		count := func(n *int, err error) error {
			mu.Lock()
			defer mu.Unlock()
			switch payments.ErrorCode(err) {
			case "":
				*n++
			case payments.EPRECONDITION: // refused: not enough balance
			default:
				return err
			}
			return nil
		}
		before := state()
		run(func(g int) error {
			_, err := e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s1@example.com", Value: 100})
			if err := count(&debits, err); err != nil {
				return err
			}
			_, err = e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 300,
				FromPixKey: "caixa@loja.example.com", ToPixKey: companyKey, CorrelationID: fmt.Sprintf("ba-%d", g)})
			if err := count(&transfers, err); err != nil {
				return err
			}
			_, err = e.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s2@example.com", Value: 10_000, CorrelationID: fmt.Sprintf("c-%d", g)})
			return count(&credits, err)
		})
		is.Equal(int64(debits), before[2]/100)    // s1 only loses: exactly what it affords
		is.Equal(int64(transfers), before[1]/300) // caixa only loses: exactly what it affords
		after := state()
		for _, b := range after {
			is.True(b >= 0) // never overdrawn
		}
		is.Equal(after[0], before[0]+int64(debits)*100+int64(transfers)*300-int64(credits)*10_000)
		is.True(after[0] < 10_000)                                                             // the default account was drained as far as it could be
		is.Equal(after[0]+after[1]+after[2]+after[3], before[0]+before[1]+before[2]+before[3]) // no money made or lost
		audit(t, e.svc)
	})
}

package payments_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
)

// flakyRail is the sandbox bank unreachable now and then: Send and Status fail at random
// with rate, which the test can set to 0 (the bank back).
type flakyRail struct {
	inner *payments.SandboxRail
	mu    sync.Mutex
	rng   *rand.Rand
	rate  float64
}

var errUnreachable = errors.New("bank unreachable")

func (r *flakyRail) fails() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Float64() < r.rate
}

func (r *flakyRail) heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rate = 0
}

func (r *flakyRail) Send(ctx context.Context, o payments.PixOrder) (payments.Settlement, error) {
	if r.fails() {
		return payments.Settlement{}, errUnreachable
	}
	return r.inner.Send(ctx, o)
}

func (r *flakyRail) Status(ctx context.Context, o payments.PixOrder) (payments.Settlement, error) {
	if r.fails() {
		return payments.Settlement{}, errUnreachable
	}
	return r.inner.Status(ctx, o)
}

func (r *flakyRail) ResolveKey(ctx context.Context, key string, t brcode.KeyType) (payments.KeyOwner, error) {
	return r.inner.ResolveKey(ctx, key, t)
}

// TestMoneyOut_FlakyBank sends money out every way at once (refunds, payments approved
// and auto-approved, account and subaccount withdrawals, subaccount debits and credits),
// 40 operations over 20 correlationIDs that collide, some to the sandbox's failing key or
// value, to a bank that fails three calls in ten, with the clock moving between waves.
// Once the bank is back and the clock has passed every order's lease, nothing is left in
// between: the ledger audits clean, no money is still held, no subaccount is negative, no
// refund, payment or withdrawal is still pending, and each Pix's refunded value is the sum
// of its confirmed refunds and at most its value. Four seeds, on memory and on bolt.
func TestMoneyOut_FlakyBank(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) store.Store{
		"memory": func(*testing.T) store.Store { return memory.New() },
		"bolt": func(t *testing.T) store.Store {
			st, err := bolt.Open(filepath.Join(t.TempDir(), "payments.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				moneyOutFlaky(t, open(t), seed)
			})
		}
	}
}

func moneyOutFlaky(t *testing.T, st store.Store, seed uint64) {
	is := is.New(t)
	clock := payments.NewManualClock(t0)
	rail := &flakyRail{inner: payments.NewSandboxRail(clock, time.Minute), rng: rand.New(rand.NewPCG(seed, 7)), rate: 0.3}
	svc, err := payments.New(st, payments.Options{Clock: clock, Rail: rail, SendTimeout: 5 * time.Second})
	is.NoErr(err)
	e := env{svc: svc, clock: clock, store: st}
	fund(t, e, 200000)
	keys := []string{"s0@example.com", "s1@example.com"}
	for _, k := range keys {
		mustSubaccount(t, svc, k, 20000)
	}
	var paid []payments.Transaction
	for i := range 4 {
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: 10000})
		paid = append(paid, pay(t, e, c))
	}
	acct, err := svc.DefaultAccount(ctx)
	is.NoErr(err)

	rng := rand.New(rand.NewPCG(seed, 99))
	dests := []string{"ana@example.com", payments.SandboxKeyBankError}
	var wg sync.WaitGroup
	for g := range 40 {
		op, value := rng.IntN(6), int64(rng.IntN(4000)+1)
		if rng.IntN(8) == 0 {
			value = payments.SandboxValueNotEnoughBalance
		}
		x, corr := paid[rng.IntN(len(paid))], fmt.Sprint("k", rng.IntN(20))
		dest, key := dests[rng.IntN(len(dests))], keys[rng.IntN(len(keys))]
		wg.Go(func() {
			var err error
			switch op {
			case 0:
				_, err = svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: corr, Value: value})
			case 1:
				_, err = svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: corr, Value: value, DestinationAlias: dest, AutoApprove: g%2 == 0})
				if err == nil || payments.ErrorCode(err) == payments.ECONFLICT {
					_, err = svc.ApprovePayment(ctx, corr)
				}
			case 2:
				_, err = svc.WithdrawFromAccount(ctx, acct.AccountID, value, payments.WithdrawOptions{CorrelationID: corr})
			case 3:
				_, err = svc.WithdrawFromSubaccount(ctx, key, value, payments.WithdrawOptions{CorrelationID: "s" + corr})
			case 4:
				_, err = svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: key, Value: value})
			case 5:
				_, err = svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: key, Value: value})
			}
			if payments.ErrorCode(err) == payments.EINTERNAL {
				t.Errorf("operation %d (%d): %v", g, op, err) // refusals are fine; internal errors are not
			}
		})
		if g%10 == 9 {
			wg.Wait()
			_, err := svc.AdvanceClock(ctx, clock, 30*time.Second)
			if err != nil && !errors.Is(err, payments.ErrDueFailed) { // a resend that met the bank down is retried later
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	rail.heal()
	_, err = svc.AdvanceClock(ctx, clock, 2*time.Hour)
	is.NoErr(err) // the bank back: every order settles

	audit(t, svc)
	is.Equal(balance(t, e).Blocked, int64(0)) // nothing still held
	for _, k := range keys {
		sa, err := svc.GetSubaccount(ctx, k)
		is.NoErr(err)
		is.True(sa.Balance >= 0) // no subaccount overdrawn
	}
	refunds, _, err := svc.ListRefunds(ctx, payments.ListParams{Limit: payments.MaxLimit})
	is.NoErr(err)
	confirmed := map[string]int64{}
	for _, r := range refunds {
		is.True(r.Status != payments.RefundInProcessing) // every refund settled one way or the other
		if r.Status == payments.RefundConfirmed {
			confirmed[r.TransactionEndToEndID] += r.Value
		}
	}
	for _, x := range paid {
		got, err := svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(got.RefundedValue, confirmed[x.EndToEndID]) // refunded once per confirmed refund
		is.True(got.RefundedValue <= got.Value)              // never more than was paid
	}
	ps, _, err := svc.ListPayments(ctx, payments.PaymentFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	is.NoErr(err)
	for _, p := range ps {
		is.True(p.Status != payments.PaymentApproved) // none left on its way
	}
	ws, _, err := svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionWithdraw, ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	is.NoErr(err)
	for _, w := range ws {
		is.True(w.Status != string(payments.WithdrawalCreated)) // every withdrawal settled one way or the other
	}
}

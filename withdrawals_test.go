package payments_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

func TestService_WithdrawFromAccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a := fund(t, e, 100000)
		policy := payments.DefaultWithdrawalPolicy()
		small, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, 1000)
		is.NoErr(err)
		is.Equal(small.Withdrawal.Fee, policy.Fee)                          // below MinFree: the fee
		is.Equal(small.Withdrawal.Status, payments.WithdrawalConfirmed)     // the sandbox settled it at once
		is.Equal(small.Withdrawal.DestinationAlias, "pix@loja.example.com") // to the company's own key
		is.Equal(small.Account.Balance.Total, int64(100000-1000-policy.Fee))
		is.Equal(small.Account.PixKey, "pix@loja.example.com") // the account as GetAccount shows it
		is.Equal(small.Transaction.Type, payments.TransactionWithdraw)
		is.Equal(small.Transaction.Status, "CONFIRMED")
		is.Equal(len(small.Transaction.EndToEndID), 32)                               // the Pix's endToEndId
		is.Equal(small.Transaction.Withdraw.EndToEndID, small.Transaction.EndToEndID) // the withdraw object
		is.Equal(small.Transaction.Withdraw.Value, int64(1000))
		is.Equal(small.Transaction.Fee, policy.Fee) // the fee taken, as the withdrawal says
		is.True(small.Transaction.Raw == nil)       // no bank callback reports a withdrawal

		big, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, policy.MinFree)
		is.NoErr(err)
		is.Equal(big.Withdrawal.Fee, int64(0)) // from MinFree up: free

		for _, id := range []string{small.Withdrawal.ID, small.Transaction.EndToEndID} {
			xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Withdrawal: id})
			is.NoErr(err)
			is.Equal(len(xs), 1) // the withdrawal filter, by id and by endToEndId
			is.Equal(xs[0].TransactionID, small.Transaction.TransactionID)
		}
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionWithdraw})
		is.NoErr(err)
		is.Equal(len(xs), 2) // the type filter
		got, err := e.svc.GetTransaction(ctx, small.Transaction.EndToEndID)
		is.NoErr(err)
		is.Equal(got.Withdraw.ID, small.Withdrawal.ID)
		audit(t, e.svc)
	})
}

func TestService_WithdrawFromAccount_Policy(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, memory.New())
	_, err := e.svc.UpdateCompany(ctx, payments.CompanyUpdate{WithdrawalPolicy: &payments.WithdrawalPolicy{MinFree: 100, Fee: 7}})
	is.NoErr(err)
	a := fund(t, e, 1000)
	w, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, 99)
	is.NoErr(err)
	is.Equal(w.Withdrawal.Fee, int64(7)) // the company's policy
	_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{WithdrawalPolicy: &payments.WithdrawalPolicy{MinFree: -1}})
	is.Equal(payments.ErrorField(err), "withdrawalPolicy")
	audit(t, e.svc)
}

// TestService_WithdrawFromAccount_Triggers: a withdrawal the bank fails returns its value
// and its fee.
func TestService_WithdrawFromAccount_Triggers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key string
		value     int64
		reason    string
	}{
		{"BankErrorKey", payments.SandboxKeyBankError, 1000, payments.ReasonBankError},
		{"NotFoundKey", payments.SandboxKeyNotFound, 1000, payments.ReasonInvalidPixKey},
		{"Value666", "pix@loja.example.com", 666, payments.ReasonNotEnoughBalance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t, memory.New())
			_, err := e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &tc.key})
			is.NoErr(err)
			a := fund(t, e, 5000)
			w, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, tc.value)
			is.NoErr(err)
			is.Equal(w.Withdrawal.Status, payments.WithdrawalFailed) // the bank failed it
			is.Equal(w.Withdrawal.Reason, tc.reason)
			is.Equal(w.Transaction.Status, "FAILED")
			is.Equal(w.Account.Balance, payments.Balance{Total: 5000, Available: 5000}) // value and fee returned
			audit(t, e.svc)
		})
	}
}

func TestService_WithdrawFromAccount_BadInput(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a := fund(t, e, 1000)
		for _, v := range []int64{0, -1, payments.MaxChargeValue + 1} {
			_, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, v)
			is.Equal(payments.ErrorField(err), "value") // not a positive amount
		}
		_, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, 1000)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // 1000 plus the fee is more than available
		_, err = e.svc.WithdrawFromAccount(ctx, "nope", 10)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		is.Equal(balance(t, e), payments.Balance{Total: 1000, Available: 1000}) // nothing moved
		audit(t, e.svc)
	})
}

func TestService_WithdrawFromSubaccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		mustSubaccount(t, e.svc, "joao@example.com", 3000)
		w, err := e.svc.WithdrawFromSubaccount(ctx, "joao@example.com", 1000)
		is.NoErr(err)
		is.Equal(w.Status, payments.WithdrawalCreated) // as created
		is.Equal(w.Value, int64(1000))
		is.Equal(w.DestinationAlias, "joao@example.com") // to its own key
		is.True(w.CorrelationID != "")
		sa, err := e.svc.GetSubaccount(ctx, "joao@example.com")
		is.NoErr(err)
		is.Equal(sa.Balance, int64(2000)) // no fee for subaccounts
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Withdrawal: w.ID})
		is.NoErr(err)
		is.Equal(len(xs), 1)
		is.Equal(xs[0].Status, "CONFIRMED") // settled

		all, err := e.svc.WithdrawFromSubaccount(ctx, "joao@example.com", 0)
		is.NoErr(err)
		is.Equal(all.Value, int64(2000)) // 0: the whole balance
		sa, err = e.svc.GetSubaccount(ctx, "joao@example.com")
		is.NoErr(err)
		is.Equal(sa.Balance, int64(0))

		_, err = e.svc.WithdrawFromSubaccount(ctx, "joao@example.com", 0)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // empty
		mustSubaccount(t, e.svc, "bia@example.com", 100)
		_, err = e.svc.WithdrawFromSubaccount(ctx, "bia@example.com", 101)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // above its balance
		_, err = e.svc.WithdrawFromSubaccount(ctx, "bia@example.com", -1)
		is.Equal(payments.ErrorField(err), "value")
		_, err = e.svc.WithdrawFromSubaccount(ctx, "nobody@example.com", 1)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		_, err = e.svc.WithdrawFromSubaccount(ctx, "not a key", 1)
		is.Equal(payments.ErrorField(err), "pixKey")
		audit(t, e.svc)
	})
}

// TestService_WithdrawFromSubaccount_Triggers: a subaccount whose key fails at the bank
// gets its money back, and the held part is visible while the bank has not answered.
// TestService_WithdrawFromSubaccount_LongName: the comment a subaccount withdrawal sends
// the bank ("Saque da subconta <name>") is cut to MaxComment, the limit of every other
// comment: a name may have 200 characters. Before, it went out whole.
func TestService_WithdrawFromSubaccount_LongName(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	name := strings.Repeat("Loja Parceira ", 14) + "Ação" // 200 characters: a valid name, not all ASCII
	sa, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "parceira@example.com", Name: name})
	is.NoErr(err)
	is.NoErr(e.svc.FundSubaccountForTest(ctx, sa.PixKey, 1000))
	w, err := e.svc.WithdrawFromSubaccount(ctx, sa.PixKey, 500)
	is.NoErr(err)
	x, err := e.svc.GetTransaction(ctx, w.TransactionID)
	is.NoErr(err)
	is.Equal(utf8.RuneCountInString(w.Comment), payments.MaxComment) // cut, as sent to the bank
	is.True(strings.HasPrefix(name, strings.TrimPrefix(w.Comment, "Saque da subconta ")))
	is.Equal(x.InfoPagador, w.Comment) // and its transaction's
}

func TestService_WithdrawFromSubaccount_Triggers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, time.Minute)})
	is.NoErr(err)
	for _, key := range []string{payments.SandboxKeyBankError, payments.SandboxKeyNotFound, "ok@example.com"} {
		mustSubaccount(t, svc, key, 1000)
	}
	_, err = svc.WithdrawFromSubaccount(ctx, payments.SandboxKeyBankError, 0)
	is.NoErr(err)
	nf, err := svc.WithdrawFromSubaccount(ctx, payments.SandboxKeyNotFound, 0)
	is.NoErr(err)
	is.Equal(nf.Status, payments.WithdrawalCreated) // as created; the bank refuses it at once
	sa, err := svc.GetSubaccount(ctx, payments.SandboxKeyNotFound)
	is.NoErr(err)
	is.Equal(sa.Balance, int64(1000)) // INVALID_PIX_KEY: nothing sent, all of it back at once
	_, err = svc.WithdrawFromSubaccount(ctx, "ok@example.com", 666)
	is.NoErr(err)
	sa, err = svc.GetSubaccount(ctx, "ok@example.com")
	is.NoErr(err)
	is.Equal(sa.Balance, int64(334)) // held while the bank has not answered
	audit(t, svc)
	clock.Advance(time.Minute)
	is.NoErr(svc.RunDue(ctx))
	for _, key := range []string{payments.SandboxKeyBankError, "ok@example.com"} {
		sa, err := svc.GetSubaccount(ctx, key)
		is.NoErr(err)
		is.Equal(sa.Balance, int64(1000)) // failed: all of it back
	}
	xs, _, err := svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionWithdraw})
	is.NoErr(err)
	is.Equal(len(xs), 3)
	for _, x := range xs {
		is.Equal(x.Status, "FAILED") // every trigger
	}
	audit(t, svc)
}

// TestService_OutgoingConcurrency: 64 goroutines approve payments (some the same), withdraw
// from the account and its subaccounts, debit and credit the subaccounts, and transfer
// between subaccounts and between the company's two accounts (some correlationIDs shared),
// all against one account. Nothing is ever overdrawn, each correlationID pays or moves
// once, every centavo is accounted for, and the audit is clean.
func TestService_OutgoingConcurrency(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a := fund(t, e, 50000)
		second, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa2@loja.example.com"})
		is.NoErr(err)
		keys := []string{"s0@example.com", "s1@example.com", "s2@example.com", "s3@example.com"}
		for _, k := range keys {
			mustSubaccount(t, e.svc, k, 5000)
		}
		for i := range 16 {
			mustPayment(t, e.svc, fmt.Sprint("p", i), 2000, "ana@example.com")
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		paid := map[string]int{}
		transferred := map[string]bool{} // correlationIDs that moved money between the accounts
		var withdrawn, debited, credited int64
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				switch g % 7 {
				case 0:
					corr := fmt.Sprint("p", g%16)
					if _, err = e.svc.ApprovePayment(ctx, corr); err == nil {
						mu.Lock()
						paid[corr]++
						mu.Unlock()
					}
				case 1:
					var w payments.AccountWithdrawal
					if w, err = e.svc.WithdrawFromAccount(ctx, a.AccountID, 3000); err == nil {
						mu.Lock()
						withdrawn += w.Withdrawal.Value + w.Withdrawal.Fee
						mu.Unlock()
					}
				case 2:
					_, err = e.svc.WithdrawFromSubaccount(ctx, keys[g%len(keys)], 1500)
				case 3:
					_, err = e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 700,
						FromPixKey: keys[g%len(keys)], ToPixKey: keys[(g+1)%len(keys)]})
				case 4:
					if _, err = e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: keys[g%len(keys)], Value: 900}); err == nil {
						mu.Lock()
						debited += 900
						mu.Unlock()
					}
				case 5:
					if _, err = e.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: keys[g%len(keys)], Value: 400}); err == nil {
						mu.Lock()
						credited += 400
						mu.Unlock()
					}
				case 6:
					corr := fmt.Sprint("t", g%3) // three correlationIDs, each sent by three goroutines
					if _, err = e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 1000, CorrelationID: corr,
						FromPixKey: "pix@loja.example.com", ToPixKey: second.PixKey}); err == nil {
						mu.Lock()
						transferred[corr] = true
						mu.Unlock()
					}
				}
				if err != nil && payments.ErrorCode(err) != payments.EPRECONDITION {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for corr, n := range paid {
			is.Equal(n, 1) // each correlationID pays once
			is.Equal(paymentStatus(t, e.svc, corr), payments.PaymentConfirmed)
		}
		is.True(len(paid) > 0 && debited > 0) // the race did move money of each kind it could
		moved := int64(len(transferred)) * 1000
		b := balance(t, e)
		is.True(b.Available >= 0 && b.Blocked == 0)                                     // never overdrawn; nothing left held
		is.Equal(b.Total, 50000-int64(len(paid))*2000-withdrawn+debited-credited-moved) // every centavo of the account accounted for
		s2, err := e.svc.GetAccount(ctx, second.AccountID)
		is.NoErr(err)
		is.Equal(s2.Balance.Total, moved) // each transfer correlationID moved its value once
		var subs int64
		for _, k := range keys {
			sa, err := e.svc.GetSubaccount(ctx, k)
			is.NoErr(err)
			is.True(sa.Balance >= 0) // never overdrawn
			subs += sa.Balance
		}
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionWithdraw, ListParams: payments.ListParams{Limit: 1000}})
		is.NoErr(err)
		var subOut int64
		for _, x := range xs {
			if x.PixKey != "pix@loja.example.com" {
				subOut += x.Value
			}
		}
		is.Equal(subs+subOut, int64(len(keys)*5000)-debited+credited) // subaccount money left only by withdrawals and debits
		audit(t, e.svc)
	})
}

// TestService_Withdraw_Retried: a withdrawal asked again with its correlationID is the
// one made the first time, and moves nothing more, even when the balance would no longer
// cover it; the same correlationID for another value or source is a conflict that moves
// nothing.
func TestService_Withdraw_Retried(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a := fund(t, e, 100000)
		once := payments.WithdrawOptions{CorrelationID: "saque-1"}
		first, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, 90000, once)
		is.NoErr(err)
		is.Equal(first.Withdrawal.CorrelationID, "saque-1")
		again, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, 90000, once)
		is.NoErr(err)
		is.Equal(again.Withdrawal.ID, first.Withdrawal.ID) // the same withdrawal
		is.Equal(again.Transaction.TransactionID, first.Transaction.TransactionID)
		is.Equal(again.Account.Balance.Total, int64(10000)) // taken once
		_, err = e.svc.WithdrawFromAccount(ctx, a.AccountID, 5000, once)
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another value
		is.Equal(payments.ErrorField(err), "correlationID")
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionWithdraw})
		is.NoErr(err)
		is.Equal(len(xs), 1) // one WITHDRAW transaction

		mustSubaccount(t, e.svc, "joao@example.com", 3000)
		mustSubaccount(t, e.svc, "bia@example.com", 3000)
		sub := payments.WithdrawOptions{CorrelationID: "saque-sub"}
		w, err := e.svc.WithdrawFromSubaccount(ctx, "joao@example.com", 0, sub)
		is.NoErr(err)
		is.Equal(w.Value, int64(3000))
		for _, value := range []int64{0, 3000} {
			w2, err := e.svc.WithdrawFromSubaccount(ctx, "joao@example.com", value, sub)
			is.NoErr(err)
			is.Equal(w2.ID, w.ID) // the whole balance, asked again either way
		}
		_, err = e.svc.WithdrawFromSubaccount(ctx, "bia@example.com", 1000, sub)
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another subaccount
		_, err = e.svc.WithdrawFromAccount(ctx, a.AccountID, 1000, sub)
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // an account, not that subaccount
		sa, err := e.svc.GetSubaccount(ctx, "bia@example.com")
		is.NoErr(err)
		is.Equal(sa.Balance, int64(3000)) // the conflicts moved nothing

		_, err = e.svc.WithdrawFromAccount(ctx, a.AccountID, 1000, payments.WithdrawOptions{CorrelationID: strings.Repeat("x", payments.MaxCorrelationID+1)})
		is.Equal(payments.ErrorField(err), "correlationID")
		audit(t, e.svc)
	})
}

// TestService_Withdraw_RetriedConcurrently: the same withdrawal asked by many callers at
// once is made once.
func TestService_Withdraw_RetriedConcurrently(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a := fund(t, e, 100000)
		var wg sync.WaitGroup
		ids := make([]string, 16)
		for i := range ids {
			wg.Go(func() {
				w, err := e.svc.WithdrawFromAccount(ctx, a.AccountID, 10000, payments.WithdrawOptions{CorrelationID: "saque-c"})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = w.Withdrawal.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			is.Equal(id, ids[0]) // one withdrawal
		}
		acct, err := e.svc.GetAccount(ctx, a.AccountID)
		is.NoErr(err)
		is.Equal(acct.Balance.Total, int64(100000-10000-payments.DefaultWithdrawalPolicy().Fee)) // taken once, with its fee
		audit(t, e.svc)
	})
}

package payments_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// signed is a line's value with its direction: positive for a credit.
func signed(l payments.StatementLine) int64 {
	if l.Type == payments.StatementDebit {
		return -l.Value
	}
	return l.Value
}

// statementReader reads a page of one statement.
type statementReader func(f payments.StatementFilter) ([]payments.StatementLine, payments.PageInfo, error)

// wholeStatement reads every line of a statement, a page of MaxLimit.
func wholeStatement(t *testing.T, read statementReader) []payments.StatementLine {
	t.Helper()
	var all []payments.StatementLine
	for skip := 0; ; skip += payments.MaxLimit {
		lines, page, err := read(payments.StatementFilter{ListParams: payments.ListParams{Skip: skip, Limit: payments.MaxLimit}})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, lines...)
		if !page.HasNextPage {
			return all
		}
	}
}

// checkStatement checks that a statement reconciles with balance, the book's balance now:
// the newest line leaves it at balance, each line's balance is the older line's plus its
// signed value, and the oldest starts from zero (books open empty). It then checks that
// every paging and every date window the rng draws shows the same lines with the same
// balances as the whole statement.
func checkStatement(t *testing.T, rng *rand.Rand, read statementReader, balance int64) []payments.StatementLine {
	t.Helper()
	all := wholeStatement(t, read)
	if len(all) == 0 {
		if balance != 0 {
			t.Fatalf("no lines, balance %d", balance)
		}
		return all
	}
	if all[0].Balance != balance {
		t.Fatalf("newest line leaves the balance at %d, the book holds %d", all[0].Balance, balance)
	}
	for i, l := range all {
		before := int64(0)
		if i+1 < len(all) {
			before = all[i+1].Balance
		}
		if l.Balance-signed(l) != before {
			t.Fatalf("line %d (%s %s %d): balance %d, but the line before left %d", i, l.Kind, l.Type, l.Value, l.Balance, before)
		}
		if l.Value <= 0 || l.Description == "" || l.ID == "" || l.TransactionID == "" || l.OperationType == "" {
			t.Fatalf("line %d is incomplete: %+v", i, l)
		}
		if i > 0 && l.Time.After(all[i-1].Time) {
			t.Fatalf("line %d is newer than the line above it", i)
		}
	}
	for range 3 { // pages of a random size, read one after another, are the statement
		limit := 1 + rng.IntN(len(all)+2)
		var paged []payments.StatementLine
		for skip := 0; skip < len(all)+limit; skip += limit {
			lines, page, err := read(payments.StatementFilter{ListParams: payments.ListParams{Skip: skip, Limit: limit}})
			if err != nil {
				t.Fatal(err)
			}
			if page.TotalCount != len(all) {
				t.Fatalf("totalCount %d, %d lines", page.TotalCount, len(all))
			}
			paged = append(paged, lines...)
		}
		if !slices.Equal(paged, all) {
			t.Fatalf("pages of %d differ from the whole statement", limit)
		}
	}
	for range 5 { // a date window shows the lines of its times, with the same balances
		a, b := all[rng.IntN(len(all))].Time, all[rng.IntN(len(all))].Time
		if b.Before(a) {
			a, b = b, a
		}
		var want []payments.StatementLine
		for _, l := range all {
			if !l.Time.Before(a) && !l.Time.After(b) {
				want = append(want, l)
			}
		}
		skip := rng.IntN(len(want))
		lines, page, err := read(payments.StatementFilter{Start: a, End: b, ListParams: payments.ListParams{Skip: skip, Limit: 1 + rng.IntN(len(want))}})
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalCount != len(want) {
			t.Fatalf("window %s..%s: totalCount %d, want %d", a, b, page.TotalCount, len(want))
		}
		if !slices.Equal(lines, want[skip:skip+len(lines)]) || len(lines) == 0 {
			t.Fatalf("window %s..%s skip %d: %d lines differ from the whole statement's", a, b, skip, len(lines))
		}
	}
	return all
}

// TestService_StatementReconciles runs random money moves of every kind on every store
// (Pix received at the company and at subaccounts, refunds, payments, withdrawals of the
// account and of subaccounts, some failing at the bank, returned payouts, transfers
// between accounts and between subaccounts, subaccount debits and credits), moving the
// clock between them, and checks every statement against its balance (checkStatement).
func TestService_StatementReconciles(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		rng := rand.New(rand.NewPCG(29, 3))
		acct, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		other, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "outra@loja.example.com"})
		is.NoErr(err)
		subs := []string{"s1@example.com", "s2@example.com", payments.SandboxKeyBankError}
		for _, k := range subs {
			_, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: k, Name: k})
			is.NoErr(err)
		}
		var e2es []string
		var confirmed []string // withdrawals the bank confirmed, which may come back
		n := 0
		next := func() string { n++; return fmt.Sprintf("E99999999202611221200st%09d", n) }
		refused := func(op string, err error) {
			t.Helper()
			if c := payments.ErrorCode(err); err != nil && c != payments.EPRECONDITION {
				t.Fatalf("%s: %v", op, err) // only a short balance may refuse a move here
			}
		}
		for i := range 150 {
			if rng.IntN(4) == 0 {
				e.clock.Advance(time.Duration(1+rng.IntN(120)) * time.Minute)
			}
			v := int64(1 + rng.IntN(3000))
			sub := subs[rng.IntN(len(subs))]
			switch op := rng.IntN(11); op {
			case 0, 1: // a Pix at the company's key, or another account's
				p := payments.ReceivePixParams{EndToEndID: next(), Value: v + 2000}
				if op == 1 {
					p.PixKey = other.PixKey
				}
				x, err := e.svc.ReceivePix(ctx, p)
				is.NoErr(err)
				e2es = append(e2es, x.EndToEndID)
			case 2: // a charge paid, its value for a subaccount
				c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("c", i), Value: v, Subaccount: sub})
				is.NoErr(err)
				_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: next(), Value: v, TxID: c.Identifier})
				is.NoErr(err)
			case 3: // a refund, some refused by the bank
				if len(e2es) == 0 {
					continue
				}
				if rng.IntN(3) == 0 {
					v = payments.SandboxValueNotEnoughBalance
				}
				_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: e2es[rng.IntN(len(e2es))],
					CorrelationID: fmt.Sprint("r", i), Value: min(v, 2000)})
				refused("refund", err)
			case 4: // a payment, some to a key the bank fails
				dest := "ana@example.com"
				if rng.IntN(3) == 0 {
					dest = payments.SandboxKeyBankError
				}
				_, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: fmt.Sprint("p", i), Value: v,
					DestinationAlias: dest, AutoApprove: true})
				refused("payment", err)
			case 5: // a withdrawal of the account
				w, err := e.svc.WithdrawFromAccount(ctx, acct.AccountID, v)
				refused("account withdrawal", err)
				if err == nil {
					confirmed = append(confirmed, w.Withdrawal.ID)
				}
			case 6: // a withdrawal of a subaccount (the bank fails those of SandboxKeyBankError)
				w, err := e.svc.WithdrawFromSubaccount(ctx, sub, v)
				refused("subaccount withdrawal", err)
				if err == nil && sub != payments.SandboxKeyBankError {
					confirmed = append(confirmed, w.ID)
				}
			case 7: // a withdrawal comes back, in part
				if len(confirmed) == 0 {
					continue
				}
				_, _, err := e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: confirmed[rng.IntN(len(confirmed))],
					EndToEndID: fmt.Sprintf("D99999999202611221200st%09d", i), Value: 1})
				refused("payout return", err)
			case 8: // between the accounts, either way
				from, to := acct.PixKey, other.PixKey
				if rng.IntN(2) == 0 {
					from, to = to, from
				}
				_, err := e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: v, FromPixKey: from, ToPixKey: to,
					CorrelationID: fmt.Sprint("t", i)})
				refused("account transfer", err)
			case 9: // between subaccounts
				to := subs[(slices.Index(subs, sub)+1+rng.IntN(2))%len(subs)]
				_, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: v, FromPixKey: sub, ToPixKey: to})
				refused("subaccount transfer", err)
			case 10: // a subaccount debited or credited
				var err error
				if rng.IntN(2) == 0 {
					_, err = e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: sub, Value: v})
				} else {
					_, err = e.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: sub, Value: v})
				}
				refused("subaccount move", err)
			}
		}
		rep, err := e.svc.Audit(ctx)
		is.NoErr(err)
		is.True(rep.OK()) // the ledger the statements come from is sound

		kinds := map[string]bool{}
		for _, id := range []string{acct.AccountID, other.AccountID} {
			a, err := e.svc.GetAccount(ctx, id)
			is.NoErr(err)
			lines := checkStatement(t, rng, func(f payments.StatementFilter) ([]payments.StatementLine, payments.PageInfo, error) {
				return e.svc.Statement(ctx, id, f)
			}, a.Balance.Available)
			for _, l := range lines {
				kinds[l.Kind] = true
			}
		}
		for _, k := range subs {
			sa, err := e.svc.GetSubaccount(ctx, k)
			is.NoErr(err)
			lines := checkStatement(t, rng, func(f payments.StatementFilter) ([]payments.StatementLine, payments.PageInfo, error) {
				return e.svc.SubaccountStatement(ctx, k, f)
			}, sa.Balance)
			for _, l := range lines {
				kinds["sub:"+l.Kind] = true
			}
		}
		for _, k := range []string{"pix.received", "refund.hold", "refund.release", "payment.hold", "payment.release",
			"withdrawal.hold", "payout.return", "account.transfer", "subaccount.credit", "subaccount.debit",
			"sub:pix.received", "sub:withdrawal.hold", "sub:withdrawal.release", "sub:transfer", "sub:subaccount.credit",
			"sub:subaccount.debit"} {
			if !kinds[k] {
				t.Errorf("no %s line: the random moves did not reach every kind", k) // so that the check covered them
			}
		}
	})
}

// TestService_Statement reads the statements of a few known moves.
func TestService_Statement(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		acct, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200statement01", Value: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r1", Value: 1000})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 2000,
			DestinationAlias: payments.SandboxKeyBankError, AutoApprove: true}) // the bank fails it: the money comes back
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "vendedor@example.com", Name: "Vendedor"})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		if _, err := e.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "vendedor@example.com", Value: 3000}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		w, err := e.svc.WithdrawFromSubaccount(ctx, "vendedor@example.com", 500)
		if err != nil {
			t.Fatal(err)
		}
		after := e.clock.Now()

		t.Run("Account", func(t *testing.T) {
			is := is.New(t)
			a, err := e.svc.GetAccount(ctx, acct.AccountID)
			is.NoErr(err)
			lines, page, err := e.svc.Statement(ctx, "", payments.StatementFilter{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 5)
			is.Equal(len(lines), 5)
			type row struct {
				kind string
				typ  payments.StatementLineType
				val  int64
			}
			var got []row
			for _, l := range lines {
				got = append(got, row{l.Kind, l.Type, l.Value})
			}
			received := lines[4].Value // the Pix less the platform's fee
			is.True(received > 0 && received <= 10_000)
			is.Equal(got, []row{ // newest first; the refund's confirmation moves nothing available
				{"subaccount.credit", payments.StatementDebit, 3000},
				{"payment.release", payments.StatementCredit, 2000},
				{"payment.hold", payments.StatementDebit, 2000},
				{"refund.hold", payments.StatementDebit, 1000},
				{"pix.received", payments.StatementCredit, received},
			})
			is.Equal(lines[0].Balance, a.Balance.Available)          // the newest line leaves the available balance
			is.Equal(lines[4].Balance, received)                     // the oldest starts from nothing
			is.Equal(lines[0].Description, "Credit to a subaccount") // worded
			is.Equal(lines[3].Description, "Refund sent")
			is.Equal(lines[4].TransactionID, x.GlobalID) // a Pix's line names its transaction
			got2, err := e.svc.GetTransaction(ctx, lines[4].TransactionID)
			is.NoErr(err)
			is.Equal(got2.EndToEndID, x.EndToEndID) // which GetTransaction finds
			is.True(lines[4].Time.Equal(t0))

			one, _, err := e.svc.Statement(ctx, acct.AccountID, payments.StatementFilter{ListParams: payments.ListParams{Skip: 1, Limit: 2}})
			is.NoErr(err)
			is.Equal(one, lines[1:3]) // a page in the middle keeps its balances
			win, page, err := e.svc.Statement(ctx, "", payments.StatementFilter{Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour)})
			is.NoErr(err)
			is.Equal(page.TotalCount, 3)
			is.Equal(win, lines[1:4]) // from start to end, both included
			none, page, err := e.svc.Statement(ctx, "", payments.StatementFilter{Start: after.Add(time.Millisecond)})
			is.NoErr(err)
			is.Equal(len(none), 0) // nothing after the last move
			is.Equal(page.TotalCount, 0)
		})
		t.Run("Subaccount", func(t *testing.T) {
			is := is.New(t)
			lines, _, err := e.svc.SubaccountStatement(ctx, "VENDEDOR@example.com", payments.StatementFilter{}) // keys are canonical
			is.NoErr(err)
			is.Equal(len(lines), 2)
			is.Equal(lines[0].OperationType, payments.OperationWithdrawal)
			is.Equal(lines[0].Value, int64(500))
			is.Equal(lines[0].TransactionID, w.ID)
			is.Equal(lines[0].Balance, int64(2500)) // the withdrawal's confirmation moved nothing more
			is.Equal(lines[1].OperationType, payments.OperationCredit)
			is.Equal(lines[1].Description, "Credit from the company account")
			is.Equal(lines[1].Balance, int64(3000))
		})
		t.Run("ErrBadInput", func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				f     payments.StatementFilter
				field string
			}{
				{"EndBeforeStart", payments.StatementFilter{Start: t0, End: t0.Add(-time.Second)}, "end"},
				{"StartPastYear9999", payments.StatementFilter{Start: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "start"},
				{"Skip", payments.StatementFilter{ListParams: payments.ListParams{Skip: -1}}, "skip"},
				{"Limit", payments.StatementFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit + 1}}, "limit"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					is := is.New(t)
					_, _, err := e.svc.Statement(ctx, "", tc.f)
					is.Equal(payments.ErrorCode(err), payments.EINVALID)
					is.Equal(payments.ErrorField(err), tc.field) // names the field
					_, _, err = e.svc.SubaccountStatement(ctx, "vendedor@example.com", tc.f)
					is.Equal(payments.ErrorField(err), tc.field)
				})
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			is := is.New(t)
			_, _, err := e.svc.Statement(ctx, "no-such-account", payments.StatementFilter{})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			_, _, err = e.svc.SubaccountStatement(ctx, "ninguem@example.com", payments.StatementFilter{})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			_, _, err = e.svc.SubaccountStatement(ctx, "not a key", payments.StatementFilter{})
			is.Equal(payments.ErrorCode(err), payments.EINVALID)
		})
		t.Run("OtherCompany", func(t *testing.T) {
			is := is.New(t)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra"})
			is.NoErr(err)
			other, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			_, _, err = other.Statement(ctx, acct.AccountID, payments.StatementFilter{})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot read the first company's account
			_, _, err = other.SubaccountStatement(ctx, "vendedor@example.com", payments.StatementFilter{})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor its subaccount
			lines, _, err := other.Statement(ctx, "", payments.StatementFilter{})
			is.NoErr(err)
			is.Equal(len(lines), 0) // its own account has moved nothing
			_, _, err = other.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "vendedor@example.com", Name: "Mesmo"})
			is.NoErr(err)
			lines, _, err = other.SubaccountStatement(ctx, "vendedor@example.com", payments.StatementFilter{})
			is.NoErr(err)
			is.Equal(len(lines), 0) // the same key at another company is another subaccount
		})
	})
}

// TestService_StatementUnderConcurrentWrites reads whole statements while transfers move
// money in and out of the subaccount: every read is one snapshot, so its newest line and
// its oldest agree (the lines add up from an empty book to the balance read with them).
func TestService_StatementUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, k := range []string{"a@example.com", "b@example.com"} {
			_, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: k, Name: k})
			is.NoErr(err)
		}
		is.NoErr(e.svc.FundSubaccountForTest(ctx, "a@example.com", 100_000))
		errs := make(chan error, 2)
		for g := range 2 {
			go func() {
				var err error
				for i := 0; i < 40 && err == nil; i++ {
					from, to := "a@example.com", "b@example.com"
					if (i+g)%2 == 1 {
						from, to = to, from
					}
					_, err = e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: int64(1 + i), FromPixKey: from, ToPixKey: to})
					if payments.ErrorCode(err) == payments.EPRECONDITION {
						err = nil // b had too little: fine
					}
				}
				errs <- err
			}()
		}
		for done := 0; done < 2; {
			select {
			case err := <-errs:
				is.NoErr(err) // a writer failed
				done++
			default:
			}
			lines, _, err := e.svc.SubaccountStatement(ctx, "b@example.com", payments.StatementFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit}})
			is.NoErr(err)
			sum := int64(0)
			for _, l := range lines {
				sum += signed(l)
			}
			if len(lines) > 0 {
				is.Equal(lines[0].Balance, sum) // the balance and the lines come from one snapshot
			}
		}
		sa, err := e.svc.GetSubaccount(ctx, "b@example.com")
		is.NoErr(err)
		checkStatement(t, rand.New(rand.NewPCG(1, 2)), func(f payments.StatementFilter) ([]payments.StatementLine, payments.PageInfo, error) {
			return e.svc.SubaccountStatement(ctx, "b@example.com", f)
		}, sa.Balance)
	})
}

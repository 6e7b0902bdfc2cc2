package payments_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail"
)

func TestService_DefaultAccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		is.True(a.AccountID != "")              // the default company has its default account
		is.True(a.IsDefault)                    // marked as such
		is.Equal(a.Balance, payments.Balance{}) // empty
		is.Equal(a.CreatedAt, t0)               // created with the company

		got, err := e.svc.GetAccount(ctx, a.AccountID)
		is.NoErr(err)
		is.Equal(got, a) // get by id returns the same account
		as, page, err := e.svc.ListAccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(as, []payments.Account{a}) // the only account
		is.Equal(page, payments.PageInfo{Skip: 0, Limit: payments.DefaultLimit, TotalCount: 1})

		_, err = e.svc.GetAccount(ctx, "no-such-account")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		_, err = e.svc.GetAccount(ctx, "")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		_, _, err = e.svc.ListAccounts(ctx, payments.ListParams{Limit: -1})
		is.Equal(payments.ErrorField(err), "limit") // bad page
		auditClean(t, e.svc)
	})
}

func TestService_AccountHold(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		id := a.AccountID
		balance := func() payments.Balance {
			t.Helper()
			a, err := e.svc.GetAccount(ctx, id)
			is.NoErr(err)
			is.Equal(a.Balance.Available, a.Balance.Total-a.Balance.Blocked) // available = total - blocked, always
			return a.Balance
		}

		is.NoErr(e.svc.FundAccountForTest(ctx, id, 1000))
		is.Equal(balance(), payments.Balance{Total: 1000, Blocked: 0, Available: 1000}) // money in is available

		is.NoErr(e.svc.HoldForTest(ctx, id, 300, "r1"))
		is.Equal(balance(), payments.Balance{Total: 1000, Blocked: 300, Available: 700}) // hold: available -> blocked

		err = e.svc.HoldForTest(ctx, id, 701, "r2")
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // cannot hold more than available
		is.Equal(payments.ErrorField(err), "value")
		is.Equal(balance(), payments.Balance{Total: 1000, Blocked: 300, Available: 700}) // the refused hold changed nothing

		is.NoErr(e.svc.ReleaseHoldForTest(ctx, id, 100, "r1"))
		is.Equal(balance(), payments.Balance{Total: 1000, Blocked: 200, Available: 800}) // release: blocked -> available

		is.NoErr(e.svc.SettleHoldForTest(ctx, id, 200, "r1"))
		is.Equal(balance(), payments.Balance{Total: 800, Blocked: 0, Available: 800}) // settle: the money left

		err = e.svc.SettleHoldForTest(ctx, id, 1, "r1")
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a resolved hold settles no more
		is.Equal(balance(), payments.Balance{Total: 800, Blocked: 0, Available: 800})

		is.NoErr(e.svc.HoldForTest(ctx, id, 800, "r3"))
		is.Equal(balance(), payments.Balance{Total: 800, Blocked: 800, Available: 0}) // the whole balance may be held
		auditClean(t, e.svc)
	})
}

func TestService_AccountsCompanyIsolation(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		mine, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		is.NoErr(e.svc.FundAccountForTest(ctx, mine.AccountID, 1000))

		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		theirs, err := other.DefaultAccount(ctx)
		is.NoErr(err)
		is.True(theirs.IsDefault)                    // a company made by CreateCompany has its default account
		is.True(theirs.AccountID != mine.AccountID)  // of its own
		is.Equal(theirs.Balance, payments.Balance{}) // with its own money

		_, err = other.GetAccount(ctx, mine.AccountID)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot get the first company's account
		_, err = e.svc.GetAccount(ctx, theirs.AccountID)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor the other way round
		as, page, err := other.ListAccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(as, []payments.Account{theirs}) // lists only its own
		is.Equal(page.TotalCount, 1)
		err = other.HoldForTest(ctx, mine.AccountID, 1, "r1")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot move the first company's money

		auditClean(t, e.svc)
		auditClean(t, other)
	})
}

func TestService_CloseAccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		def, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		newAccount := func(t *testing.T, key string) payments.Account {
			t.Helper()
			a, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: key, Name: "Caixa"})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		listed := func(t *testing.T, id string) bool {
			t.Helper()
			as, _, err := e.svc.ListAccounts(ctx, payments.ListParams{Limit: payments.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				if a.AccountID == id {
					return true
				}
			}
			return false
		}

		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			a := newAccount(t, "caixa@loja.example.com")
			before := accountTotal(t, e.svc)
			e.clock.Advance(time.Minute)
			closed, err := e.svc.CloseAccount(ctx, a.AccountID)
			is.NoErr(err)
			is.Equal(closed.AccountID, a.AccountID)
			is.True(closed.ClosedAt != nil && closed.ClosedAt.Equal(t0.Add(time.Minute))) // closed now
			is.Equal(closed.Balance, payments.Balance{})                                  // nothing was in it

			got, err := e.svc.GetAccount(ctx, a.AccountID)
			is.NoErr(err)
			is.Equal(got, closed)                      // GET still reads it, closed
			is.True(!listed(t, a.AccountID))           // it no longer lists
			is.Equal(accountTotal(t, e.svc), before-1) // and the total counts one fewer

			_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 500, PixKey: "caixa@loja.example.com"})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // its key no longer receives
			r, err := e.svc.ReceiveBankPix(ctx, rail.ReceivedPix{EndToEndID: newE2E(), Key: "caixa@loja.example.com", Value: 500, At: e.clock.Now()})
			is.NoErr(err)
			is.True(r.Unmatched != nil) // a bank's Pix to it is kept for an operator, not lost
			is.Equal(r.CompanyID, "")   // and is no company's
			_, err = e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 1, FromPixKey: "pix@loja.example.com", ToPixKey: "caixa@loja.example.com"})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor can a transfer name it

			again := newAccount(t, "caixa@loja.example.com")
			is.True(again.AccountID != a.AccountID) // the key is free for a new account
			is.True(again.ClosedAt == nil)
			auditClean(t, e.svc)
		})
		t.Run("ErrAlreadyClosed", func(t *testing.T) {
			is := is.New(t)
			a := newAccount(t, "")
			first, err := e.svc.CloseAccount(ctx, a.AccountID)
			is.NoErr(err)
			e.clock.Advance(time.Minute)
			_, err = e.svc.CloseAccount(ctx, a.AccountID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a retry learns it is closed
			is.Equal(payments.ErrorField(err), "accountId")
			is.Equal(payments.ErrorMessage(err), "Account already closed") // the document's words
			got, err := e.svc.GetAccount(ctx, a.AccountID)
			is.NoErr(err)
			is.Equal(got.ClosedAt, first.ClosedAt) // closed once, at the first time
		})
		t.Run("ErrWithBalance", func(t *testing.T) {
			is := is.New(t)
			a := newAccount(t, "gaveta@loja.example.com")
			is.NoErr(e.svc.FundAccountForTest(ctx, a.AccountID, 1050))
			_, err := e.svc.CloseAccount(ctx, a.AccountID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // money in it: refused
			is.Equal(payments.ErrorField(err), "balance")             // naming the balance
			is.True(strings.HasPrefix(payments.ErrorMessage(err), "Account with balance cannot be deleted: its balance is R$ 10.50"))

			is.NoErr(e.svc.HoldForTest(ctx, a.AccountID, 1050, "close-hold")) // all of it blocked by an order in flight
			_, err = e.svc.CloseAccount(ctx, a.AccountID)
			is.Equal(payments.ErrorField(err), "balance") // blocked money refuses it too
			is.True(strings.Contains(payments.ErrorMessage(err), "R$ 10.50 of it blocked"))
			got, err := e.svc.GetAccount(ctx, a.AccountID)
			is.NoErr(err)
			is.True(got.ClosedAt == nil)                                                      // the refusals changed nothing
			is.Equal(got.Balance, payments.Balance{Total: 1050, Blocked: 1050, Available: 0}) // the money is where it was
			is.True(listed(t, a.AccountID))                                                   // it still lists
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, PixKey: "gaveta@loja.example.com"})
			is.NoErr(err) // and still receives

			is.NoErr(e.svc.SettleHoldForTest(ctx, a.AccountID, 1050, "close-hold")) // the order settles: the money left
			_, err = e.svc.CloseAccount(ctx, a.AccountID)
			is.Equal(payments.ErrorField(err), "balance") // what it received since is still there
			_, err = e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 1000 - x.Fee, FromPixKey: "gaveta@loja.example.com", ToPixKey: "pix@loja.example.com"})
			is.NoErr(err) // the company moves it to the default account
			closed, err := e.svc.CloseAccount(ctx, a.AccountID)
			is.NoErr(err) // empty now: it closes
			is.Equal(closed.Balance, payments.Balance{})
			auditClean(t, e.svc)
		})
		t.Run("ErrDefault", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CloseAccount(ctx, def.AccountID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // the default account stays
			is.Equal(payments.ErrorField(err), "accountId")
			got, err := e.svc.DefaultAccount(ctx)
			is.NoErr(err)
			is.True(got.ClosedAt == nil)
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			is := is.New(t)
			for _, id := range []string{"", "no-such-account", strings.Repeat("x", 5000), "a\x00b"} {
				_, err := e.svc.CloseAccount(ctx, id)
				is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not an account
			}
		})
		t.Run("OtherCompany", func(t *testing.T) {
			is := is.New(t)
			a := newAccount(t, "")
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
			is.NoErr(err)
			other, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			_, err = other.CloseAccount(ctx, a.AccountID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // another company cannot close it
			got, err := e.svc.GetAccount(ctx, a.AccountID)
			is.NoErr(err)
			is.True(got.ClosedAt == nil) // still open
			theirs, err := other.CreateAccount(ctx, payments.CreateAccountParams{})
			is.NoErr(err)
			_, err = e.svc.CloseAccount(ctx, theirs.AccountID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor the other way round
			_, err = other.CloseAccount(ctx, theirs.AccountID)
			is.NoErr(err) // its own, it can
		})
	})
}

// accountTotal is the count of accounts ListAccounts gives.
func accountTotal(t *testing.T, svc *payments.Service) int {
	t.Helper()
	_, page, err := svc.ListAccounts(ctx, payments.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return page.TotalCount
}

// TestService_CloseAccount_RaceWithTransfer closes an account while a transfer into it
// runs: whichever commits first, the account never ends closed with money in it, and the
// money is where one of the two outcomes puts it.
func TestService_CloseAccount_RaceWithTransfer(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		def, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		const rounds = 8
		is.NoErr(e.svc.FundAccountForTest(ctx, def.AccountID, rounds*100))
		closedFirst, transferredFirst := 0, 0
		for i := range rounds {
			key := fmt.Sprintf("race%d@loja.example.com", i)
			a, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: key})
			is.NoErr(err)
			var wg sync.WaitGroup
			var closeErr, transferErr error
			wg.Go(func() { _, closeErr = e.svc.CloseAccount(ctx, a.AccountID) })
			wg.Go(func() {
				_, transferErr = e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 100, FromPixKey: "pix@loja.example.com", ToPixKey: key})
			})
			wg.Wait()
			got, err := e.svc.GetAccount(ctx, a.AccountID)
			is.NoErr(err)
			switch {
			case closeErr == nil:
				is.Equal(payments.ErrorCode(transferErr), payments.ENOTFOUND) // closed first: the transfer found no account
				is.Equal(got.Balance, payments.Balance{})                     // and the closed account is empty
				closedFirst++
			default:
				is.NoErr(transferErr)                              // the transfer first
				is.Equal(payments.ErrorField(closeErr), "balance") // then the close was refused
				is.True(got.ClosedAt == nil)
				is.Equal(got.Balance.Total, int64(100))
				transferredFirst++
			}
		}
		is.Equal(closedFirst+transferredFirst, rounds)
		auditClean(t, e.svc)
	})
}

package payments_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

func TestService_DefaultAccount(t *testing.T) {
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
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		mine, err := e.svc.DefaultAccount(ctx)
		is.NoErr(err)
		is.NoErr(e.svc.FundAccountForTest(ctx, mine.AccountID, 1000))

		co, err := e.svc.CreateCompany(ctx, payments.CompanyParams{Name: "Second"})
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

package payments_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// auditClean fails the test unless svc's ledger audits clean; every ledger test ends with it.
func auditClean(t *testing.T, svc *payments.Service) payments.AuditReport {
	t.Helper()
	rep, err := svc.Audit(ctx)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("audit found problems:\n%s", strings.Join(rep.Problems, "\n"))
	}
	return rep
}

func TestService_Audit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("Empty", func(t *testing.T) {
			is := is.New(t)
			rep := auditClean(t, e.svc)
			is.Equal(rep.Entries, 0) // a new company has moved no money
			is.Equal(rep.Books, 2)   // its default account's available and blocked books
		})
		t.Run("AfterMovements", func(t *testing.T) {
			is := is.New(t)
			a, err := e.svc.DefaultAccount(ctx)
			is.NoErr(err)
			is.NoErr(e.svc.FundAccountForTest(ctx, a.AccountID, 5000))
			is.NoErr(e.svc.HoldForTest(ctx, a.AccountID, 2000, "refund-1"))
			is.NoErr(e.svc.SettleHoldForTest(ctx, a.AccountID, 1500, "refund-1"))
			is.NoErr(e.svc.ReleaseHoldForTest(ctx, a.AccountID, 500, "refund-1"))
			mustSubaccount(t, e.svc, "a@example.com", 300)
			mustSubaccount(t, e.svc, "b@example.com", 0)
			_, err = e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 100, FromPixKey: "a@example.com", ToPixKey: "b@example.com"})
			is.NoErr(err)
			rep := auditClean(t, e.svc)
			is.Equal(rep.Entries, 6) // fund, hold, settle, release, fund, transfer
			is.Equal(rep.Books, 5)   // 2 account books, pix-network, 2 subaccounts
		})
		t.Run("PerCompany", func(t *testing.T) {
			is := is.New(t)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
			is.NoErr(err)
			other, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			rep := auditClean(t, other)
			is.Equal(rep.Entries, 0) // the first company's journal is not the second's
			is.Equal(rep.Books, 2)
		})
	})
}

// mustSubaccount creates a subaccount with a canonical e-mail key and funds it.
func mustSubaccount(t *testing.T, svc *payments.Service, key string, funds int64) payments.Subaccount {
	t.Helper()
	sa, _, err := svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: key, Name: "Sub " + key})
	if err != nil {
		t.Fatal(err)
	}
	if funds > 0 {
		if err := svc.FundSubaccountForTest(ctx, sa.PixKey, funds); err != nil {
			t.Fatal(err)
		}
		sa.Balance = funds
	}
	return sa
}

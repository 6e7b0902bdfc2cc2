package payments_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

func TestService_CreateSubaccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			sa, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: " Ana.Souza@Example.COM ", Name: " Ana "})
			is.NoErr(err)
			is.True(created)                                                               // a new subaccount
			is.Equal(sa, payments.Subaccount{Name: "Ana", PixKey: "ana.souza@example.com", // key canonical, name trimmed
				Balance: 0, CreatedAt: t0, UpdatedAt: t0})

			e.clock.Advance(time.Minute)
			again, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "ana.souza@example.com", Name: "Other name"})
			is.NoErr(err)
			is.True(!created)   // the same key retrieves it
			is.Equal(again, sa) // unchanged: same name, same times

			got, err := e.svc.GetSubaccount(ctx, "ANA.SOUZA@example.com")
			is.NoErr(err)
			is.Equal(got, sa) // get accepts any form of the key
		})
		t.Run("KeyTypes", func(t *testing.T) {
			is := is.New(t)
			for in, want := range map[string]string{
				"+55 (11) 99999-0000":                  "+5511999990000",
				"529.982.247-25":                       "52998224725",
				"11.222.333/0001-81":                   "11222333000181",
				"0F3A9C1E-5B7D-4E2A-9C8B-1D2E3F4A5B6C": "0f3a9c1e-5b7d-4e2a-9c8b-1d2e3f4a5b6c",
			} {
				sa, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: in, Name: "S"})
				is.NoErr(err)
				is.True(created)
				is.Equal(sa.PixKey, want) // every key type, canonical
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.GetSubaccount(ctx, "nobody@example.com")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			_, err = e.svc.GetSubaccount(ctx, "not a key")
			is.Equal(payments.ErrorField(err), "pixKey") // a malformed key is named
		})
		auditClean(t, e.svc)
	})
}

func TestService_CreateSubaccount_Invalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		p     payments.CreateSubaccountParams
		field string
	}{
		{"NoKey", payments.CreateSubaccountParams{Name: "A"}, "pixKey"},
		{"BadKey", payments.CreateSubaccountParams{PixKey: "not-a-key", Name: "A"}, "pixKey"},
		{"BadCPFKey", payments.CreateSubaccountParams{PixKey: "52998224726", Name: "A"}, "pixKey"},
		{"NoName", payments.CreateSubaccountParams{PixKey: "a@example.com"}, "name"},
		{"BlankName", payments.CreateSubaccountParams{PixKey: "a@example.com", Name: "   "}, "name"},
		{"NameTooLong", payments.CreateSubaccountParams{PixKey: "a@example.com", Name: strings.Repeat("a", 201)}, "name"},
		{"NameControl", payments.CreateSubaccountParams{PixKey: "a@example.com", Name: "a\nb"}, "name"},
	}
	eachStore(t, func(t *testing.T, e env) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, _, err := e.svc.CreateSubaccount(ctx, tc.p)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // rejected as invalid
				is.Equal(payments.ErrorField(err), tc.field)         // naming the field
				_, page, err := e.svc.ListSubaccounts(ctx, payments.ListParams{})
				is.NoErr(err)
				is.Equal(page.TotalCount, 0) // nothing was written
			})
		}
		auditClean(t, e.svc)
	})
}

func TestService_ListSubaccounts(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, k := range []string{"a@example.com", "b@example.com", "c@example.com"} {
			mustSubaccount(t, e.svc, k, 10)
			e.clock.Advance(time.Second)
		}
		subs, page, err := e.svc.ListSubaccounts(ctx, payments.ListParams{Skip: 1, Limit: 1})
		is.NoErr(err)
		is.Equal(page, payments.PageInfo{Skip: 1, Limit: 1, TotalCount: 3, HasPreviousPage: true, HasNextPage: true})
		is.Equal(len(subs), 1)
		is.Equal(subs[0].PixKey, "b@example.com") // newest first
		is.Equal(subs[0].Balance, int64(10))      // with its balance
		_, _, err = e.svc.ListSubaccounts(ctx, payments.ListParams{Skip: -1})
		is.Equal(payments.ErrorField(err), "skip")
		auditClean(t, e.svc)
	})
}

func TestService_TransferBetweenSubaccounts(t *testing.T) {
	t.Parallel()
	transfer := func(from, to string, value int64, cid string) payments.CreateSubaccountTransferParams {
		return payments.CreateSubaccountTransferParams{Value: value, FromPixKey: from, FromPixKeyType: "EMAIL",
			ToPixKey: to, ToPixKeyType: "EMAIL", CorrelationID: cid}
	}
	balances := func(t *testing.T, svc *payments.Service, keys ...string) []int64 {
		t.Helper()
		var out []int64
		for _, k := range keys {
			sa, err := svc.GetSubaccount(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sa.Balance)
		}
		return out
	}
	eachStore(t, func(t *testing.T, e env) {
		mustSubaccount(t, e.svc, "a@example.com", 1000)
		mustSubaccount(t, e.svc, "b@example.com", 0)
		mustSubaccount(t, e.svc, "c@example.com", 0)

		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			tr, err := e.svc.TransferBetweenSubaccounts(ctx, transfer("a@example.com", "B@example.com", 300, "t1"))
			is.NoErr(err)
			is.Equal(tr.Value, int64(300))
			is.Equal(tr.CorrelationID, "t1")
			is.Equal(tr.CreatedAt, t0)
			is.Equal(tr.Origin.PixKey, "a@example.com")
			is.Equal(tr.Origin.Balance, int64(700)) // origin balance after the transfer
			is.Equal(tr.Destination.PixKey, "b@example.com")
			is.Equal(tr.Destination.Balance, int64(300)) // destination balance after the transfer
			is.Equal(balances(t, e.svc, "a@example.com", "b@example.com"), []int64{700, 300})
			auditClean(t, e.svc)
		})
		t.Run("TypeDetected", func(t *testing.T) {
			is := is.New(t)
			tr, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 1, FromPixKey: "b@example.com", ToPixKey: "a@example.com"})
			is.NoErr(err)                   // key types may be left out
			is.True(tr.CorrelationID != "") // a correlationID is made when none is given
		})
		t.Run("Idempotent", func(t *testing.T) {
			is := is.New(t)
			first, err := e.svc.TransferBetweenSubaccounts(ctx, transfer("a@example.com", "c@example.com", 100, "t-idem"))
			is.NoErr(err)
			before := balances(t, e.svc, "a@example.com", "c@example.com")
			e.clock.Advance(time.Minute)
			again, err := e.svc.TransferBetweenSubaccounts(ctx, transfer("a@example.com", "c@example.com", 100, "t-idem"))
			is.NoErr(err)
			is.Equal(again, first)                                                 // the first result, balances as they were then
			is.Equal(balances(t, e.svc, "a@example.com", "c@example.com"), before) // nothing moved twice

			_, err = e.svc.TransferBetweenSubaccounts(ctx, transfer("a@example.com", "c@example.com", 101, "t-idem"))
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // same correlationID, another transfer
			is.Equal(payments.ErrorField(err), "correlationID")
			is.Equal(balances(t, e.svc, "a@example.com", "c@example.com"), before)
			auditClean(t, e.svc)
		})
		t.Run("ErrInsufficientBalance", func(t *testing.T) {
			is := is.New(t)
			before := balances(t, e.svc, "b@example.com", "c@example.com")
			_, err := e.svc.TransferBetweenSubaccounts(ctx, transfer("c@example.com", "b@example.com", before[1]+1, "t-broke"))
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // more than the origin has
			is.Equal(payments.ErrorField(err), "value")
			is.Equal(balances(t, e.svc, "b@example.com", "c@example.com"), before) // nothing moved

			is.NoErr(e.svc.FundSubaccountForTest(ctx, "c@example.com", 1))
			_, err = e.svc.TransferBetweenSubaccounts(ctx, transfer("c@example.com", "b@example.com", before[1]+1, "t-broke"))
			is.NoErr(err) // the failed attempt did not use up its correlationID
			auditClean(t, e.svc)
		})
		t.Run("ErrUnknownSubaccount", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.TransferBetweenSubaccounts(ctx, transfer("nobody@example.com", "a@example.com", 1, ""))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // unknown origin
			is.Equal(payments.ErrorField(err), "fromPixKey")
			_, err = e.svc.TransferBetweenSubaccounts(ctx, transfer("a@example.com", "nobody@example.com", 1, ""))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // unknown destination
			is.Equal(payments.ErrorField(err), "toPixKey")
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			cases := []struct {
				name  string
				p     payments.CreateSubaccountTransferParams
				field string
			}{
				{"ZeroValue", transfer("a@example.com", "b@example.com", 0, ""), "value"},
				{"NegativeValue", transfer("a@example.com", "b@example.com", -5, ""), "value"},
				{"OverMaxValue", transfer("a@example.com", "b@example.com", payments.MaxChargeValue+1, ""), "value"},
				{"MaxInt64Value", transfer("a@example.com", "b@example.com", math.MaxInt64, ""), "value"}, // b has a balance: this overflowed it
				{"SameSubaccount", transfer("a@example.com", "A@example.com", 1, ""), "toPixKey"},
				{"BadFromKey", transfer("a@", "b@example.com", 1, ""), "fromPixKey"},
				{"BadToKey", transfer("a@example.com", "", 1, ""), "toPixKey"},
				{"BadKeyType", payments.CreateSubaccountTransferParams{Value: 1, FromPixKey: "a@example.com", FromPixKeyType: "IBAN", ToPixKey: "b@example.com"}, "fromPixKeyType"},
				{"KeyNotOfType", payments.CreateSubaccountTransferParams{Value: 1, FromPixKey: "a@example.com", ToPixKey: "b@example.com", ToPixKeyType: "CPF"}, "toPixKey"},
				{"CorrelationIDControl", transfer("a@example.com", "b@example.com", 1, "a\x00b"), "correlationID"},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					is := is.New(t)
					before := balances(t, e.svc, "a@example.com", "b@example.com")
					_, err := e.svc.TransferBetweenSubaccounts(ctx, tc.p)
					is.Equal(payments.ErrorCode(err), payments.EINVALID)                   // invalid, not internal
					is.Equal(payments.ErrorField(err), tc.field)                           // naming the field
					is.Equal(balances(t, e.svc, "a@example.com", "b@example.com"), before) // nothing moved
				})
			}
		})
		auditClean(t, e.svc)
	})
}

func TestService_SubaccountsCompanyIsolation(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		mustSubaccount(t, e.svc, "a@example.com", 500)
		mustSubaccount(t, e.svc, "b@example.com", 0)
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)

		_, err = other.GetSubaccount(ctx, "a@example.com")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot get the first company's subaccount
		subs, page, err := other.ListSubaccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(subs), 0) // nor see it in lists
		is.Equal(page.TotalCount, 0)
		_, err = other.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 1, FromPixKey: "a@example.com", ToPixKey: "b@example.com"})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor move its money

		sa, created, err := other.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "a@example.com", Name: "Theirs"})
		is.NoErr(err)
		is.True(created)               // the same key is free in another company
		is.Equal(sa.Balance, int64(0)) // with its own, empty, book
		mine, err := e.svc.GetSubaccount(ctx, "a@example.com")
		is.NoErr(err)
		is.Equal(mine.Balance, int64(500)) // the first company's is untouched
		is.True(mine.Name != sa.Name)
		auditClean(t, e.svc)
		auditClean(t, other)
	})
}

// TestService_PixKeyMessages: an empty Pix key is required, not of an unknown type; a
// phone-shaped 11-digit number is told it needs +55 rather than only that it is a bad CPF.
func TestService_PixKeyMessages(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		for _, tc := range []struct{ name, key, field, msg string }{
			{"Empty", "", "pixKey", "pixKey is required"},
			{"Blank", "  ", "pixKey", "pixKey is required"},
			{"PhoneWithoutCountryCode", "11 91234-5689", "pixKey", "pixKey is not a valid Pix key: CPF check digits do not match; read as a CPF because it has 11 digits: a phone key needs the country code, +5511912345689"},
			{"BadPhone", "+55 11 1234-5678", "pixKey", "pixKey is not a valid Pix key: phone must be +55, a 2-digit area code and a 9-digit mobile number starting with 9"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: tc.key, Name: "A"})
				is.Equal(payments.ErrorCode(err), payments.EINVALID)
				is.Equal(payments.ErrorField(err), tc.field) // naming the field
				is.Equal(payments.ErrorMessage(err), tc.msg) // saying what is wrong
			})
		}
		t.Run("SplitKeyEmpty", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 1}}})
			is.Equal(payments.ErrorMessage(err), "splits[0].pixKey is required") // the item named
		})
		t.Run("Phone", func(t *testing.T) {
			is := is.New(t)
			sa, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "+55 (11) 91234-5689", Name: "A"})
			is.NoErr(err)                         // a phone key is checked as a phone
			is.Equal(sa.PixKey, "+5511912345689") // canonical
			tr, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 1,
				FromPixKey: "+5511912345689", FromPixKeyType: "PHONE", ToPixKey: "11912345684", ToPixKeyType: "PHONE"})
			is.Equal(payments.ErrorField(err), "toPixKey")                          // typed PHONE: never read as the CPF it also is
			is.True(strings.Contains(payments.ErrorMessage(err), "+5511912345684")) // but as the phone, which has no subaccount
			is.Equal(tr.Value, int64(0))
		})
	})
}

// TestService_ListSubaccounts_SameInstant: subaccounts created at one instant list newest
// first too. Before, ties were broken by Pix key: zeca@ listed before ana@ although ana@
// was created after it.
func TestService_ListSubaccounts_SameInstant(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		keys := []string{"zeca@example.com", "ana@example.com", "maria@example.com", "bia@example.com"}
		for _, k := range keys {
			mustSubaccount(t, e.svc, k, 0)
		}
		subs, _, err := e.svc.ListSubaccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		var got []string
		for _, s := range subs {
			got = append(got, s.PixKey)
		}
		is.Equal(got, []string{"bia@example.com", "maria@example.com", "ana@example.com", "zeca@example.com"}) // newest first
	})
}

func TestService_DeleteSubaccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		listed := func(t *testing.T, key string) bool {
			t.Helper()
			subs, _, err := e.svc.ListSubaccounts(ctx, payments.ListParams{Limit: payments.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, sa := range subs {
				if sa.PixKey == key {
					return true
				}
			}
			return false
		}
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			sa := mustSubaccount(t, e.svc, "vendedor@example.com", 0)
			got, err := e.svc.DeleteSubaccount(ctx, " Vendedor@Example.com ")
			is.NoErr(err)
			is.Equal(got, sa) // the subaccount as it was, found by any form of its key
			_, err = e.svc.GetSubaccount(ctx, "vendedor@example.com")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // gone
			is.Equal(payments.ErrorMessage(err), "Subaccount not found: vendedor@example.com")
			is.True(!listed(t, "vendedor@example.com")) // and no longer lists
			_, err = e.svc.DeleteSubaccount(ctx, "vendedor@example.com")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // a second delete finds nothing
			_, err = e.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "vendedor@example.com", Value: 10})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no money goes to it
			_, err = e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "after-delete", Value: 100, Subaccount: "vendedor@example.com"})
			is.Equal(payments.ErrorField(err), "subaccount") // nor may a new charge name it
			auditClean(t, e.svc)
		})
		t.Run("ErrWithBalance", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.svc, "cheio@example.com", 1234)
			_, err := e.svc.DeleteSubaccount(ctx, "cheio@example.com")
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // money in it: refused
			is.Equal(payments.ErrorField(err), "balance")             // naming the balance
			is.True(strings.HasPrefix(payments.ErrorMessage(err), "Only subaccount without balance can be removed: its balance is R$ 12.34"))
			got, err := e.svc.GetSubaccount(ctx, "cheio@example.com")
			is.NoErr(err)
			is.Equal(got.Balance, int64(1234)) // nothing changed
			is.True(listed(t, "cheio@example.com"))

			_, err = e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "cheio@example.com", Value: 1234})
			is.NoErr(err) // the company takes the money to its account
			_, err = e.svc.DeleteSubaccount(ctx, "cheio@example.com")
			is.NoErr(err) // then the empty subaccount goes
			auditClean(t, e.svc)
		})
		t.Run("ChargeCreatedBefore", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.svc, "loja@example.com", 0)
			mustSubaccount(t, e.svc, "split@example.com", 0)
			whole := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "for-deleted", Value: 1000, Subaccount: "loja@example.com"})
			split := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "split-deleted", Value: 1000,
				Splits: []payments.Split{{Value: 300, PixKey: "split@example.com"}}})
			_, err := e.svc.DeleteSubaccount(ctx, "loja@example.com")
			is.NoErr(err)
			_, err = e.svc.DeleteSubaccount(ctx, "split@example.com")
			is.NoErr(err)
			before := balanceOfAccount(t, e.svc)
			x1 := pay(t, e, whole)
			x2 := pay(t, e, split)
			is.Equal(balanceOfAccount(t, e.svc), before+2000-x1.Fee-x2.Fee) // the deleted subaccounts' parts went to the company account
			again, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "loja@example.com", Name: "De novo"})
			is.NoErr(err)
			is.True(created)                  // a new subaccount with the key
			is.Equal(again.Balance, int64(0)) // which got nothing of the charge paid meanwhile
			auditClean(t, e.svc)
		})
		t.Run("MoneyAfterDelete", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.svc, "volta@example.com", 0)
			_, err := e.svc.DeleteSubaccount(ctx, "volta@example.com")
			is.NoErr(err)
			// A withdrawal of it returned by the payee's bank after the deletion lands in its
			// books (as FundSubaccountForTest posts): creating it again shows that money.
			is.NoErr(e.svc.FundSubaccountForTest(ctx, "volta@example.com", 700))
			sa, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "volta@example.com", Name: "Volta"})
			is.NoErr(err)
			is.True(created)
			is.Equal(sa.Balance, int64(700)) // nothing lost
			got, err := e.svc.GetSubaccount(ctx, "volta@example.com")
			is.NoErr(err)
			is.Equal(got, sa)
			auditClean(t, e.svc)
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			is := is.New(t)
			for _, key := range []string{"", "not a key", strings.Repeat("a", 3000)} {
				_, err := e.svc.DeleteSubaccount(ctx, key)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // not a Pix key
				is.Equal(payments.ErrorField(err), "pixKey")
			}
		})
		t.Run("OtherCompany", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.svc, "comum@example.com", 0)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
			is.NoErr(err)
			other, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			_, err = other.DeleteSubaccount(ctx, "comum@example.com")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // another company cannot delete it
			mustSubaccount(t, other, "comum@example.com", 0)      // it may have one with the same key
			_, err = other.DeleteSubaccount(ctx, "comum@example.com")
			is.NoErr(err) // and delete its own
			_, err = e.svc.GetSubaccount(ctx, "comum@example.com")
			is.NoErr(err) // the first company's is still there
		})
	})
}

// TestService_DeleteSubaccount_Blocked: a subaccount whose withdrawal the bank has not
// settled cannot be deleted, even with nothing available; once the order ends, it can.
func TestService_DeleteSubaccount_Blocked(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			clock := payments.NewManualClock(t0)
			svc, err := payments.New(st.open(t), payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, time.Minute)})
			is.NoErr(err)
			mustSubaccount(t, svc, "saque@example.com", 1000)
			_, err = svc.WithdrawFromSubaccount(ctx, "saque@example.com", 0)
			is.NoErr(err)
			sa, err := svc.GetSubaccount(ctx, "saque@example.com")
			is.NoErr(err)
			is.Equal(sa.Balance, int64(0)) // all of it held by the withdrawal in flight
			_, err = svc.DeleteSubaccount(ctx, "saque@example.com")
			is.Equal(payments.ErrorField(err), "balance") // refused while the bank has the order
			is.True(strings.Contains(payments.ErrorMessage(err), "R$ 10.00 is blocked"))

			clock.Advance(time.Minute)
			is.NoErr(svc.RunDue(ctx)) // the bank answers: settled, or failed with the money back
			sa, err = svc.GetSubaccount(ctx, "saque@example.com")
			is.NoErr(err)
			if sa.Balance > 0 {
				_, err = svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "saque@example.com", Value: sa.Balance})
				is.NoErr(err) // what came back goes to the company account
			}
			_, err = svc.DeleteSubaccount(ctx, "saque@example.com")
			is.NoErr(err) // nothing held, nothing left: deleted
			auditClean(t, svc)
		})
	}
}

// balanceOfAccount is the total of the default account of svc's company.
func balanceOfAccount(t *testing.T, svc *payments.Service) int64 {
	t.Helper()
	a, err := svc.DefaultAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance.Total
}

package payments_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

func TestService_DebitCreditSubaccount(t *testing.T) {
	t.Parallel()
	move := func(key string, value int64, cid string) payments.SubaccountMoveParams {
		return payments.SubaccountMoveParams{PixKey: key, Value: value, Description: "d", CorrelationID: cid}
	}
	eachStore(t, func(t *testing.T, e env) {
		def, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.svc.FundAccountForTest(ctx, def.AccountID, 1000); err != nil {
			t.Fatal(err)
		}
		mustSubaccount(t, e.svc, "vendedor@example.com", 500)
		mustSubaccount(t, e.svc, "vazio@example.com", 0)
		// state is the default account's available balance and each subaccount's.
		state := func(t *testing.T) []int64 {
			t.Helper()
			out := available(t, e.svc, def.AccountID)
			for _, k := range []string{"vendedor@example.com", "vazio@example.com"} {
				sa, err := e.svc.GetSubaccount(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, sa.Balance)
			}
			return out
		}

		t.Run("Debit", func(t *testing.T) {
			is := is.New(t)
			e.clock.Advance(time.Minute)
			m, err := e.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "VENDEDOR@example.com", Value: 200, Description: " comissão "})
			is.NoErr(err)
			is.Equal(m.Kind, payments.SubaccountDebit)
			is.Equal(m.Value, int64(200))
			is.Equal(m.Description, "comissão")  // trimmed
			is.Equal(m.AccountID, def.AccountID) // against the default account
			is.Equal(m.Subaccount.PixKey, "vendedor@example.com")
			is.Equal(m.Subaccount.Balance, int64(300)) // as the debit left it
			is.Equal(m.CreatedAt, t0.Add(time.Minute))
			is.Equal(state(t), []int64{1200, 300, 0}) // subaccount -> account
			auditClean(t, e.svc)
		})
		t.Run("Credit", func(t *testing.T) {
			is := is.New(t)
			m, err := e.svc.CreditSubaccount(ctx, move("vazio@example.com", 150, ""))
			is.NoErr(err)
			is.Equal(m.Kind, payments.SubaccountCredit)
			is.Equal(m.Subaccount.Balance, int64(150))
			is.Equal(state(t), []int64{1050, 300, 150}) // account -> subaccount
			_, err = e.svc.DebitSubaccount(ctx, move("vazio@example.com", 150, ""))
			is.NoErr(err) // and back, all of it
			is.Equal(state(t), []int64{1200, 300, 0})
			auditClean(t, e.svc)
		})
		t.Run("NoCorrelationIDMovesEachTime", func(t *testing.T) {
			is := is.New(t)
			for range 2 {
				_, err := e.svc.DebitSubaccount(ctx, move("vendedor@example.com", 10, ""))
				is.NoErr(err)
			}
			is.Equal(state(t), []int64{1220, 280, 0}) // two calls, two debits, as the real API
		})
		t.Run("Idempotent", func(t *testing.T) {
			is := is.New(t)
			first, err := e.svc.DebitSubaccount(ctx, move("vendedor@example.com", 30, "d-1"))
			is.NoErr(err)
			before := state(t)
			e.clock.Advance(time.Minute)
			again, err := e.svc.DebitSubaccount(ctx, move("vendedor@example.com", 30, "d-1"))
			is.NoErr(err)
			is.Equal(again, first)     // the first debit
			is.Equal(state(t), before) // moved once
			for _, tc := range []struct {
				name string
				fn   func() error
			}{
				{"OtherValue", func() error {
					_, err := e.svc.DebitSubaccount(ctx, move("vendedor@example.com", 31, "d-1"))
					return err
				}},
				{"OtherKey", func() error { _, err := e.svc.DebitSubaccount(ctx, move("vazio@example.com", 30, "d-1")); return err }},
				{"Credit", func() error {
					_, err := e.svc.CreditSubaccount(ctx, move("vendedor@example.com", 30, "d-1"))
					return err
				}},
			} {
				err := tc.fn()
				is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // same correlationID, another move
				is.Equal(payments.ErrorField(err), "correlationID")
			}
			is.Equal(state(t), before)
		})
		t.Run("Refused", func(t *testing.T) {
			for _, tc := range []struct {
				name       string
				credit     bool
				p          payments.SubaccountMoveParams
				code       payments.Code
				field, msg string
			}{
				{"DebitEmpty", false, move("vazio@example.com", 1, ""), payments.EPRECONDITION, "value", "Transfer just work with subaccount with balance"},
				{"DebitTooMuch", false, move("vendedor@example.com", 251, ""), payments.EPRECONDITION, "value", "Account does not have enough balance to complete the operation"},
				{"CreditTooMuch", true, move("vazio@example.com", 1251, ""), payments.EPRECONDITION, "value", "Account does not have enough balance to complete the operation"},
				{"ZeroValue", false, move("vendedor@example.com", 0, ""), payments.EINVALID, "value", "Value must be positive"},
				{"NegativeCredit", true, move("vendedor@example.com", -1, ""), payments.EINVALID, "value", "Value must be positive"},
				{"OverMax", true, move("vendedor@example.com", payments.MaxChargeValue+1, ""), payments.EINVALID, "value", "value must be a positive number of centavos up to 999999999999"},
				{"UnknownSubaccount", false, move("nobody@example.com", 1, ""), payments.ENOTFOUND, "pixKey", "Subaccount not found: nobody@example.com"},
				{"UnknownSubaccountCredit", true, move("nobody@example.com", 1, ""), payments.ENOTFOUND, "pixKey", "Subaccount not found: nobody@example.com"},
				{"BadKey", true, move("not a key", 1, ""), payments.EINVALID, "pixKey", ""},
				{"NoKey", false, move("", 1, ""), payments.EINVALID, "pixKey", "pixKey is required"},
				{"DescriptionTooLong", false, payments.SubaccountMoveParams{PixKey: "vendedor@example.com", Value: 1, Description: strings.Repeat("a", 141)}, payments.EINVALID, "description", ""},
				{"CorrelationIDControl", true, move("vendedor@example.com", 1, "a\nb"), payments.EINVALID, "correlationID", ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					is := is.New(t)
					before := state(t)
					fn := e.svc.DebitSubaccount
					if tc.credit {
						fn = e.svc.CreditSubaccount
					}
					_, err := fn(ctx, tc.p)
					is.Equal(payments.ErrorCode(err), tc.code)   // refused, not internal
					is.Equal(payments.ErrorField(err), tc.field) // naming the field
					if tc.msg != "" {
						is.Equal(payments.ErrorMessage(err), tc.msg) // the real API's words where it has them
					}
					is.Equal(state(t), before) // nothing moved
				})
			}
		})
		t.Run("CompanyIsolation", func(t *testing.T) {
			is := is.New(t)
			before := state(t)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
			is.NoErr(err)
			other, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			_, err = other.DebitSubaccount(ctx, move("vendedor@example.com", 1, ""))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not its subaccount
			_, err = other.CreditSubaccount(ctx, move("vendedor@example.com", 1, ""))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			is.Equal(state(t), before) // the first company's money unmoved
			auditClean(t, other)
		})
		auditClean(t, e.svc)
	})
}

package payments_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// companyKey is the default company's Pix key in newEnv: its default account's key.
const companyKey = "pix@loja.example.com"

// mustAccount creates another account of the company with key, funded from the Pix
// network with funds.
func mustAccount(t *testing.T, svc *payments.Service, key string, funds int64) payments.Account {
	t.Helper()
	a, err := svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: key, Name: "Conta " + key})
	if err != nil {
		t.Fatal(err)
	}
	if funds > 0 {
		if err := svc.FundAccountForTest(ctx, a.AccountID, funds); err != nil {
			t.Fatal(err)
		}
		a.Balance = payments.Balance{Total: funds, Available: funds}
	}
	return a
}

// available returns the available balance of each account, by id.
func available(t *testing.T, svc *payments.Service, ids ...string) []int64 {
	t.Helper()
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		a, err := svc.GetAccount(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a.Balance.Available)
	}
	return out
}

func TestService_CreateAccount(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		def, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("DefaultKey", func(t *testing.T) {
			is := is.New(t)
			is.Equal(def.PixKey, companyKey) // the default account's key is the company's
		})
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			e.clock.Advance(time.Second)
			a, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: " Caixa@Loja.Example.COM ", Name: " Caixa "})
			is.NoErr(err)
			is.True(a.AccountID != "" && a.AccountID != def.AccountID) // an account of its own
			is.True(!a.IsDefault)                                      // not the default
			is.Equal(a.PixKey, "caixa@loja.example.com")               // key canonical
			is.Equal(a.Name, "Caixa")                                  // name trimmed
			is.Equal(a.Balance, payments.Balance{})                    // empty
			is.Equal(a.CreatedAt, t0.Add(time.Second))
			got, err := e.svc.GetAccount(ctx, a.AccountID)
			is.NoErr(err)
			is.Equal(got, a) // get returns it, key included
			as, page, err := e.svc.ListAccounts(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 2)
			is.Equal(as, []payments.Account{a, def}) // newest first, each with its key
		})
		t.Run("GeneratedKey", func(t *testing.T) {
			is := is.New(t)
			a, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{})
			is.NoErr(err)
			b, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{})
			is.NoErr(err)
			is.Equal(len(a.PixKey), 36)         // a random (EVP) key
			is.True(a.PixKey != b.PixKey)       // one per account
			is.True(a.AccountID != b.AccountID) // no body makes a new account each time
		})
		t.Run("ErrKeyTaken", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.svc, "vendedor@example.com", 0)
			_, _, before, err := countAccounts(e)
			is.NoErr(err)
			for _, key := range []string{companyKey, "caixa@loja.example.com", "VENDEDOR@example.com"} {
				_, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: key})
				is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // the company's, another account's, a subaccount's
				is.Equal(payments.ErrorField(err), "pixKey")
			}
			_, _, err = e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "caixa@loja.example.com", Name: "S"})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // a subaccount cannot take an account's key
			_, _, err = e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: companyKey, Name: "S"})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // nor the company's
			key := "caixa@loja.example.com"
			_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &key})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // nor may the company take another account's key
			_, _, after, err := countAccounts(e)
			is.NoErr(err)
			is.Equal(after, before) // nothing was created
		})
		t.Run("UpdateCompanyMovesDefaultKey", func(t *testing.T) {
			is := is.New(t)
			key := "novo@loja.example.com"
			_, err := e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &key})
			is.NoErr(err)
			got, err := e.svc.DefaultAccount(ctx)
			is.NoErr(err)
			is.Equal(got.PixKey, key) // the default account's key follows the company's
			old := companyKey
			_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &old})
			is.NoErr(err)
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				p     payments.CreateAccountParams
				field string
			}{
				{"BadKey", payments.CreateAccountParams{PixKey: "not a key"}, "pixKey"},
				{"BadCPFKey", payments.CreateAccountParams{PixKey: "52998224726"}, "pixKey"},
				{"NameTooLong", payments.CreateAccountParams{Name: strings.Repeat("a", 201)}, "name"},
				{"NameControl", payments.CreateAccountParams{Name: "a\x00b"}, "name"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					is := is.New(t)
					_, _, before, err := countAccounts(e)
					is.NoErr(err)
					_, err = e.svc.CreateAccount(ctx, tc.p)
					is.Equal(payments.ErrorCode(err), payments.EINVALID) // refused as invalid
					is.Equal(payments.ErrorField(err), tc.field)         // naming the field
					_, _, after, err := countAccounts(e)
					is.NoErr(err)
					is.Equal(after, before) // nothing was created
				})
			}
		})
		auditClean(t, e.svc)
	})
}

// countAccounts lists the company's accounts and returns their number.
func countAccounts(e env) ([]payments.Account, payments.PageInfo, int, error) {
	as, page, err := e.svc.ListAccounts(ctx, payments.ListParams{Limit: payments.MaxLimit})
	return as, page, page.TotalCount, err
}

func TestService_TransferBetweenAccounts(t *testing.T) {
	t.Parallel()
	transfer := func(from, to string, value int64, cid string) payments.CreateTransferParams {
		return payments.CreateTransferParams{Value: value, FromPixKey: from, ToPixKey: to, CorrelationID: cid}
	}
	eachStore(t, func(t *testing.T, e env) {
		def, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.svc.FundAccountForTest(ctx, def.AccountID, 1000); err != nil {
			t.Fatal(err)
		}
		caixa := mustAccount(t, e.svc, "caixa@loja.example.com", 0)
		ids := []string{def.AccountID, caixa.AccountID}

		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			e.clock.Advance(time.Minute)
			tr, err := e.svc.TransferBetweenAccounts(ctx, transfer(companyKey, "CAIXA@loja.example.com", 300, "tr-1"))
			is.NoErr(err)
			is.Equal(tr, payments.Transfer{ID: tr.ID, Value: 300, Time: t0.Add(time.Minute), CorrelationID: "tr-1",
				FromPixKey: companyKey, ToPixKey: "caixa@loja.example.com" /* canonical */, FromAccountID: def.AccountID, ToAccountID: caixa.AccountID})
			is.Equal(available(t, e.svc, ids...), []int64{700, 300}) // moved once
			got, err := e.svc.GetTransfer(ctx, "tr-1")
			is.NoErr(err)
			is.Equal(got, tr) // kept, found by correlationID
			back, err := e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 100, FromPixKey: "caixa@loja.example.com",
				FromPixKeyType: "EMAIL", ToPixKey: companyKey, ToPixKeyType: "EMAIL"})
			is.NoErr(err)                                            // back the other way, key types given
			is.True(back.CorrelationID != "")                        // a correlationID is made when none is given
			is.Equal(available(t, e.svc, ids...), []int64{800, 200}) // and moved
			auditClean(t, e.svc)
		})
		t.Run("Idempotent", func(t *testing.T) {
			is := is.New(t)
			first, err := e.svc.TransferBetweenAccounts(ctx, transfer(companyKey, "caixa@loja.example.com", 50, "tr-idem"))
			is.NoErr(err)
			before := available(t, e.svc, ids...)
			e.clock.Advance(time.Minute)
			again, err := e.svc.TransferBetweenAccounts(ctx, transfer(companyKey, "caixa@loja.example.com", 50, "tr-idem"))
			is.NoErr(err)
			is.Equal(again, first)                        // the first transfer, its time included
			is.Equal(available(t, e.svc, ids...), before) // nothing moved twice
			for _, p := range []payments.CreateTransferParams{
				transfer(companyKey, "caixa@loja.example.com", 51, "tr-idem"), // another value
				transfer("caixa@loja.example.com", companyKey, 50, "tr-idem"), // another direction
			} {
				tr, err := e.svc.TransferBetweenAccounts(ctx, p)
				is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // same correlationID, another transfer
				is.Equal(tr, payments.Transfer{})                     // not the first one, with the error
				is.Equal(payments.ErrorField(err), "correlationID")
			}
			is.Equal(available(t, e.svc, ids...), before)
		})
		t.Run("ErrInsufficientBalance", func(t *testing.T) {
			is := is.New(t)
			before := available(t, e.svc, ids...)
			tr, err := e.svc.TransferBetweenAccounts(ctx, transfer("caixa@loja.example.com", companyKey, before[1]+1, "tr-broke"))
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // more than the origin has
			is.Equal(tr, payments.Transfer{})                         // and no transfer with the error
			is.Equal(payments.ErrorField(err), "value")
			is.Equal(payments.ErrorMessage(err), "Account does not have enough balance to complete the operation")
			is.Equal(available(t, e.svc, ids...), before) // nothing moved

			is.NoErr(e.svc.HoldForTest(ctx, def.AccountID, before[0], "held")) // all of it blocked for a refund
			_, err = e.svc.TransferBetweenAccounts(ctx, transfer(companyKey, "caixa@loja.example.com", 1, "tr-held"))
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // blocked money is not available
			is.NoErr(e.svc.ReleaseHoldForTest(ctx, def.AccountID, before[0], "held"))

			is.NoErr(e.svc.FundAccountForTest(ctx, caixa.AccountID, 1))
			_, err = e.svc.TransferBetweenAccounts(ctx, transfer("caixa@loja.example.com", companyKey, before[1]+1, "tr-broke"))
			is.NoErr(err) // the refused attempt did not use up its correlationID
			auditClean(t, e.svc)
		})
		t.Run("ErrUnknownAccount", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.svc, "sub@example.com", 100)
			before := available(t, e.svc, ids...)
			for _, tc := range []struct {
				p     payments.CreateTransferParams
				field string
			}{
				{transfer("nobody@example.com", companyKey, 1, ""), "fromPixKey"},
				{transfer(companyKey, "nobody@example.com", 1, ""), "toPixKey"},
				{transfer(companyKey, "sub@example.com", 1, ""), "toPixKey"}, // a subaccount is not an account
				{transfer("sub@example.com", companyKey, 1, ""), "fromPixKey"},
			} {
				_, err := e.svc.TransferBetweenAccounts(ctx, tc.p)
				is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such account
				is.Equal(payments.ErrorField(err), tc.field)          // naming the field
				is.True(strings.HasPrefix(payments.ErrorMessage(err), "Account not found for "+tc.field))
			}
			is.Equal(available(t, e.svc, ids...), before) // nothing moved
			sa, err := e.svc.GetSubaccount(ctx, "sub@example.com")
			is.NoErr(err)
			is.Equal(sa.Balance, int64(100))
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				p     payments.CreateTransferParams
				field string
			}{
				{"ZeroValue", transfer(companyKey, "caixa@loja.example.com", 0, ""), "value"},
				{"NegativeValue", transfer(companyKey, "caixa@loja.example.com", -5, ""), "value"},
				{"OverMaxValue", transfer(companyKey, "caixa@loja.example.com", payments.MaxChargeValue+1, ""), "value"},
				{"MaxInt64Value", transfer(companyKey, "caixa@loja.example.com", math.MaxInt64, ""), "value"},
				{"SameAccount", transfer(companyKey, "PIX@loja.example.com", 1, ""), "toPixKey"},
				{"NoFromKey", transfer("", "caixa@loja.example.com", 1, ""), "fromPixKey"},
				{"BadFromKey", transfer("a@", "caixa@loja.example.com", 1, ""), "fromPixKey"},
				{"BadToKey", transfer(companyKey, "not a key", 1, ""), "toPixKey"},
				{"BadKeyType", payments.CreateTransferParams{Value: 1, FromPixKey: companyKey, FromPixKeyType: "IBAN", ToPixKey: "caixa@loja.example.com"}, "fromPixKeyType"},
				{"KeyNotOfType", payments.CreateTransferParams{Value: 1, FromPixKey: companyKey, ToPixKey: "caixa@loja.example.com", ToPixKeyType: "CPF"}, "toPixKey"},
				{"CorrelationIDControl", transfer(companyKey, "caixa@loja.example.com", 1, "a\x00b"), "correlationID"},
				{"CorrelationIDTooLong", transfer(companyKey, "caixa@loja.example.com", 1, strings.Repeat("c", payments.MaxCorrelationID+1)), "correlationID"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					is := is.New(t)
					before := available(t, e.svc, ids...)
					_, err := e.svc.TransferBetweenAccounts(ctx, tc.p)
					is.Equal(payments.ErrorCode(err), payments.EINVALID) // invalid, not internal
					is.Equal(payments.ErrorField(err), tc.field)         // naming the field
					is.Equal(available(t, e.svc, ids...), before)        // nothing moved
				})
			}
		})
		t.Run("CompanyIsolation", func(t *testing.T) {
			is := is.New(t)
			before := available(t, e.svc, ids...)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second", PixKey: "second@example.com"})
			is.NoErr(err)
			other, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			_, err = other.TransferBetweenAccounts(ctx, transfer(companyKey, "caixa@loja.example.com", 1, "steal"))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot move the first company's money
			_, err = other.TransferBetweenAccounts(ctx, transfer("caixa@loja.example.com", "second@example.com", 1, "steal"))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor into its own account
			is.Equal(payments.ErrorField(err), "fromPixKey")
			_, err = other.GetAccount(ctx, caixa.AccountID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor see the account
			_, err = other.GetTransfer(ctx, "tr-1")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor its transfers
			_, err = other.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@loja.example.com"})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // nor take its key: Pix keys are unique across companies
			is.Equal(payments.ErrorField(err), "pixKey")
			theirs, err := other.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@second.example.com"})
			is.NoErr(err) // a key of its own is free
			as, _, err := other.ListAccounts(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(len(as), 2) // its default account and this one, none of the first company's
			is.Equal(as[0].AccountID, theirs.AccountID)
			is.Equal(as[1].PixKey, "second@example.com")
			is.Equal(available(t, e.svc, ids...), before) // the first company's money unmoved
			auditClean(t, other)
		})
		auditClean(t, e.svc)
	})
}

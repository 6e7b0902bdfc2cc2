package payments_test

import (
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
)

func TestService_UpdateCompany(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		key, city := "+5511988887777", "Rio de Janeiro"
		co, err := e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &key, MerchantCity: &city,
			FeePolicy: &payments.FeePolicy{BasisPoints: 100}})
		is.NoErr(err)
		is.Equal(co.PixKey, "+5511988887777")
		is.Equal(co.MerchantName, "Loja Exemplo") // unchanged
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "after", Value: 10000})
		code, err := brcode.Parse(c.BRCode)
		is.NoErr(err)
		is.Equal(code.Key, "+5511988887777") // new codes use the new identity
		is.Equal(code.City, "Rio de Janeiro")
		is.Equal(c.Fee, int64(100)) // and the new fee policy: 1%, no minimum

		bad := "not a key"
		_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &bad})
		is.Equal(payments.ErrorField(err), "pixKey") // invalid key rejected
		_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{FeePolicy: &payments.FeePolicy{BasisPoints: -1}})
		is.Equal(payments.ErrorField(err), "feePolicy")
		empty := " "
		_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &empty})
		is.Equal(payments.ErrorField(err), "pixKey") // not a random new key
		_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{Name: &empty})
		is.Equal(payments.ErrorField(err), "name")
		got, err := e.svc.GetCompany(ctx)
		is.NoErr(err)
		is.Equal(got.PixKey, "+5511988887777") // failed updates changed nothing
	})
}

// TestService_CompanyNamesABRCodeCanCarry: a company's merchant name and city go into every
// charge's BR Code folded to ASCII; one that folds to nothing is refused, naming the field,
// on create and on update, instead of making every charge of the company fail.
func TestService_CompanyNamesABRCodeCanCarry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, tc := range []struct {
			p     payments.CreateCompanyParams
			field string
		}{
			{payments.CreateCompanyParams{Name: "😀😀😀"}, "name"}, // the merchant name defaults to it
			{payments.CreateCompanyParams{Name: "Loja", MerchantName: "😀"}, "merchantName"},
			{payments.CreateCompanyParams{Name: "Loja", MerchantCity: "東京"}, "merchantCity"},
		} {
			_, err := e.svc.CreateCompany(ctx, tc.p)
			is.Equal(payments.ErrorCode(err), payments.EINVALID)
			is.Equal(payments.ErrorField(err), tc.field)
		}
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Pão & Café 😀"}) // folds to "Pao & Cafe"
		is.NoErr(err)
		is.Equal(co.MerchantName, "Pão & Café 😀")

		emoji := "😀"
		_, err = e.svc.UpdateCompany(ctx, payments.CompanyUpdate{MerchantName: &emoji})
		is.Equal(payments.ErrorField(err), "merchantName")
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "still", Value: 100})
		code, err := brcode.Parse(c.BRCode)
		is.NoErr(err)
		is.Equal(code.Name, "Loja Exemplo") // the update changed nothing
	})
}

// TestOpen_CloseOwnedOnce: only the Service Open returned closes the file; closing the
// Service of another company, or one Authenticate returned, as a deferred Close per request
// would, leaves the store open for everyone.
func TestOpen_CloseOwnedOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.Open(filepath.Join(t.TempDir(), "payments.db"), payments.Options{Clock: payments.NewManualClock(t0)})
	is.NoErr(err)
	co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
	is.NoErr(err)
	other, err := svc.Company(ctx, co.ID)
	is.NoErr(err)
	is.NoErr(other.Close())
	app, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "x"})
	is.NoErr(err)
	req, err := svc.Authenticate(ctx, app.AppID())
	is.NoErr(err)
	is.NoErr(req.Close())
	_, err = svc.GetCompany(ctx)
	is.NoErr(err) // still open
	_, err = other.GetCompany(ctx)
	is.NoErr(err)
	is.NoErr(svc.Close())
	_, err = svc.GetCompany(ctx)
	is.True(err != nil) // the owner's Close closes it
}

// TestService_UpdateCompany_Detached: the company UpdateCompany and GetCompany return is
// the caller's: changing its policies changes nothing in the Service. Before, a company
// read from the decode memo shared its fee policy with the Service's own reads, and a
// caller editing the one an update returned changed the fee of the next charge.
func TestService_UpdateCompany_Detached(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		_, err := e.svc.UpdateCompany(ctx, payments.CompanyUpdate{FeePolicy: &payments.FeePolicy{BasisPoints: 80, Min: 50, Max: 500}})
		is.NoErr(err)
		before := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "before", Value: 100000})
		is.Equal(before.Fee, int64(500)) // 0.8%, at most R$ 5,00

		co, err := e.svc.UpdateCompany(ctx, payments.CompanyUpdate{}) // nothing to change
		is.NoErr(err)
		co.FeePolicy.BasisPoints, co.FeePolicy.Max = 10000, 0 // the caller edits its own copy
		got, err := e.svc.GetCompany(ctx)
		is.NoErr(err)
		got.FeePolicy.Min = 99999

		stored, err := e.svc.GetCompany(ctx)
		is.NoErr(err)
		is.Equal(*stored.FeePolicy, payments.FeePolicy{BasisPoints: 80, Min: 50, Max: 500})
		after := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "after", Value: 100000})
		is.Equal(after.Fee, int64(500)) // still 0.8%
	})
}

// TestService_CreateCompany_NotPartner: a company a partner registers is not a partner;
// asking for one is refused naming partner rather than silently ignored.
func TestService_CreateCompany_NotPartner(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		_, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Reseller", Partner: true})
		is.Equal(payments.ErrorField(err), "partner")
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Shop"})
		is.NoErr(err)
		is.True(!co.Partner)
	})
}

package payments_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
)

func TestService_UpdateCompany(t *testing.T) {
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
		got, err := e.svc.GetCompany(ctx)
		is.NoErr(err)
		is.Equal(got.PixKey, "+5511988887777") // failed updates changed nothing
	})
}

package payments_test

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

func TestService_QRCodeImageByLink(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "img", Value: 1990})
		q, err := other.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa", Value: 500})
		is.NoErr(err)

		for _, tc := range []struct {
			link, brCode string
		}{{c.PaymentLinkID, c.BRCode}, {q.PaymentLinkID, q.BRCode}} {
			for _, svc := range []*payments.Service{e.svc, other} {
				b, err := svc.QRCodeImageByLink(ctx, tc.link, 600)
				is.NoErr(err)                       // found whichever company asks
				is.Equal(decodeQR(t, b), tc.brCode) // the code of the right record
			}
		}
		b, err := e.svc.QRCodeImageByLink(ctx, c.PaymentLinkID, 0)
		is.NoErr(err)
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		is.NoErr(err)
		is.Equal(cfg.Width, payments.DefaultQRSize) // size 0 is the default

		for _, id := range []string{"", "no-such-link", c.CorrelationID, c.TransactionID, q.Identifier} {
			_, err := e.svc.QRCodeImageByLink(ctx, id, 0)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // only a paymentLinkID finds an image
		}
		for _, size := range []int{599, 4097, -1} {
			_, err := e.svc.QRCodeImageByLink(ctx, c.PaymentLinkID, size)
			is.Equal(payments.ErrorField(err), "size") // out of range
		}

		is.NoErr(e.svc.DeleteCharge(ctx, c.CorrelationID))
		is.NoErr(other.DeletePixQRCode(ctx, q.CorrelationID))
		for _, link := range []string{c.PaymentLinkID, q.PaymentLinkID} {
			_, err := e.svc.QRCodeImageByLink(ctx, link, 0)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // gone with its record
		}
	})
}

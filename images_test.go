package payments_test

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/internal/qrtest"
)

// decodeQR reads a PNG back to the text of its QR code (a decoder used in tests only).
func decodeQR(t *testing.T, b []byte) string {
	t.Helper()
	text, _, err := qrtest.Decode(b, true)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestService_QRCodeImage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "img", Value: 1990, Comment: "Pedido 42"})
	q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa", Value: 500})
	is.NoErr(err)
	for _, size := range []int{600, 1024, 4096} {
		b, err := e.svc.QRCodeImage(ctx, c.PaymentLinkID, size)
		is.NoErr(err)
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		is.NoErr(err)
		is.Equal(cfg.Width, size)          // the requested size
		is.Equal(decodeQR(t, b), c.BRCode) // decodes to the exact brCode
	}
	b, err := e.svc.QRCodeImage(ctx, q.PaymentLinkID, 0)
	is.NoErr(err)
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	is.NoErr(err)
	is.Equal(cfg.Width, payments.DefaultQRSize) // default size
	is.Equal(decodeQR(t, b), q.BRCode)          // static QR codes too
	again, err := e.svc.QRCodeImage(ctx, q.PaymentLinkID, 0)
	is.NoErr(err)
	is.Equal(&again[0], &b[0]) // a repeat request is served from the cache

	for _, size := range []int{599, 4097, -1} {
		_, err := e.svc.QRCodeImage(ctx, c.PaymentLinkID, size)
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // out of range
		is.Equal(payments.ErrorField(err), "size")
	}
	_, err = e.svc.QRCodeImage(ctx, "no-such-link", 0)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
}

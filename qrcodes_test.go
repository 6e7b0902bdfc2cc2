package payments_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
)

func TestService_PixQRCodes(t *testing.T) {
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Balcão", CorrelationID: "qr-1", Value: 2500, Comment: "Cafe"})
		is.NoErr(err)
		is.Equal(len(q.Identifier), 25) // a txid the code can carry
		code, err := brcode.Parse(q.BRCode)
		is.NoErr(err)
		is.Equal(code.TxID, q.Identifier) // the identifier is the txid
		is.Equal(code.Amount, int64(2500))
		is.Equal(code.Info, "Cafe")

		open, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Doações"})
		is.NoErr(err)
		is.True(open.CorrelationID != "") // generated
		code, err = brcode.Parse(open.BRCode)
		is.NoErr(err)
		is.Equal(code.Amount, int64(0)) // no value: the payer chooses

		for _, id := range []string{q.ID, "qr-1", q.Identifier, q.PaymentLinkID} {
			got, err := e.svc.GetPixQRCode(ctx, id)
			is.NoErr(err) // by ID, correlationID, identifier and paymentLinkID
			is.Equal(got, q)
		}
		qs, page, err := e.svc.ListPixQRCodes(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 2)
		is.Equal(qs[0].ID, open.ID) // newest first

		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "again", CorrelationID: "qr-1"})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // duplicate correlationID
		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{})
		is.Equal(payments.ErrorField(err), "name") // name required
		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "x", Value: -1})
		is.Equal(payments.ErrorField(err), "value") // negative value
		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "x", PixKey: "other@example.com"})
		is.Equal(payments.ErrorField(err), "pixKey") // not the company's key
		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "x", Comment: strings.Repeat("é", 141)})
		is.Equal(payments.ErrorField(err), "comment") // over 140 characters

		long := string([]rune(strings.Repeat("Obrigado pela preferência! ", 6))[:140])
		lq, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Longo", CorrelationID: "qr-long", Comment: long})
		is.NoErr(err)              // a 140-character comment is accepted
		is.Equal(lq.Comment, long) // and kept whole
		code, err = brcode.Parse(lq.BRCode)
		is.NoErr(err)                                                                // the code stays valid
		is.Equal(code.Info, "Obrigado pela preferencia! Obrigado pela preferencia!") // the longest folded prefix that fits (53), trailing space dropped
		is.NoErr(e.svc.DeletePixQRCode(ctx, "qr-long"))

		is.NoErr(e.svc.DeletePixQRCode(ctx, "qr-1"))
		_, err = e.svc.GetPixQRCode(ctx, "qr-1")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // deleted
		_, page, err = e.svc.ListPixQRCodes(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 1)

		co, err := e.svc.CreateCompany(ctx, payments.CompanyParams{Name: "Other"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		_, err = other.GetPixQRCode(ctx, open.Identifier)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // another company cannot see it
		qs, _, err = other.ListPixQRCodes(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(qs), 0)
	})
}

// TestService_PixQRCode_Identifier: a client may choose a QR code's identifier, its BR
// Code's reference label: found by it, paid through it, unique among the company's codes.
func TestService_PixQRCode_Identifier(t *testing.T) {
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa 1", Identifier: "caixa1loja"})
		is.NoErr(err)
		is.Equal(q.Identifier, "caixa1loja")
		code, err := brcode.Parse(q.BRCode)
		is.NoErr(err)
		is.Equal(code.TxID, "caixa1loja") // the code carries it
		got, err := e.svc.GetPixQRCode(ctx, "caixa1loja")
		is.NoErr(err)
		is.Equal(got.ID, q.ID) // found by it
		tx, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200IDENT0001", Value: 700, TxID: "caixa1loja"})
		is.NoErr(err)
		is.True(tx.PixQrCode != nil && tx.PixQrCode.ID == q.ID) // a Pix with it pays the code

		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa 2", Identifier: "caixa1loja"})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // taken
		is.Equal(payments.ErrorField(err), "identifier")
		for _, bad := range []string{"caixa-1", "caixa 1", strings.Repeat("a", 26), "caixa1ção"} {
			_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "x", Identifier: bad})
			is.Equal(payments.ErrorField(err), "identifier") // not 1 to 25 letters and digits
		}
	})
}

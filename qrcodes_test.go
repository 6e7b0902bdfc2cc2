package payments_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
)

func TestService_PixQRCodes(t *testing.T) {
	t.Parallel()
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

		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Other"})
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
	t.Parallel()
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
		c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "pedido-1", Value: 100})
		is.NoErr(err)
		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa 3", Identifier: c.Identifier[:25]})
		is.Equal(payments.ErrorField(err), "identifier") // a charge's txid: its Pix would pay the charge
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT)
		for _, bad := range []string{"caixa-1", "caixa 1", strings.Repeat("a", 26), "caixa1ção"} {
			_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "x", Identifier: bad})
			is.Equal(payments.ErrorField(err), "identifier") // not 1 to 25 letters and digits
		}
	})
}

// TestService_PixQRCode_Deleted: a deleted static QR code leaves a note, as a deleted
// charge does. Its payments stay listed under its id, correlationID and identifier; a Pix
// paying it later is credited, kept under it and marked "QR code deleted". A new code that
// takes its identifier and correlationID is the one they name, deleted in turn too.
func TestService_PixQRCode_Deleted(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Balcão", CorrelationID: "qr-1", Value: 500, Identifier: "balcao1"})
		is.NoErr(err)
		_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200QRDEL0001", Value: 500, TxID: q.Identifier})
		is.NoErr(err)
		is.NoErr(e.svc.DeletePixQRCode(ctx, "qr-1"))
		listed := func(id string) int {
			xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{PixQrCode: id})
			is.NoErr(err)
			return len(xs)
		}
		for _, id := range []string{q.ID, "qr-1", "balcao1"} {
			is.Equal(listed(id), 1) // its payment, by each of the three
		}

		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200QRDEL0002", Value: 500, TxID: "balcao1"})
		is.NoErr(err) // credited
		is.True(x.PixQrCode != nil && x.PixQrCode.ID == q.ID)
		is.Equal(x.Unmatched, "QR code deleted")
		is.Equal(listed("balcao1"), 2)
		evs, err := e.svc.Events(ctx, 0, 1000)
		is.NoErr(err)
		last := evs[len(evs)-1]
		is.Equal(last.Name, "OPENPIX:TRANSACTION_RECEIVED")
		is.True(strings.Contains(string(last.Data), `"identifier":"balcao1"`)) // the code, as it was

		// Its identifier is not given again: printed copies may still be paid.
		_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Balcão 2", Identifier: "balcao1"})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT)
		is.Equal(payments.ErrorField(err), "identifier")
		// Its correlationID is: a new code takes it, and is deleted in turn.
		q2, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Balcão 2", CorrelationID: "qr-1"})
		is.NoErr(err)
		_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200QRDEL0003", Value: 500, TxID: q2.Identifier})
		is.NoErr(err)
		is.Equal(listed("qr-1"), 1)                 // the live code's
		is.NoErr(e.svc.DeletePixQRCode(ctx, q2.ID)) // its note takes the correlationID
		is.Equal(listed("qr-1"), 1)                 // the newest code's
		is.Equal(listed(q.ID), 2)                   // the first still by its id
		is.Equal(listed("balcao1"), 2)              // and its identifier
		audit(t, e.svc)
	})
}

// TestService_ListFilters_NUL: a filter holding a NUL byte (a client's input, made an
// index name) lists nothing on every store; the memory store, which refuses such names
// in writes, answered it with an internal error (a 500).
func TestService_ListFilters_NUL(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, f := range []payments.TransactionFilter{{Charge: "a\x00b"}, {PixQrCode: "a\x00b"}, {Withdrawal: "a\x00b"}} {
			xs, _, err := e.svc.ListTransactions(ctx, f)
			is.NoErr(err)
			is.Equal(len(xs), 0)
		}
		cs, _, err := e.svc.ListCharges(ctx, payments.ChargeFilter{Customer: "a\x00b"})
		is.NoErr(err)
		is.Equal(len(cs), 0)
	})
}

// TestService_PixQRCode_NamesOneCode: a QR code's identifier and correlationID never name
// another code. Looked up by id, then correlationID, then identifier, a code whose
// identifier was another's correlationID or id was read, deleted and paid in the sandbox
// as the other; so is a correlationID that is another code's identifier or id, live or
// deleted.
func TestService_PixQRCode_NamesOneCode(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "A", CorrelationID: "caixa1", Identifier: "caixa1"})
		is.NoErr(err) // its own correlationID as its identifier names only it
		gone, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Gone", CorrelationID: "gone1"})
		is.NoErr(err)
		is.NoErr(e.svc.DeletePixQRCode(ctx, gone.ID))
		for _, id := range []string{"caixa1", a.ID, "gone1", gone.ID, gone.Identifier} {
			_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "B", Identifier: id})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another code's id, as an identifier
			is.Equal(payments.ErrorField(err), "identifier")
		}
		for _, id := range []string{a.ID, gone.ID, gone.Identifier} {
			_, err = e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "B", CorrelationID: id})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another code's id or identifier, as a correlationID
			is.Equal(payments.ErrorField(err), "correlationID")
		}
		b, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "B", CorrelationID: "gone1"})
		is.NoErr(err) // a deleted code's correlationID may be taken again
		got, err := e.svc.GetPixQRCode(ctx, "gone1")
		is.NoErr(err)
		is.Equal(got.ID, b.ID)
	})
}

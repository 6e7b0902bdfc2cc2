package payments_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// testLinks are Links as an adapter would make them.
type testLinks struct{ base string }

func (l testLinks) PaymentLinkURL(id string) string { return l.base + "/pay/" + id }
func (l testLinks) QRCodeImageURL(id string) string { return l.base + "/img/" + id + ".png" }

// sandboxPix is a Pix from a fictitious payer, for PayPaymentLink.
func sandboxPix(svc *payments.Service) payments.ReceivePixParams {
	return payments.ReceivePixParams{EndToEndID: svc.NewSandboxEndToEndID(), Payer: &payments.Payer{Name: "Payer", TaxID: "11144477735"}}
}

func TestService_PaymentLink(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("Charge", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{
				CorrelationID: "plink-1", Value: 123456, Comment: "Pedido 42", ExpiresIn: 3600,
				Customer: &payments.CreateCustomerParams{Name: "Dan Payer", TaxID: "52998224725", Email: "dan@example.com"},
			})
			l, err := e.svc.PaymentLink(ctx, c.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.ID, c.PaymentLinkID)
			is.Equal(l.Kind, payments.PaymentLinkCharge)
			is.Equal(l.MerchantName, "Loja Exemplo") // the company's merchant name
			is.Equal(l.Value, int64(123456))
			is.Equal(l.AmountDue, int64(123456))
			is.Equal(l.Comment, "Pedido 42")
			is.Equal(l.BRCode, c.BRCode)
			is.Equal(l.Status, payments.PaymentLinkWaiting)
			is.Equal(l.ExpiresAt, c.ExpiresDate)
			is.Equal(l.Now, t0) // the Service's clock
			is.Equal(l.Overdue, false)
			is.True(l.DueDate == nil && l.PaidAt == nil)
			view := fmt.Sprintf("%+v", l)
			for _, secret := range []string{"52998224725", "Dan Payer", "dan@example.com", c.CorrelationID, c.TransactionID} {
				is.True(!strings.Contains(view, secret)) // nothing of the customer, no other id
			}

			for _, id := range []string{"", "no-such-link", c.CorrelationID, c.TransactionID, c.GlobalID} {
				_, err := e.svc.PaymentLink(ctx, id)
				is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // only the exact paymentLinkID
			}
		})

		t.Run("PaidAndExpired", func(t *testing.T) {
			is := is.New(t)
			paid := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "plink-paid", Value: 2500, ExpiresIn: 900})
			late := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "plink-late", Value: 2500, ExpiresIn: 900})
			x, err := e.svc.PayPaymentLink(ctx, paid.PaymentLinkID, sandboxPix(e.svc))
			is.NoErr(err)
			is.Equal(x.Value, int64(2500)) // the amount due
			l, err := e.svc.PaymentLink(ctx, paid.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.Status, payments.PaymentLinkPaid)
			is.True(l.PaidAt != nil)
			_, err = e.svc.PayPaymentLink(ctx, paid.PaymentLinkID, sandboxPix(e.svc))
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // paid once

			e.clock.Advance(15 * time.Minute)
			l, err = e.svc.PaymentLink(ctx, late.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.Status, payments.PaymentLinkExpired) // at its expiry, before any pass records it
			_, err = e.svc.PayPaymentLink(ctx, late.PaymentLinkID, sandboxPix(e.svc))
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // an expired charge takes nothing
			l, err = e.svc.PaymentLink(ctx, paid.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.Status, payments.PaymentLinkPaid) // a paid charge stays paid
		})

		t.Run("Overdue", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{
				CorrelationID: "plink-overdue", Value: 10000, Type: payments.ChargeOverdue, DaysForDueDate: 1, DaysAfterDueDate: 10,
				Fines: &payments.Fines{Value: 200, Type: payments.FineFixed}, Interests: &payments.Interests{Value: 100},
			})
			e.clock.Advance(4 * 24 * time.Hour)
			l, err := e.svc.PaymentLink(ctx, c.PaymentLinkID)
			is.NoErr(err)
			got, err := e.svc.GetCharge(ctx, c.CorrelationID)
			is.NoErr(err)
			is.True(l.Overdue)
			is.Equal(*l.DueDate, *got.DueDate)
			is.True(l.AmountDue > l.Value)       // the fine and interest of paying late
			is.Equal(l.AmountDue, got.AmountDue) // as the charge says at the same time
			is.Equal(l.Status, payments.PaymentLinkWaiting)
			x, err := e.svc.PayPaymentLink(ctx, c.PaymentLinkID, sandboxPix(e.svc))
			is.NoErr(err)
			is.Equal(x.Value, got.AmountDue) // pays the amount due today
			l, err = e.svc.PaymentLink(ctx, c.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.AmountDue, got.AmountDue) // once paid: what was paid

			late := createCharge(t, e, payments.CreateChargeParams{
				CorrelationID: "plink-overdue-expired", Value: 10000, Type: payments.ChargeOverdue, DaysForDueDate: 1, DaysAfterDueDate: 2,
				Fines: &payments.Fines{Value: 200, Type: payments.FineFixed}, Interests: &payments.Interests{Value: 100},
			})
			e.clock.Advance(5 * 24 * time.Hour)
			l, err = e.svc.PaymentLink(ctx, late.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.Status, payments.PaymentLinkExpired)
			is.Equal(l.AmountDue, int64(10000)) // nothing is due any more: the value, not a late amount
		})

		t.Run("QRCode", func(t *testing.T) {
			is := is.New(t)
			fixed, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa", Value: 500, Comment: "Café"})
			is.NoErr(err)
			free, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Gorjeta"})
			is.NoErr(err)
			l, err := e.svc.PaymentLink(ctx, fixed.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.Kind, payments.PaymentLinkQRCode)
			is.Equal(l.Value, int64(500))
			is.Equal(l.Comment, "Café")
			is.Equal(l.BRCode, fixed.BRCode)
			is.Equal(l.Status, payments.PaymentLinkWaiting)
			is.True(l.ExpiresAt.IsZero()) // a static code does not expire

			x, err := e.svc.PayPaymentLink(ctx, fixed.PaymentLinkID, sandboxPix(e.svc))
			is.NoErr(err)
			is.Equal(x.Value, int64(500)) // its fixed value
			l, err = e.svc.PaymentLink(ctx, fixed.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.Status, payments.PaymentLinkWaiting) // a static code takes any number of payments

			_, err = e.svc.PayPaymentLink(ctx, free.PaymentLinkID, sandboxPix(e.svc))
			is.Equal(payments.ErrorField(err), "value") // the payer must choose an amount
			p := sandboxPix(e.svc)
			p.Value = 1234
			x, err = e.svc.PayPaymentLink(ctx, free.PaymentLinkID, p)
			is.NoErr(err)
			is.Equal(x.Value, int64(1234))
		})

		t.Run("Deleted", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "plink-gone", Value: 100})
			q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Gone"})
			is.NoErr(err)
			is.NoErr(e.svc.DeleteCharge(ctx, c.CorrelationID))
			is.NoErr(e.svc.DeletePixQRCode(ctx, q.CorrelationID))
			for _, id := range []string{c.PaymentLinkID, q.PaymentLinkID} {
				_, err := e.svc.PaymentLink(ctx, id)
				is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // gone with its record
				_, err = e.svc.PayPaymentLink(ctx, id, sandboxPix(e.svc))
				is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			}
		})
	})
}

// TestService_PaymentLinkCompanies: a link shows the data of the company that owns it and
// of the record it is for, whichever company's Service reads it, and paying it pays that
// record of that company only.
func TestService_PaymentLinkCompanies(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{
			Name: "Outra Empresa Ltda", TaxID: "11222333000181", PixKey: "pix@outra.example.com", MerchantName: "Outra Loja", MerchantCity: "Recife",
		})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		mine := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "same", Value: 100, Comment: "mine"})
		theirs, err := other.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "same", Value: 900, Comment: "theirs",
			Customer: &payments.CreateCustomerParams{Name: "Eve", TaxID: "52998224725"}})
		is.NoErr(err)

		for _, svc := range []*payments.Service{e.svc, other} {
			l, err := svc.PaymentLink(ctx, theirs.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.MerchantName, "Outra Loja") // the owner's, whoever reads
			is.Equal(l.Value, int64(900))
			is.Equal(l.Comment, "theirs")
			is.Equal(l.BRCode, theirs.BRCode)
			l.BRCode = "" // which holds the merchant's city, as every Pix code does
			view := fmt.Sprintf("%+v", l)
			for _, secret := range []string{"11222333000181", "Outra Empresa Ltda", "Eve", "52998224725", "Recife"} {
				is.True(!strings.Contains(view, secret)) // no company data beyond the merchant name, no customer
			}
			l, err = svc.PaymentLink(ctx, mine.PaymentLinkID)
			is.NoErr(err)
			is.Equal(l.MerchantName, "Loja Exemplo")
			is.Equal(l.Comment, "mine")
		}

		_, err = e.svc.PayPaymentLink(ctx, theirs.PaymentLinkID, sandboxPix(e.svc))
		is.NoErr(err)
		got, err := other.GetCharge(ctx, "same")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeCompleted) // the owner's charge is paid
		got, err = e.svc.GetCharge(ctx, "same")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeActive) // not the reader's charge of the same correlationID
		accts, _, err := other.ListAccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(accts[0].Balance.Total, 900-theirs.Fee) // the money went to the owner, less the fee
		accts, _, err = e.svc.ListAccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(accts[0].Balance.Total, int64(0)) // and none to the reader
	})
}

// TestService_SetLinks: records carry the installed Links' URLs, in events too, and
// nothing without them.
func TestService_SetLinks(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "no-links", Value: 100})
	is.Equal(c.PaymentLinkURL, "") // no adapter: the paymentLinkID only
	is.Equal(c.QRCodeImage, "")
	is.Equal(c.PaymentMethods.Pix.QRCodeImage, "")

	e.svc.SetLinks(testLinks{base: "https://pix.example.com"})
	c, err := e.svc.GetCharge(ctx, "no-links")
	is.NoErr(err)
	is.Equal(c.PaymentLinkURL, "https://pix.example.com/pay/"+c.PaymentLinkID) // on read, records made before too
	is.Equal(c.QRCodeImage, "https://pix.example.com/img/"+c.PaymentLinkID+".png")
	is.Equal(c.PaymentMethods.Pix.QRCodeImage, c.QRCodeImage)
	q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
	is.NoErr(err)
	is.Equal(q.PaymentLinkURL, "https://pix.example.com/pay/"+q.PaymentLinkID)
	is.Equal(q.QRCodeImage, "https://pix.example.com/img/"+q.PaymentLinkID+".png")
	c2 := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "with-links", Value: 100})
	events, err := e.svc.Events(ctx, 0, 1000)
	is.NoErr(err)
	last := events[len(events)-1]
	is.True(strings.Contains(string(last.Data), "https://pix.example.com/pay/"+c2.PaymentLinkID)) // the event's charge too

	e.svc.SetLinks(nil)
	c, err = e.svc.GetCharge(ctx, "no-links")
	is.NoErr(err)
	is.Equal(c.PaymentLinkURL+c.QRCodeImage, "")
}

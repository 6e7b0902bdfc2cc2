package payments_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math/rand/v2"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

func Example() {
	ctx := context.Background()
	svc, err := payments.New(memory.New(), payments.Options{})
	if err != nil {
		panic(err)
	}
	c, err := svc.CreateCustomer(ctx, payments.CreateCustomerParams{
		Name: "Ana Souza", TaxID: "529.982.247-25", Email: "ana@example.com", CorrelationID: "customer-ana",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Name, c.TaxID.Type, c.TaxID.TaxID)

	_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Bad", TaxID: "111.111.111-11"})
	fmt.Println(payments.ErrorCode(err), payments.ErrorField(err))
	// Output:
	// Ana Souza BR:CPF 52998224725
	// invalid taxID
}

// The main in-process flow: create a charge, render its QR image, receive the Pix that pays
// it, refund part of it, and audit the ledger. A fixed clock and a seeded id source make
// every id, and so the output, the same on every run.
func Example_chargeFlow() {
	ctx := context.Background()
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(memory.New(), payments.Options{
		Clock: clock,
		IDs:   rand.NewChaCha8([32]byte{}), // tests only: real ids come from crypto/rand
		DefaultCompany: payments.CreateCompanyParams{
			Name: "Loja", PixKey: "pix@loja.example.com", MerchantName: "Loja", MerchantCity: "Sao Paulo",
		},
	})
	if err != nil {
		panic(err)
	}

	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-1", Value: 1990, Comment: "Pedido 1"})
	if err != nil {
		panic(err)
	}
	fmt.Println("charge:", c.Status, c.Value, c.Identifier)
	fmt.Println("brCode:", c.BRCode)

	image, err := svc.QRCodeImage(ctx, c.PaymentLinkID, 600)
	if err != nil {
		panic(err)
	}
	img, err := png.DecodeConfig(bytes.NewReader(image))
	if err != nil {
		panic(err)
	}
	fmt.Printf("image: %d×%d PNG\n", img.Width, img.Height)

	// A bank connector (or the sandbox) reports the Pix that paid the charge's code.
	clock.Advance(time.Minute)
	x, err := svc.ReceivePix(ctx, payments.ReceivePixParams{
		EndToEndID: "E18236120202611221201s0000000001", Value: 1990, TxID: c.Identifier[:25],
		Payer: &payments.Payer{Name: "Ana Souza", TaxID: "52998224725"},
	})
	if err != nil {
		panic(err)
	}
	c, _ = svc.GetCharge(ctx, "order-1")
	fmt.Println("paid:", c.Status, x.Value, "fee", c.Fee)

	r, err := svc.CreateChargeRefund(ctx, "order-1", payments.CreateChargeRefundParams{CorrelationID: "refund-1", Value: 500})
	if err != nil {
		panic(err)
	}
	fmt.Println("refund:", r.Status, r.Value)
	r, _ = svc.GetRefund(ctx, "refund-1") // the sandbox rail settles at once, after commit
	fmt.Println("refund:", r.Status, r.Value)

	a, _ := svc.DefaultAccount(ctx)
	fmt.Println("balance:", a.Balance.Total, "available", a.Balance.Available)

	report, err := svc.Audit(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("audit ok:", report.OK(), "entries", report.Entries)
	// Output:
	// charge: ACTIVE 1990 6b02d94000006f419ec627c76c951598
	// brCode: 00020126540014br.gov.bcb.pix0120pix@loja.example.com0208Pedido 1520400005303986540519.905802BR5904Loja6009Sao Paulo622905256b02d94000006f419ec627c76630483CA
	// image: 600×600 PNG
	// paid: COMPLETED 1990 fee 50
	// refund: IN_PROCESSING 500
	// refund: CONFIRMED 500
	// balance: 1440 available 1440
	// audit ok: true entries 3
}

// Money going out: request a payment to a Pix key, approve it (the value is held, the
// Rail sends it, the bank's answer settles it), then withdraw to the company's own key.
func Example_paymentFlow() {
	ctx := context.Background()
	svc, err := payments.New(memory.New(), payments.Options{
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"},
	})
	if err != nil {
		panic(err)
	}
	// Fund the account: a charge paid by a Pix (R$ 100,00, fee R$ 0,80).
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-1", Value: 10000})
	if err != nil {
		panic(err)
	}
	if _, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200example0001", Value: 10000, TxID: c.Identifier[:25]}); err != nil {
		panic(err)
	}

	p, err := svc.CreatePayment(ctx, payments.CreatePaymentParams{
		CorrelationID: "rent-11", Value: 2500, DestinationAlias: "ana@example.com", DestinationAliasType: "EMAIL",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("requested:", p.Status, p.Value, p.DestinationAlias)
	p, err = svc.ApprovePayment(ctx, "rent-11")
	if err != nil {
		panic(err)
	}
	fmt.Println("approved:", p.Status)
	p, err = svc.GetPayment(ctx, "rent-11")
	if err != nil {
		panic(err)
	}
	fmt.Println("settled:", p.Status)
	_, err = svc.ApprovePayment(ctx, "rent-11")
	fmt.Println("again:", payments.ErrorCode(err))

	a, err := svc.DefaultAccount(ctx)
	if err != nil {
		panic(err)
	}
	w, err := svc.WithdrawFromAccount(ctx, a.AccountID, 1000)
	if err != nil {
		panic(err)
	}
	fmt.Println("withdrawal:", w.Withdrawal.Status, w.Withdrawal.Value, "fee", w.Withdrawal.Fee, "to", w.Withdrawal.DestinationAlias)
	fmt.Println("balance:", w.Account.Balance.Total)
	report, err := svc.Audit(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("audit ok:", report.OK())
	// Output:
	// requested: CREATED 2500 ana@example.com
	// approved: APPROVED
	// settled: CONFIRMED
	// again: failed_precondition
	// withdrawal: CONFIRMED 1000 fee 100 to pix@loja.example.com
	// balance: 6320
	// audit ok: true
}

// The sandbox's time machine: fifty days of a monthly subscription pass in one call. Each
// month's charge is made on its day and expires a week later, with its events, as if the
// Service had run all along.
func ExampleService_AdvanceClock() {
	ctx := context.Background()
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock})
	if err != nil {
		panic(err)
	}
	_, err = svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{
		CorrelationID: "gym", Value: 9900, DayDue: new(7),
		Customer: &payments.CreateCustomerParams{Name: "Ana Souza", TaxID: "529.982.247-25"},
	})
	if err != nil {
		panic(err)
	}
	now, err := svc.AdvanceClock(ctx, clock, 50*24*time.Hour)
	if err != nil {
		panic(err)
	}
	fmt.Println("now", now.Format(time.DateOnly))
	charges, _, err := svc.ListCharges(ctx, payments.ChargeFilter{Subscription: "gym"})
	if err != nil {
		panic(err)
	}
	for _, c := range charges {
		fmt.Println(c.CorrelationID, c.Status, c.ExpiresDate.Format(time.DateOnly))
	}
	events, err := svc.Events(ctx, 0, 100)
	if err != nil {
		panic(err)
	}
	for _, ev := range events {
		fmt.Println(ev.Time.Format(time.DateOnly), ev.Name)
	}
	// Output:
	// now 2027-01-11
	// gym:2027-01-05 ACTIVE 2027-01-12
	// gym:2026-12-05 EXPIRED 2026-12-12
	// 2026-12-05 OPENPIX:CHARGE_CREATED
	// 2026-12-12 OPENPIX:CHARGE_EXPIRED
	// 2027-01-05 OPENPIX:CHARGE_CREATED
}

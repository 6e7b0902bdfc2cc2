package payments_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/sandbox"
	"github.com/pixfoundry/payments/store/memory"
)

// collectingBank is the sandbox as a bank that registers charges, recording what it is
// asked and failing the calls it is told to.
type collectingBank struct {
	*sandbox.Rail
	mu          sync.Mutex
	issued      []rail.Charge
	removed     []string
	failIssue   int  // the next n IssueCharge calls fail (a 5xx: outcome unknown)
	refuseIssue bool // IssueCharge answers an *rail.InvalidError
	failRemove  bool
}

func (b *collectingBank) IssueCharge(ctx context.Context, c rail.Charge) (rail.IssuedCharge, error) {
	b.mu.Lock()
	b.issued = append(b.issued, c)
	fail := b.failIssue > 0
	if fail {
		b.failIssue--
	}
	b.mu.Unlock()
	switch {
	case fail:
		return rail.IssuedCharge{}, errors.New("bank: 500 internal error")
	case b.refuseIssue:
		return rail.IssuedCharge{}, rail.Invalid("chave", "the key is not the account's")
	}
	return b.Rail.IssueCharge(ctx, c)
}

func (b *collectingBank) RemoveCharge(ctx context.Context, txid string) error {
	b.mu.Lock()
	b.removed = append(b.removed, txid)
	fail := b.failRemove
	b.mu.Unlock()
	if fail {
		return errors.New("bank: connection reset")
	}
	return b.Rail.RemoveCharge(ctx, txid)
}

func (b *collectingBank) calls() []rail.Charge {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]rail.Charge(nil), b.issued...)
}

func newBankService(t *testing.T) (*payments.Service, *collectingBank, *payments.ManualClock) {
	t.Helper()
	clock := payments.NewManualClock(t0)
	bank := &collectingBank{Rail: sandbox.New(clock, 0)}
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, Rail: bank, BankCharges: true,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo"}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, bank, clock
}

func TestBankCharges_Dynamic(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, bank, _ := newBankService(t)
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 1990, Comment: "pedido 1",
		Customer: &payments.CreateCustomerParams{Name: "Ana", TaxID: "529.982.247-25"}})
	is.NoErr(err)
	calls := bank.calls()
	is.Equal(len(calls), 1) // registered once
	rc := calls[0]
	is.Equal(rc.TxID, c.TransactionID) // under the charge's transactionID: 32 letters and digits
	is.Equal(len(rc.TxID), 32)
	is.Equal(rc.Value, int64(1990))
	is.Equal(rc.Key, "pix@loja.example.com")
	is.True(rc.Expires.Equal(c.ExpiresDate))
	is.Equal(rc.Message, "pedido 1")
	is.Equal([]string{rc.PayerName, rc.PayerTaxID}, []string{"Ana", "52998224725"})
	is.True(rc.Due == nil) // an immediate charge: a cob
	again, err := bank.Rail.IssueCharge(ctx, rc)
	is.NoErr(err)
	is.Equal(c.BRCode, again.BRCode) // the charge carries the bank's code

	got, err := svc.GetCharge(ctx, c.CorrelationID)
	is.NoErr(err)
	is.Equal(got.BRCode, c.BRCode) // and keeps it

	// The bank's Pix for the charge carries its txid (the whole transactionID) and finds it.
	routed, err := svc.ReceiveBankPix(ctx, rail.ReceivedPix{EndToEndID: "E12345678202611221200abcdefghijk", TxID: c.TransactionID,
		Key: "pix@loja.example.com", Value: 1990, At: t0.Add(time.Minute)})
	is.NoErr(err)
	is.Equal(routed.CompanyID, svc.CompanyID())
	got, err = svc.GetCharge(ctx, c.CorrelationID)
	is.NoErr(err)
	is.Equal(got.Status, payments.ChargeCompleted) // paid
}

func TestBankCharges_BankDown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, bank, _ := newBankService(t)
	bank.failIssue = 100
	_, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 1990})
	is.Equal(payments.ErrorCode(err), payments.EUNAVAILABLE) // a 503 on the wire
	is.Equal(payments.ErrorField(err), "bank")               // naming the bank
	calls := bank.calls()
	is.Equal(len(calls), 3) // tried three times
	for _, c := range calls {
		is.Equal(c.TxID, calls[0].TxID) // under one txid: one charge at the bank, however many tries
	}
	_, err = svc.GetCharge(ctx, "c1")
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nothing half-made

	bank.failIssue = 1 // the first call fails, the retry registers it
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 1990})
	is.NoErr(err)
	calls = bank.calls()[3:]
	is.Equal(len(calls), 2)
	is.Equal(calls[0].TxID, calls[1].TxID) // the retry reused the txid
	is.Equal(calls[1].TxID, c.TransactionID)
}

func TestBankCharges_NoCallForWhatFailsHere(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, bank, _ := newBankService(t)
	_, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: -5})
	is.Equal(payments.ErrorField(err), "value") // invalid input
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100})
	is.NoErr(err)
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100})
	is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // a taken correlationID
	same, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100, ReturnExisting: true})
	is.NoErr(err)
	is.Equal(same.ID, c.ID)        // returned as it is
	is.Equal(len(bank.calls()), 1) // only c2's registration reached the bank

	bank.refuseIssue = true
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c3", Value: 100})
	is.Equal(payments.ErrorCode(err), payments.EINVALID) // the bank's refusal is the caller's to fix
	is.Equal(payments.ErrorField(err), "chave")
	is.Equal(len(bank.calls()), 2) // asked once: a refusal is not retried
}

func TestBankCharges_Overdue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, bank, _ := newBankService(t)
	p := payments.CreateChargeParams{CorrelationID: "o1", Value: 10000, Type: payments.ChargeOverdue, DaysForDueDate: 5, DaysAfterDueDate: 10,
		Fines: &payments.Fines{Value: 200, Type: payments.FinePercentage}, Interests: &payments.Interests{Value: 3},
		Discount: &payments.DiscountSettings{Modality: payments.DiscountFixedUntilDate, DiscountFixedDate: []payments.DiscountTier{{DaysActive: 2, Value: 500}}}}
	_, err := svc.CreateCharge(ctx, p)
	is.Equal(payments.ErrorField(err), "customer") // the bank's due-date charge names its payer
	is.Equal(len(bank.calls()), 0)

	p.Customer = &payments.CreateCustomerParams{Name: "Bruno", TaxID: "11.222.333/0001-81"}
	c, err := svc.CreateCharge(ctx, p)
	is.NoErr(err)
	rc := bank.calls()[0]
	is.Equal(rc.PayerTaxID, "11222333000181")
	is.Equal(*rc.Due, rail.DueTerms{Date: c.DueDate.In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly), DaysAfter: 10,
		FineBasisPoints: 200, InterestBasisPointsPerDay: 3,
		DiscountTiers: []rail.DiscountTier{{Date: c.DueDate.In(time.FixedZone("BRT", -3*3600)).AddDate(0, 0, -2).Format(time.DateOnly), Centavos: 500}}})
}

func TestBankCharges_DeleteAndExpiry(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, bank, _ := newBankService(t)
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 100})
	is.NoErr(err)
	_, err = svc.UpdateChargeExpiry(ctx, c.CorrelationID, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // not moved at the bank: refused, saying so

	bank.failRemove = true
	err = svc.DeleteCharge(ctx, c.CorrelationID)
	is.Equal(payments.ErrorCode(err), payments.EUNAVAILABLE) // the bank did not withdraw it
	_, err = svc.GetCharge(ctx, c.CorrelationID)
	is.NoErr(err) // so it is not deleted

	bank.failRemove = false
	is.NoErr(svc.DeleteCharge(ctx, c.CorrelationID))
	_, err = svc.GetCharge(ctx, c.CorrelationID)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
	is.Equal(bank.removed, []string{c.TransactionID, c.TransactionID}) // withdrawn at the bank under its txid
	err = bank.Rail.RemoveCharge(ctx, c.TransactionID)
	is.True(errors.Is(err, rail.ErrUnknownCharge)) // gone there
}

func TestBankCharges_NeedsACollector(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := payments.New(memory.New(), payments.Options{Rail: sendOnly{}, BankCharges: true})
	is.True(err != nil) // a Rail that registers no charges cannot take them
}

// sendOnly is a Rail that is no rail.Collector and looks up no keys (as the API Pix).
type sendOnly struct{}

func (sendOnly) Send(context.Context, rail.PixOrder) (rail.Settlement, error) {
	return rail.Settlement{Status: rail.SettlementPending}, nil
}
func (sendOnly) Status(context.Context, rail.PixOrder) (rail.Settlement, error) {
	return rail.Settlement{Status: rail.SettlementPending}, nil
}
func (sendOnly) ResolveKey(_ context.Context, key string, kt brcode.KeyType) (rail.KeyOwner, error) {
	return rail.KeyOwner{}, rail.ErrNoKeyLookup
}

// TestPayment_BankWithoutKeyLookup: a bank that cannot say who owns a key (the API Pix)
// still takes a payment to it, named by the key alone.
func TestPayment_BankWithoutKeyLookup(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.New(memory.New(), payments.Options{Rail: sendOnly{}, Clock: payments.NewManualClock(t0),
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	pay, err := svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentPixKey, Value: 500,
		DestinationAlias: "bruno@example.com", DestinationAliasType: "EMAIL", CorrelationID: "p1"})
	is.NoErr(err)
	is.Equal(pay.Destination.PixKey, "bruno@example.com") // the key
	is.Equal(pay.Destination.Name, "")                    // and no owner: the bank could not say
}

// TestBankCharges_StaticQRCodesStayLocal: a static QR code is a static BR Code with the
// company's key, made here: the bank registers nothing for it.
func TestBankCharges_StaticQRCodesStayLocal(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, bank, _ := newBankService(t)
	q, err := svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "balcão", CorrelationID: "q1", Value: 500})
	is.NoErr(err)
	code, err := brcode.Parse(q.BRCode)
	is.NoErr(err)
	is.True(!code.Dynamic())                   // static
	is.Equal(code.Key, "pix@loja.example.com") // with the company's key
	is.Equal(len(bank.calls()), 0)             // nothing registered at the bank
}

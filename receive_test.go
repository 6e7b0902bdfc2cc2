package payments_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

var e2eSeq atomic.Int64

// newE2E returns a fresh endToEndId shaped like the network's.
func newE2E() string { return fmt.Sprintf("E99999999202611221200%011d", e2eSeq.Add(1)) }

// pay pays a charge with the amount due now, as a bank would report it.
func pay(t *testing.T, e env, c payments.Charge) payments.Transaction {
	t.Helper()
	got, err := e.svc.GetCharge(ctx, c.CorrelationID)
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{
		EndToEndID: newE2E(), Value: got.AmountDue, TxID: c.Identifier[:25],
		Payer: &payments.Payer{Name: "Payer", TaxID: "11144477735"}, InfoPagador: "obrigado",
	})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// balance returns the default account's balance.
func balance(t *testing.T, e env) payments.Balance {
	t.Helper()
	a, err := e.svc.DefaultAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}

// audit fails the test unless the company's ledger re-derives cleanly.
func audit(t *testing.T, svc *payments.Service) {
	t.Helper()
	r, err := svc.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("audit: %v", r.Problems)
	}
}

func eventNames(t *testing.T, svc *payments.Service) []string {
	t.Helper()
	evs, err := svc.Events(ctx, 0, payments.MaxLimit)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Name)
	}
	return out
}

func TestService_ReceivePix(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("PaysCharge", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "paid", Value: 1050,
				Customer: &payments.CreateCustomerParams{Name: "Dan", TaxID: "52998224725"}})
			e.clock.Advance(time.Minute)
			x := pay(t, e, c)
			is.Equal(x.Type, payments.TransactionPayment)
			is.Equal(x.Value, int64(1050))
			is.Equal(x.Fee, int64(50)) // default policy minimum
			is.Equal(x.Charge.Status, payments.ChargeCompleted)
			is.Equal(x.Customer.Name, "Dan") // the charge's customer
			is.Equal(x.Payer.TaxID.TaxID, "11144477735")
			is.Equal(x.Raw.Valor, "10.50") // formatted from centavos
			is.Equal(x.Unmatched, "")

			got, err := e.svc.GetCharge(ctx, "paid")
			is.NoErr(err)
			is.Equal(got.Status, payments.ChargeCompleted) // completed
			is.Equal(*got.PaidAt, t0.Add(time.Minute))
			is.Equal(got.PaidValue, int64(1050))
			is.Equal(got.EndToEndID, x.EndToEndID)
			is.Equal(balance(t, e), payments.Balance{Total: 1000, Available: 1000}) // value less fee
			is.Equal(eventNames(t, e.svc), []string{"OPENPIX:CHARGE_CREATED", "OPENPIX:CHARGE_COMPLETED",
				"OPENPIX:CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER", "OPENPIX:TRANSACTION_RECEIVED"}) // the payer is not Dan

			for _, id := range []string{x.TransactionID, x.EndToEndID, x.GlobalID} {
				got, err := e.svc.GetTransaction(ctx, id)
				is.NoErr(err) // by transactionID, endToEndId and globalID
				is.Equal(got.TransactionID, x.TransactionID)
			}
			_, err = e.svc.GetTransaction(ctx, base64.StdEncoding.EncodeToString([]byte("Charge:"+c.ID)))
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // a charge's globalID is not a transaction's

			again, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: x.EndToEndID, Value: 1050, TxID: c.Identifier[:25]})
			is.NoErr(err)
			is.Equal(again.TransactionID, x.TransactionID)                          // the same Pix twice is one transaction
			is.Equal(balance(t, e), payments.Balance{Total: 1000, Available: 1000}) // credited once
			_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: x.EndToEndID, Value: 999, TxID: c.Identifier[:25]})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // same id, other value
			audit(t, e.svc)
		})
	})
}

func TestService_ReceivePix_CannotTake(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		paid := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "paid", Value: 1000})
		pay(t, e, paid)
		short := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "short", Value: 1000, ExpiresIn: 900})
		wrong := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "wrong", Value: 1000})
		deleted := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "deleted", Value: 1000})
		is.NoErr(e.svc.DeleteCharge(ctx, "deleted"))
		e.clock.Advance(time.Hour) // "short" expires
		before := balance(t, e).Total

		for _, tc := range []struct {
			txid   string
			value  int64
			reason string
		}{
			{paid.Identifier[:25], 1000, "charge already completed"},
			{short.Identifier[:25], 1000, "charge expired"},
			{wrong.Identifier[:25], 999, "value 9.99 differs from the amount due 10.00"},
			{deleted.Identifier[:25], 1000, "charge deleted"}, // credited to the company, with the reason
			{"unknownreference", 1000, ""},
		} {
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: tc.value, TxID: tc.txid})
			is.NoErr(err)                                        // never refused
			is.Equal(x.Unmatched, tc.reason)                     // with the reason recorded
			is.Equal(balance(t, e).Total, before+tc.value-x.Fee) // and credited
			before += tc.value - x.Fee
		}
		got, err := e.svc.GetCharge(ctx, "wrong")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeActive) // a wrong value does not complete it
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Charge: "paid"})
		is.NoErr(err)
		is.Equal(len(xs), 2) // both Pix of the paid charge are listed under it
		for _, id := range []string{deleted.TransactionID, deleted.GlobalID} {
			xs, _, err = e.svc.ListTransactions(ctx, payments.TransactionFilter{Charge: id})
			is.NoErr(err)
			is.Equal(len(xs), 1)                            // the Pix after deletion is found under the deleted charge, by either id
			is.Equal(xs[0].Charge.CorrelationID, "deleted") // which it names
		}
		again := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "deleted", Value: 500})
		is.True(again.TransactionID != deleted.TransactionID) // its correlationID is free for a new charge
		audit(t, e.svc)
	})
}

func TestService_ReceivePix_Invalid(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, tc := range []struct {
			p     payments.ReceivePixParams
			code  payments.Code
			field string
		}{
			{payments.ReceivePixParams{Value: 100}, payments.EINVALID, "endToEndId"},
			{payments.ReceivePixParams{EndToEndID: newE2E()}, payments.EINVALID, "value"},
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: -1}, payments.EINVALID, "value"},
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, PixKey: "nope"}, payments.EINVALID, "pixKey"},
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, PixKey: "someone@else.com"}, payments.ENOTFOUND, ""},
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, Payer: &payments.Payer{Name: "x", TaxID: "123"}}, payments.EINVALID, "payer.taxID"},
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}, payments.EINVALID, "time"}, // panicked encoding it
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, Time: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}, payments.EINVALID, "time"},  // a zero value gone wrong
			{payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, Time: t0.Add(48 * time.Hour)}, payments.EINVALID, "time"},                    // from the future
		} {
			_, err := e.svc.ReceivePix(ctx, tc.p)
			is.Equal(payments.ErrorCode(err), tc.code)
			is.Equal(payments.ErrorField(err), tc.field)
		}
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c", Value: 100})
		_, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, TxID: c.Identifier[:25], Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)})
		is.Equal(payments.ErrorField(err), "time") // with a charge to pay too: refused, not a panic
		is.Equal(balance(t, e).Total, int64(0))    // nothing credited
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{})
		is.NoErr(err)
		is.Equal(len(xs), 0) // nothing recorded
		audit(t, e.svc)
	})
}

func TestService_ReceivePix_StaticQRCode(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa", CorrelationID: "caixa"})
		is.NoErr(err)
		other, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Outro"})
		is.NoErr(err)
		for _, v := range []int64{1000, 2500, 1000} {
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: v, TxID: q.Identifier})
			is.NoErr(err)
			is.Equal(x.PixQrCode.Identifier, q.Identifier) // tied to the QR code
			e.clock.Advance(time.Second)
		}
		_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 700, TxID: other.Identifier})
		is.NoErr(err)
		for _, id := range []string{"caixa", q.Identifier, q.ID} {
			xs, page, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{PixQrCode: id})
			is.NoErr(err)
			is.Equal(page.TotalCount, 3) // every payment makes a new transaction
			is.Equal(xs[0].Value, int64(1000))
		}
		xs, page, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Start: t0.Add(time.Second), End: t0.Add(2 * time.Second)})
		is.NoErr(err)
		is.Equal(page.TotalCount, 2) // time range, inclusive
		is.Equal(xs[0].Value, int64(1000))
		_, page, err = e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionPayment})
		is.NoErr(err)
		is.Equal(page.TotalCount, 4)
		is.Equal(balance(t, e).Total, int64(1000-50+2500-50+1000-50+700-50))

		// The filters combine: a transaction is listed when it matches all of them.
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "combined", Value: 900})
		pay(t, e, c)
		for _, tc := range []struct {
			name string
			f    payments.TransactionFilter
			want []int64 // values, newest first
		}{
			{"QRCodeAndTime", payments.TransactionFilter{PixQrCode: "caixa", Start: t0.Add(time.Second), End: t0.Add(2 * time.Second)}, []int64{1000, 2500}},
			{"QRCodeAndStart", payments.TransactionFilter{PixQrCode: "caixa", Start: t0.Add(2 * time.Second)}, []int64{1000}},
			{"QRCodeAndType", payments.TransactionFilter{PixQrCode: q.Identifier, Type: payments.TransactionPayment}, []int64{1000, 2500, 1000}},
			{"QRCodeAndOtherType", payments.TransactionFilter{PixQrCode: "caixa", Type: payments.TransactionRefund}, nil},
			{"ChargeAndType", payments.TransactionFilter{Charge: "combined", Type: payments.TransactionPayment}, []int64{900}},
			{"ChargeAndOtherType", payments.TransactionFilter{Charge: "combined", Type: payments.TransactionRefund}, nil},
			{"ChargeAndTime", payments.TransactionFilter{Charge: "combined", End: t0.Add(time.Second)}, nil},
			{"ChargeAndQRCode", payments.TransactionFilter{Charge: "combined", PixQrCode: "caixa"}, nil},
			{"WithdrawalAndType", payments.TransactionFilter{Withdrawal: "w", Type: payments.TransactionPayment}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				xs, page, err := e.svc.ListTransactions(ctx, tc.f)
				is.NoErr(err) // the filters combine, none is refused
				var got []int64
				for _, x := range xs {
					got = append(got, x.Value)
				}
				is.Equal(got, tc.want)                  // exactly the transactions matching all
				is.Equal(page.TotalCount, len(tc.want)) // and counted so
			})
		}
		audit(t, e.svc)
	})
}

// TestService_ReceivePix_StaticQRCodeFixedValue: a static QR code with a fixed value paid
// another amount keeps the Pix under the code, credited, but marked in Unmatched with the
// reason, as a charge paid the wrong amount is, so the company can find and refund it.
// Before, it was an ordinary payment of the code; the sandbox and the payment page refuse
// that amount outright.
func TestService_ReceivePix_StaticQRCodeFixedValue(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Fixo", CorrelationID: "fixo", Value: 5000})
		is.NoErr(err)
		before := balance(t, e).Total
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 100, TxID: q.Identifier})
		is.NoErr(err)                                                              // never refused
		is.Equal(x.Unmatched, "value 1.00 differs from the QR code's value 50.00") // but marked
		is.Equal(x.PixQrCode.Identifier, q.Identifier)                             // under the code
		is.Equal(balance(t, e).Total, before+100-x.Fee)                            // and credited
		x, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 5000, TxID: q.Identifier})
		is.NoErr(err)
		is.Equal(x.Unmatched, "") // its value pays it
		_, page, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{PixQrCode: "fixo"})
		is.NoErr(err)
		is.Equal(page.TotalCount, 2)
		audit(t, e.svc)
	})
}

func TestService_ReceivePix_SubaccountAndSplits(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, key := range []string{"loja1@example.com", "loja2@example.com"} {
			_, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: key, Name: key})
			is.NoErr(err)
		}
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "to-sub", Value: 10000, Subaccount: "loja1@example.com"})
		pay(t, e, c)
		sub, err := e.svc.GetSubaccount(ctx, "loja1@example.com")
		is.NoErr(err)
		is.Equal(sub.Balance, int64(10000-80)) // the net amount goes to the subaccount
		is.Equal(balance(t, e).Total, int64(0))

		c = createCharge(t, e, payments.CreateChargeParams{CorrelationID: "split", Value: 10000, Splits: []payments.Split{
			{Value: 3000, PixKey: "loja1@example.com"}, {Value: 2000, PixKey: "loja2@example.com"},
		}})
		pay(t, e, c)
		sub, err = e.svc.GetSubaccount(ctx, "loja1@example.com")
		is.NoErr(err)
		is.Equal(sub.Balance, int64(10000-80+3000))
		sub, err = e.svc.GetSubaccount(ctx, "loja2@example.com")
		is.NoErr(err)
		is.Equal(sub.Balance, int64(2000))
		is.Equal(balance(t, e).Total, int64(10000-80-3000-2000)) // the rest stays with the company
		audit(t, e.svc)
	})
}

func TestService_ReceivePix_Overdue(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "late", Value: 10000, Type: payments.ChargeOverdue,
			DaysForDueDate: 2, DaysAfterDueDate: 5, Fines: &payments.Fines{Value: 200}, Interests: &payments.Interests{Value: 10}})
		e.clock.Advance(4 * 24 * time.Hour) // 2 days late
		_, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 10000, TxID: c.Identifier[:25]})
		is.NoErr(err)
		got, err := e.svc.GetCharge(ctx, "late")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeActive) // the value alone is not enough once late
		x := pay(t, e, c)
		is.Equal(x.Value, int64(10000+200+2*10)) // fine + 2 days of interest
		got, err = e.svc.GetCharge(ctx, "late")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeCompleted)
		is.Equal(got.PaidValue, int64(10220))
		audit(t, e.svc)
	})
}

// TestService_ReceivePix_BeforeCharge: a Pix the bank dated before its OVERDUE charge was
// created is priced as at the creation, with the largest discount the charge offers and
// no more. Priced by the days before it, 3,000 paid a 10,000 charge whose largest
// discount was 2,000.
func TestService_ReceivePix_BeforeCharge(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "od", Value: 10000, Type: payments.ChargeOverdue,
			DaysForDueDate: 2, Discount: &payments.DiscountSettings{Modality: payments.DiscountValuePerDay, Value: 1000}})
		is.Equal(c.AmountDue, int64(8000)) // two days early: 2,000 off, the most it offers
		early := t0.Add(-5 * 24 * time.Hour)
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 3000, TxID: c.Identifier[:25], Time: early})
		is.NoErr(err)
		is.True(x.Unmatched != "") // too little: credited, not paying the charge
		got, err := e.svc.GetCharge(ctx, "od")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeActive)
		_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 8000, TxID: c.Identifier[:25], Time: early})
		is.NoErr(err)
		got, err = e.svc.GetCharge(ctx, "od")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeCompleted) // the amount due at its creation pays it
		audit(t, e.svc)
	})
}

// TestService_ReceivePix_EndToEndIDLikeAnotherID: a Pix is a retry of an earlier one only
// if their endToEndIds are the same. One whose endToEndId happened to be another Pix's
// transactionID or globalID was taken for a retry of that Pix and never recorded.
func TestService_ReceivePix_EndToEndIDLikeAnotherID(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		x1, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000})
		is.NoErr(err)
		for i, id := range []string{x1.TransactionID, x1.GlobalID} {
			before := balance(t, e).Total
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: id, Value: 1000})
			is.NoErr(err)
			is.Equal(x.EndToEndID, id)                   // the Pix received is the one recorded
			is.True(x.TransactionID != x1.TransactionID) // a new transaction
			is.True(balance(t, e).Total > before)        // and credited
			_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: id, Value: 1000 + int64(i) + 1})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // its own retries are still checked
		}
		audit(t, e.svc)
	})
}

func TestService_ReceivePix_CompanyIsolation(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "mine", Value: 1000})
		x := pay(t, e, c)
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Other"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		_, err = other.GetTransaction(ctx, x.EndToEndID)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not its transaction
		_, err = other.GetTransaction(ctx, x.GlobalID)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // by globalID neither
		_, err = other.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "steal", Value: 100})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot refund it
		_, err = other.CreateChargeRefund(ctx, "mine", payments.CreateChargeRefundParams{CorrelationID: "steal2"})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		// A Pix with the first company's txid, reported to the second, does not pay the charge.
		y, err := other.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, TxID: c.Identifier[:25]})
		is.NoErr(err)
		is.Equal(y.Charge, (*payments.ChargeRef)(nil))
		a, err := other.DefaultAccount(ctx)
		is.NoErr(err)
		is.Equal(a.Balance.Total, int64(950)) // credited to the company it reached
		is.Equal(balance(t, e).Total, int64(950))
		audit(t, e.svc)
		audit(t, other)
	})
}

func TestService_ReceiveChargePix(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		payer := payments.ReceivePixParams{Payer: &payments.Payer{Name: "Payer", TaxID: "11144477735"}, InfoPagador: "obrigado"}
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "ok", Value: 1000})
			p := payer
			p.EndToEndID, p.Value, p.TxID = newE2E(), 1, "ignored" // the txid is set from the charge
			_, _, err := e.svc.ReceiveChargePix(ctx, c.TransactionID, p)
			is.Equal(payments.ErrorField(err), "value") // a value given must be the amount due
			p.Value = 0                                 // none: the amount due
			x, got, err := e.svc.ReceiveChargePix(ctx, c.TransactionID, p)
			is.NoErr(err)
			is.Equal(x.Value, int64(1000))                 // the amount due
			is.Equal(x.Raw.TxID, c.Identifier[:25])        // with the charge's txid
			is.Equal(x.Unmatched, "")                      // taken by the charge
			is.Equal(x.Charge.CorrelationID, "ok")         // and linked to it
			is.Equal(got.Status, payments.ChargeCompleted) // the charge as the payment left it
			is.Equal(got.EndToEndID, x.EndToEndID)
		})
		t.Run("ErrAlreadyPaid", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "paid", Value: 1000})
			pay(t, e, c)
			p := payer
			p.EndToEndID = newE2E()
			_, _, err := e.svc.ReceiveChargePix(ctx, "paid", p)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION)           // refused
			is.Equal(payments.ErrorMessage(err), "charge paid is already paid") // saying why
			_, err = e.svc.GetTransaction(ctx, p.EndToEndID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no unmatched Pix recorded
		})
		t.Run("ErrEndToEndIDUsed", func(t *testing.T) {
			is := is.New(t)
			paid := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "first", Value: 1000})
			x := pay(t, e, paid)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "second", Value: 1000})
			p := payer
			p.EndToEndID = x.EndToEndID // the Pix that paid another charge
			_, _, err := e.svc.ReceiveChargePix(ctx, c.CorrelationID, p)
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // not a 200 that paid nothing
			is.Equal(payments.ErrorField(err), "endToEndId")
			got, err := e.svc.GetCharge(ctx, "second")
			is.NoErr(err)
			is.Equal(got.Status, payments.ChargeActive) // still to be paid
		})
		t.Run("ErrExpired", func(t *testing.T) {
			is := is.New(t)
			createCharge(t, e, payments.CreateChargeParams{CorrelationID: "short", Value: 1000, ExpiresIn: 900})
			e.clock.Advance(900 * time.Second)
			p := payer
			p.EndToEndID = newE2E()
			_, _, err := e.svc.ReceiveChargePix(ctx, "short", p)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION)        // refused at its expiry time
			is.Equal(payments.ErrorMessage(err), "charge short has expired") // saying why
			_, _, err = e.svc.ReceiveChargePix(ctx, "nope", p)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // an unknown charge
			_, err = e.svc.GetTransaction(ctx, p.EndToEndID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nothing recorded
		})
		t.Run("Concurrent", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "race", Value: 1000})
			_, before, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{})
			is.NoErr(err)
			const n = 10
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := payer
					p.EndToEndID = newE2E() // each its own Pix, as the sandbox makes them
					_, _, errs[i] = e.svc.ReceiveChargePix(ctx, c.CorrelationID, p)
				}()
			}
			wg.Wait()
			paid := 0
			for _, err := range errs {
				switch payments.ErrorCode(err) {
				case "":
					paid++
				case payments.EPRECONDITION:
					is.Equal(payments.ErrorMessage(err), "charge race is already paid") // the others refused
				default:
					t.Fatalf("unexpected error: %v", err)
				}
			}
			is.Equal(paid, 1) // exactly one call pays
			_, after, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{})
			is.NoErr(err)
			is.Equal(after.TotalCount, before.TotalCount+1) // one transaction
		})
		audit(t, e.svc)
	})
}

// TestService_ReceivePix_SettledInTimeReportedLate: whether a Pix came too late is a
// question of when it settled (ReceivePixParams.Time), not of when the bank reported it.
// A Pix settled before the charge's expiry and reported after it pays the charge, before
// the due pass has recorded it EXPIRED and after (CHARGE_COMPLETED then follows
// CHARGE_EXPIRED). Before, both were recorded "charge expired" and the charges stayed
// unpaid.
func TestService_ReceivePix_SettledInTimeReportedLate(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		receive := func(t *testing.T, c payments.Charge, value int64, at time.Time) {
			t.Helper()
			is := is.New(t)
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: value, TxID: c.Identifier[:25], Time: at})
			is.NoErr(err)
			is.Equal(x.Unmatched, "")
			got, err := e.svc.GetCharge(ctx, c.CorrelationID)
			is.NoErr(err)
			is.Equal(got.Status, payments.ChargeCompleted) // paid in time
			is.Equal(got.PaidAt.Equal(at), true)
		}
		t.Run("BeforeTheDuePass", func(t *testing.T) {
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "dyn", Value: 1000, ExpiresIn: 900})
			e.clock.Set(c.ExpiresDate.Add(time.Second))
			receive(t, c, 1000, c.ExpiresDate.Add(-time.Second))
		})
		t.Run("AfterTheDuePass", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "passed", Value: 1000, ExpiresIn: 900})
			e.clock.Set(c.ExpiresDate.Add(time.Minute))
			is.NoErr(e.svc.RunDue(ctx)) // recorded EXPIRED, with its event
			receive(t, c, 1000, c.ExpiresDate.Add(-time.Millisecond))
			evs, err := e.svc.Events(ctx, 0, 100)
			is.NoErr(err)
			var names []string
			for _, ev := range evs {
				if strings.Contains(string(ev.Data), `"passed"`) {
					names = append(names, strings.TrimPrefix(ev.Name, "OPENPIX:"))
				}
			}
			is.Equal(names, []string{payments.EventChargeCreated, payments.EventChargeExpired, payments.EventChargeCompleted, payments.EventTransactionReceived})
		})
		t.Run("OverdueLastLateDay", func(t *testing.T) {
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "od", Value: 10000, Type: payments.ChargeOverdue,
				DaysForDueDate: 1, DaysAfterDueDate: 1, Fines: &payments.Fines{Value: 200}, Interests: &payments.Interests{Value: 10}})
			e.clock.Set(c.ExpiresDate.Add(time.Minute))
			receive(t, c, 10000+200+10, c.ExpiresDate.Add(-time.Minute)) // the fine and a late day's interest
		})
		t.Run("SettledAtTheExpiry", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "late", Value: 1000, ExpiresIn: 900})
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, TxID: c.Identifier[:25], Time: c.ExpiresDate})
			is.NoErr(err)
			is.Equal(x.Unmatched, "charge expired") // the expiry instant is too late, reported early or not
		})
		audit(t, e.svc)
	})
}

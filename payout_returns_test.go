package payments_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestService_RecordPayoutReturn: money sent back for a confirmed payment is recorded as
// its own movement with its event, once per endToEndId, up to the payment's value, in the
// company that sent it whichever Service the bank connector calls.
func TestService_RecordPayoutReturn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 10000)
		_, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
			DestinationAlias: "ana@example.com", AutoApprove: true})
		is.NoErr(err)
		p, err := e.svc.GetPayment(ctx, "p1")
		is.NoErr(err)
		is.Equal(p.Status, payments.PaymentConfirmed)
		is.Equal(balance(t, e), payments.Balance{Total: 7000, Available: 7000})

		other, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra", PixKey: "outra@example.com"})
		is.NoErr(err)
		co, err := e.svc.Company(ctx, other.ID)
		is.NoErr(err)
		ret, company, err := co.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{
			OriginalEndToEndID: p.Transaction.EndToEndID, EndToEndID: "D99999999202611221200return0001", Value: 1000, Reason: "MD06"})
		is.NoErr(err)
		is.Equal(company, e.svc.CompanyID()) // the sender's company, not the caller's
		is.Equal(ret.OrderID, p.ID)
		is.Equal(ret.Kind, payments.OrderPayment)
		is.True(ret.Partial)
		is.Equal(balance(t, e), payments.Balance{Total: 8000, Available: 8000}) // the money is back
		is.Equal(countEvents(t, co, payments.EventRefundReceivedConfirmed), 0)  // the other company saw nothing

		evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		last := evs[len(evs)-1]
		is.Equal(last.Name, payments.EventRefundReceivedConfirmed) // no vendor prefix, as the other refund events
		var body struct {
			RefundTransaction struct {
				Value      int64  `json:"value"`
				EndToEndID string `json:"endToEndId"`
				Type       string `json:"type"`
			} `json:"refundTransaction"`
			OriginalTransaction struct {
				EndToEndID string `json:"endToEndId"`
			} `json:"originalTransaction"`
			Account struct {
				Balance payments.Balance `json:"balance"`
			} `json:"account"`
		}
		is.NoErr(json.Unmarshal(last.Data, &body))
		is.Equal(body.RefundTransaction.Value, int64(1000))
		is.Equal(body.RefundTransaction.Type, "REFUND")
		is.Equal(body.OriginalTransaction.EndToEndID, p.Transaction.EndToEndID)
		is.Equal(body.Account.Balance.Total, int64(8000)) // as the return left it

		again, _, err := e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, EndToEndID: ret.EndToEndID, Value: 1000})
		is.NoErr(err)
		is.Equal(again.EndToEndID, ret.EndToEndID)
		is.Equal(balance(t, e), payments.Balance{Total: 8000, Available: 8000}) // told twice, moved once
		_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, EndToEndID: ret.EndToEndID, Value: 999})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // the same id with another value

		_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, EndToEndID: "D99999999202611221200return0002", Value: 2001})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // more than was sent
		is.Equal(payments.ErrorField(err), "value")
		last2, _, err := e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, EndToEndID: "D99999999202611221200return0002", Value: 2000})
		is.NoErr(err)
		is.True(!last2.Partial) // all of it came back
		rets, err := e.svc.ListPayoutReturns(ctx, p.ID)
		is.NoErr(err)
		is.Equal(len(rets), 2)
		is.Equal(balance(t, e), payments.Balance{Total: 10000, Available: 10000})

		_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: "nope", EndToEndID: "D1", Value: 1})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{EndToEndID: "D1", Value: 1})
		is.Equal(payments.ErrorField(err), "orderID")
		_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, Value: 1})
		is.Equal(payments.ErrorField(err), "endToEndId")
		_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, EndToEndID: "D3", Value: 0})
		is.Equal(payments.ErrorField(err), "value")
		_, err = co.ListPayoutReturns(ctx, p.ID)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // another company's order is not there
		audit(t, e.svc)
	})
}

// TestService_RecordPayoutReturnNotConfirmed: a failed payment cannot come back.
func TestService_RecordPayoutReturnNotConfirmed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	fund(t, e, 10000)
	_, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
		DestinationAlias: payments.SandboxKeyBankError, AutoApprove: true})
	is.NoErr(err)
	p, err := e.svc.GetPayment(ctx, "p1")
	is.NoErr(err)
	is.Equal(p.Status, payments.PaymentFailed)
	_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: p.ID, EndToEndID: "D1", Value: 100})
	is.Equal(payments.ErrorCode(err), payments.EPRECONDITION)
	is.Equal(balance(t, e), payments.Balance{Total: 10000, Available: 10000}) // nothing moved
}

// TestService_PayoutReturnWebhook: a webhook registered on OPENPIX:TRANSACTION_REFUND_RECEIVED,
// the older name the SDKs list, is accepted and receives the event when RecordPayoutReturn
// records a return, in the older shape: no charge, no QR code, the returning Pix, and the
// order's returns so far; a webhook on PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED gets its own.
func TestService_PayoutReturnWebhook(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 10000)
		legacy, current := newReceiver(t), newReceiver(t)
		w, err := e.svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: "old", URL: legacy.URL, Event: "OPENPIX:TRANSACTION_REFUND_RECEIVED"})
		is.NoErr(err) // accepted: the SDKs' name
		is.Equal(w.Event, e.svc.EventName(payments.EventTransactionRefundReceived))
		createWebhook(t, e.svc, current.URL, payments.EventRefundReceivedConfirmed)
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 3000,
			DestinationAlias: "ana@example.com", AutoApprove: true})
		is.NoErr(err)
		p, err := e.svc.GetPayment(ctx, "p1")
		is.NoErr(err)
		for _, ret := range []payments.RecordPayoutReturnParams{
			{OrderID: p.ID, EndToEndID: "D99999999202611221200return0001", Value: 1000, Reason: "MD06"},
			{OrderID: p.ID, EndToEndID: "D99999999202611221200return0002", Value: 2000},
		} {
			_, _, err = e.svc.RecordPayoutReturn(ctx, ret)
			is.NoErr(err)
		}
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(legacy.events(), []string{"test", "OPENPIX:TRANSACTION_REFUND_RECEIVED", "OPENPIX:TRANSACTION_REFUND_RECEIVED"}) // each return, once
		is.Equal(current.events(), []string{"test", payments.EventRefundReceivedConfirmed, payments.EventRefundReceivedConfirmed})

		var body struct {
			Charge    json.RawMessage `json:"charge"`
			PixQrCode json.RawMessage `json:"pixQrCode"`
			Pix       struct {
				Value      int64  `json:"value"`
				EndToEndID string `json:"endToEndId"`
				Type       string `json:"type"`
				Partial    bool   `json:"partial"`
			} `json:"pix"`
			Refunds []payments.PayoutReturn `json:"refunds"`
			Account struct {
				Balance payments.Balance `json:"balance"`
			} `json:"account"`
		}
		is.NoErr(json.Unmarshal(legacy.last().body, &body))
		is.Equal(string(body.Charge), "null")    // a payout has no charge
		is.Equal(string(body.PixQrCode), "null") // nor a QR code
		is.Equal(body.Pix.Value, int64(2000))    // the returning Pix
		is.Equal(body.Pix.EndToEndID, "D99999999202611221200return0002")
		is.Equal(body.Pix.Type, "REFUND")
		is.True(!body.Pix.Partial)     // the whole payment is back now
		is.Equal(len(body.Refunds), 2) // the order's returns so far
		is.Equal(body.Refunds[0].Value, int64(1000))
		is.Equal(body.Refunds[0].Reason, "MD06")
		is.Equal(body.Refunds[1].EndToEndID, "D99999999202611221200return0002") // this one last
		is.Equal(body.Account.Balance.Total, int64(10000))                      // as the return left it
	})
}

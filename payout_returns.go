package payments

import (
	"context"
	"encoding/base64"
	"slices"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
)

// Money that comes back: the bank on the other side of a confirmed outgoing Pix (a
// payment, a withdrawal, a refund) may send it back later, in whole or in parts (a Pix
// devolution: the receiver refunded it, or MED returned it). The money arrives at the
// company's bank and is recorded here as a movement of its own: the order stays
// CONFIRMED, the returned value goes back to where the order took it from (the account or
// subaccount it was paid from), and PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED is emitted,
// with OPENPIX:TRANSACTION_REFUND_RECEIVED, its older name and shape, before it, all in
// one transaction.
const collPayoutReturns = "payout_returns" // one per return, by its endToEndId

// RecordPayoutReturnParams describe a Pix returned to the company for one it sent, as the
// bank reports it. The order is named by OrderID (the id the Rail was given) or, when the bank
// knows only the Pix, by OriginalEndToEndID, the endToEndId the order settled with.
type RecordPayoutReturnParams struct {
	OrderID            string
	OriginalEndToEndID string
	// EndToEndID is the returning Pix's own id (a devolution's, "D…"): the same id twice is
	// one return.
	EndToEndID string
	Value      int64 // centavos
	// Reason is the bank's code or words for the return, if any (e.g. MD06, "refund by the
	// receiver").
	Reason string
	// Time is when the return settled; zero means now.
	Time time.Time
}

// PayoutReturnParams is the former name of RecordPayoutReturnParams.
//
// Deprecated: use RecordPayoutReturnParams.
type PayoutReturnParams = RecordPayoutReturnParams

// PayoutReturn is money sent back to the company for a Pix it sent.
type PayoutReturn struct {
	EndToEndID string `json:"endToEndId"`
	OrderID    string `json:"orderId"`
	// Kind is what the returned order was: PAYMENT, WITHDRAWAL or REFUND.
	Kind               OrderKind `json:"kind"`
	OriginalEndToEndID string    `json:"originalEndToEndId"`
	Value              int64     `json:"value"`
	// Partial says less than the whole order came back (so far).
	Partial   bool      `json:"partial"`
	Reason    string    `json:"reason,omitempty"`
	Time      time.Time `json:"time"`
	CreatedAt time.Time `json:"createdAt"`
}

// RecordPayoutReturn records money sent back for a confirmed outgoing order and returns
// the return and the company it went to (the order's: the call works across companies,
// as the bank connector that reports it knows no company).
//
// The same EndToEndID again returns the first record and moves nothing; with another
// order or value it is ECONFLICT on "endToEndId". Returns of one order add up to at most
// its value (EPRECONDITION on "value"); an order not CONFIRMED cannot come back
// (EPRECONDITION on "orderID"); an unknown order is ENOTFOUND.
func (s *Service) RecordPayoutReturn(ctx context.Context, p RecordPayoutReturnParams) (PayoutReturn, string, error) {
	e2e, err := cleanString("endToEndId", p.EndToEndID, MaxEndToEndID)
	if err != nil {
		return PayoutReturn{}, "", err
	}
	switch {
	case e2e == "":
		return PayoutReturn{}, "", invalid("endToEndId", "endToEndId is required")
	case p.OrderID == "" && p.OriginalEndToEndID == "":
		return PayoutReturn{}, "", invalid("orderID", "orderID or originalEndToEndId is required")
	}
	if err := checkCentavos("value", p.Value, false); err != nil {
		return PayoutReturn{}, "", err
	}
	reason, err := cleanString("reason", p.Reason, 140)
	if err != nil {
		return PayoutReturn{}, "", err
	}
	co, orderID, err := s.orderCompany(ctx, p.OrderID, p.OriginalEndToEndID)
	if err != nil {
		return PayoutReturn{}, "", err
	}
	var ret PayoutReturn
	err = co.update(ctx, func(t *txn) error {
		var err error
		ret, err = t.recordPayoutReturn(orderID, e2e, p.Value, reason, p.Time)
		return err
	})
	if err != nil {
		return PayoutReturn{}, "", err
	}
	return ret, co.company, nil
}

func (t *txn) recordPayoutReturn(orderID, e2e string, value int64, reason string, at time.Time) (PayoutReturn, error) {
	var prev PayoutReturn
	if ok, err := found(t.get(collPayoutReturns, e2e, "payout return", &prev)); err != nil {
		return PayoutReturn{}, err
	} else if ok {
		if prev.OrderID != orderID || prev.Value != value {
			return PayoutReturn{}, conflict("endToEndId", "a different return with endToEndId %s was already recorded", e2e)
		}
		return prev, nil
	}
	o, err := t.orderByID(orderID)
	if err != nil {
		return PayoutReturn{}, err
	}
	if o.Status != OrderConfirmed {
		return PayoutReturn{}, precondition("orderID", "order %s is %s: only a confirmed order can come back", o.ID, o.Status)
	}
	if o.Returned+value > o.Value {
		return PayoutReturn{}, precondition("value", "order %s sent %d centavos and %d came back already: %d more cannot", o.ID, o.Value, o.Returned, value)
	}
	at = at.UTC().Truncate(time.Millisecond)
	if at.IsZero() {
		at = t.now
	} else if at.Before(minPixTime) || at.After(t.now.Add(24*time.Hour)) {
		return PayoutReturn{}, invalid("time", "time must be from %s to a day after now", minPixTime.Format(time.DateOnly))
	}
	o.Returned += value
	o.UpdatedAt = t.now
	ret := PayoutReturn{EndToEndID: e2e, OrderID: o.ID, Kind: o.Kind, OriginalEndToEndID: o.SettledEndToEndID, Value: value,
		Partial: o.Returned < o.Value, Reason: reason, Time: at, CreatedAt: t.now}
	if _, err := t.post("payout.return", e2e, Posting{Book: bookPixNetwork, Amount: -value},
		Posting{Book: o.Source.available(), Amount: value}); err != nil {
		return PayoutReturn{}, err
	}
	if err := t.insert(collPayoutReturns, e2e, "payout return", ret, nil,
		[]store.Index{byCreation(t.now), {Name: "order:" + o.ID, Sort: sortTime(t.now) + "|" + e2e}}); err != nil {
		return PayoutReturn{}, err
	}
	if err := t.saveOrder(o, false); err != nil {
		return PayoutReturn{}, err
	}
	return ret, t.emitPayoutReturn(o, ret)
}

// payoutReturnEvent is the payload of PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED, in the
// shape of the refund events (wire reference §5.1): the returning Pix as
// refundTransaction (a REFUND from the order's destination to the company), the order it
// returns as originalTransaction, the company, and the account the money went back to (the
// default account for an order paid from a subaccount) as the return left it.
type payoutReturnEvent struct {
	RefundTransaction   returnPix     `json:"refundTransaction"`
	OriginalTransaction returnedOrder `json:"originalTransaction"`
	Company             *eventCompany `json:"company"`
	Account             *Account      `json:"account"`
}

type returnPix struct {
	Value       int64     `json:"value"`
	Time        time.Time `json:"time"`
	EndToEndID  string    `json:"endToEndId"`
	Status      string    `json:"status"` // CONFIRMED
	Type        string    `json:"type"`   // REFUND
	DebitParty  *PixParty `json:"debitParty"`
	CreditParty *PixParty `json:"creditParty"`
	Partial     bool      `json:"partial"`
	GlobalID    string    `json:"globalID"`
	Reason      string    `json:"reason,omitempty"`
}

// returnedOrder is the order that came back, as the Pix it sent: Type is its kind
// (PAYMENT, WITHDRAWAL, REFUND), Returned how much of it came back so far.
type returnedOrder struct {
	Value       int64     `json:"value"`
	Time        time.Time `json:"time"`
	EndToEndID  string    `json:"endToEndId"`
	Status      string    `json:"status"` // CONFIRMED
	Type        OrderKind `json:"type"`
	DebitParty  *PixParty `json:"debitParty"`
	CreditParty *PixParty `json:"creditParty"`
	GlobalID    string    `json:"globalID"`
	OrderID     string    `json:"orderId"`
	Returned    int64     `json:"returned"`
}

func (t *txn) emitPayoutReturn(o order, r PayoutReturn) error {
	co, err := t.loadCompany()
	if err != nil {
		return err
	}
	var acct Account
	if o.Source.AccountID != "" {
		acct, err = t.account(o.Source.AccountID)
	} else {
		acct, err = t.defaultAccount()
	}
	if err != nil {
		return err
	}
	if err := t.fillPixKey(&acct); err != nil {
		return err
	}
	dest := &PixParty{}
	if o.Key != "" {
		if typ, key, err := brcode.DetectKey(o.Key); err == nil {
			dest.PixKey = &PartyPixKey{PixKey: key, Type: wireKeyType(typ)}
		}
	}
	if a := o.Account; a != nil {
		dest.Holder.Name = a.HolderName
	}
	ev := payoutReturnEvent{
		RefundTransaction: returnPix{Value: r.Value, Time: r.Time, EndToEndID: r.EndToEndID, Status: "CONFIRMED",
			Type: string(TransactionRefund), DebitParty: dest, CreditParty: co.party(), Partial: r.Partial, Reason: r.Reason,
			GlobalID: base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + r.EndToEndID))},
		OriginalTransaction: returnedOrder{Value: o.Value, Time: o.SentAt, EndToEndID: o.SettledEndToEndID, Status: "CONFIRMED",
			Type: o.Kind, DebitParty: co.party(), CreditParty: dest, OrderID: o.ID, Returned: o.Returned,
			GlobalID: base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + o.ID))},
		Company: co.eventRef(),
		Account: &acct,
	}
	returns, _, err := list[PayoutReturn](t, collPayoutReturns, store.Query{Index: "order:" + o.ID, Limit: MaxLimit, NoTotal: true}, nil)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(returns, func(p PayoutReturn) bool { return p.EndToEndID == r.EndToEndID }) {
		returns = append(returns, r) // a store that does not list what this transaction wrote
	}
	legacy := transactionRefundEvent{Pix: ev.RefundTransaction, Company: ev.Company, Account: ev.Account, Refunds: returns}
	if err := t.emit(EventTransactionRefundReceived, legacy); err != nil {
		return err
	}
	return t.emit(EventRefundReceivedConfirmed, ev)
}

// transactionRefundEvent is the payload of OPENPIX:TRANSACTION_REFUND_RECEIVED, in the
// older shape of the refund events (wire reference §5.1: charge, pixQrCode, pix with
// partial, company, account, refunds): charge and pixQrCode are null, as a payout has
// neither; pix is the returning Pix, as PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED's
// refundTransaction; refunds are what came back for the order so far, oldest first
// (ListPayoutReturns), this return among them.
type transactionRefundEvent struct {
	Charge    *Charge        `json:"charge"`
	PixQrCode *PixQRCode     `json:"pixQrCode"`
	Pix       returnPix      `json:"pix"`
	Company   *eventCompany  `json:"company"`
	Account   *Account       `json:"account"`
	Refunds   []PayoutReturn `json:"refunds"`
}

// ListPayoutReturns lists what came back for the order id, oldest first.
func (s *Service) ListPayoutReturns(ctx context.Context, orderID string) ([]PayoutReturn, error) {
	var out []PayoutReturn
	err := s.view(ctx, func(t *txn) error {
		if _, err := t.orderByID(orderID); err != nil {
			return err
		}
		var err error
		out, _, err = list[PayoutReturn](t, collPayoutReturns, store.Query{Index: "order:" + orderID, Limit: MaxLimit, NoTotal: true}, nil)
		return err
	})
	return out, err
}

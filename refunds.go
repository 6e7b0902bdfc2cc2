package payments

import (
	"context"
	"encoding/base64"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collRefunds = "refunds"

// RefundStatus is where a refund stands.
type RefundStatus string

// Refund statuses. IN_PROCESSING moves to CONFIRMED or REJECTED once, when the bank settles.
const (
	RefundInProcessing RefundStatus = "IN_PROCESSING"
	RefundConfirmed    RefundStatus = "CONFIRMED"
	RefundRejected     RefundStatus = "REJECTED"
)

// Refund sends part or all of a received Pix back to its payer.
//
// A refund is an outgoing order (see orders.go): creating one holds the value in the
// company account (available -> blocked) in the same transaction that records it
// IN_PROCESSING; the Rail then sends it. When the bank
// confirms, the held money leaves for the Pix network (CONFIRMED); when it fails, the money
// returns to the available balance (REJECTED) and can be refunded again. Refunds of a Pix
// together never exceed its value.
type Refund struct {
	RefundID      string       `json:"refundId"`
	CorrelationID string       `json:"correlationID"`
	Value         int64        `json:"value"`
	Status        RefundStatus `json:"status"`
	Comment       string       `json:"comment"`
	Time          time.Time    `json:"time"`
	// EndToEndID is the refund's own Pix id once the bank has one (the real API's
	// returnIdentification); "" until then.
	EndToEndID           string `json:"endToEndId"`
	ReturnIdentification string `json:"returnIdentification"`
	// TransactionEndToEndID is the endToEndId of the Pix refunded.
	TransactionEndToEndID string `json:"transactionEndToEndId"`
	// Charge is the correlationID of the charge the refunded Pix paid, if any.
	Charge    string    `json:"charge,omitempty"`
	Reason    string    `json:"reason,omitempty"` // why the bank rejected it
	AccountID string    `json:"accountId"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`

	chargeTID string // the refunded charge's transactionID, for the charge index
}

// CreateRefundParams create a refund of a received Pix.
type CreateRefundParams struct {
	// TransactionEndToEndID is the transactionID or endToEndId of the Pix to refund.
	TransactionEndToEndID string
	// CorrelationID is required and makes the call idempotent: the same one again returns
	// the first refund and moves nothing.
	CorrelationID string
	// Value in centavos; 0 means all that remains of the Pix.
	Value   int64
	Comment string // at most 140 characters
}

// CreateChargeRefundParams create a refund of a paid charge.
type CreateChargeRefundParams struct {
	CorrelationID string
	Value         int64 // 0 means all that remains
	Comment       string
}

// ChargeRefundParams is the former name of CreateChargeRefundParams.
//
// Deprecated: use CreateChargeRefundParams.
type ChargeRefundParams = CreateChargeRefundParams

// refundRecord is a Refund as stored: with its charge's transactionID for the index.
type refundRecord struct {
	Refund
	ChargeTID string `json:"chargeTransactionID,omitempty"`
}

func (r Refund) keys() []string { return []string{correlationKey(r.CorrelationID)} }

// Refunds are listed by time; "processing" holds those waiting for the bank.
const indexProcessing = "processing"

func (r Refund) indexes() []store.Index {
	at := sortTime(r.CreatedAt)
	ix := []store.Index{{Name: indexAll, Sort: at}, {Name: "transaction:" + r.TransactionEndToEndID, Sort: at}}
	if r.chargeTID != "" {
		ix = append(ix, store.Index{Name: "charge:" + r.chargeTID, Sort: at})
	}
	if r.Status == RefundInProcessing {
		ix = append(ix, store.Index{Name: indexProcessing, Sort: at})
	}
	return ix
}

func (t *txn) saveRefund(r Refund, insert bool) error {
	r.UpdatedAt = t.now
	rec := refundRecord{Refund: r, ChargeTID: r.chargeTID}
	if insert {
		return t.insert(collRefunds, r.RefundID, "refund", rec, r.keys(), r.indexes())
	}
	return t.put(collRefunds, r.RefundID, "refund", rec, r.keys(), r.indexes())
}

func (t *txn) refundByID(id string) (Refund, error) {
	var rec refundRecord
	if err := t.get(collRefunds, id, "refund", &rec); err != nil {
		return Refund{}, err
	}
	rec.chargeTID = rec.ChargeTID
	return rec.Refund, nil
}

func (t *txn) findRefund(id string) (Refund, error) {
	r, err := t.refundByCorrelationID(id)
	if ErrorCode(err) == ENOTFOUND {
		return t.refundByID(id)
	}
	return r, err
}

// refundByCorrelationID is the refund with the correlationID corr, and only that: findRefund
// reads it first, then the refund with the id.
func (t *txn) refundByCorrelationID(corr string) (Refund, error) {
	var rec refundRecord
	rid, err := t.getByKey(collRefunds, correlationKey(corr), "refund", &rec)
	if err != nil {
		return Refund{}, err
	}
	rec.setID(rid)
	return rec.Refund, nil
}

// setID sets the refund's id, and what it keeps of its charge, on a refund read by key.
func (rec *refundRecord) setID(id string) { rec.RefundID, rec.chargeTID = id, rec.ChargeTID }

// CreateRefund refunds a received Pix (see Refund). It needs that much available balance.
//
// It is not one transaction: it records the refund IN_PROCESSING with its hold in one,
// then sends it through the Rail, then records the bank's answer, if there is one yet, in
// another. When the call fails or ends after the first, the refund stays IN_PROCESSING
// and the periodic pass (RunDue, or SettleRefunds) finishes it; nothing is lost or sent
// twice. The send does not end with ctx: a caller that goes away does not cancel it.
func (s *Service) CreateRefund(ctx context.Context, p CreateRefundParams) (Refund, error) {
	return s.refund(ctx, p.CorrelationID, p.Value, p.Comment, func(t *txn) (Transaction, error) {
		id := p.TransactionEndToEndID
		if id == "" {
			return Transaction{}, invalid("transactionEndToEndId", "transactionEndToEndId is required")
		}
		x, err := t.findTransaction(id)
		if ErrorCode(err) == ENOTFOUND {
			return Transaction{}, notFound("Transaction %s not found", id)
		}
		return x, err
	})
}

// CreateChargeRefund refunds the Pix that paid the charge with the id (its correlationID
// or any id GetCharge accepts). The charge must be COMPLETED. Like CreateRefund, it is a
// transaction, then the Rail, then a transaction.
func (s *Service) CreateChargeRefund(ctx context.Context, chargeID string, p CreateChargeRefundParams) (Refund, error) {
	return s.refund(ctx, p.CorrelationID, p.Value, p.Comment, func(t *txn) (Transaction, error) {
		c, err := t.findCharge(chargeID)
		if err != nil {
			return Transaction{}, err
		}
		if c.Status != ChargeCompleted || c.EndToEndID == "" {
			return Transaction{}, precondition("id", "charge %s is not paid: only a COMPLETED charge can be refunded", c.CorrelationID)
		}
		return t.transactionByEndToEnd(c.EndToEndID)
	})
}

// refund records a refund of the Pix that pix finds, then sends it to the Rail.
func (s *Service) refund(ctx context.Context, correlationID string, value int64, comment string, pix func(*txn) (Transaction, error)) (Refund, error) {
	var r Refund
	err := s.update(ctx, func(t *txn) error {
		x, err := pix(t)
		if err != nil {
			return err
		}
		r, err = t.createRefund(x, correlationID, value, comment)
		return err
	})
	if err != nil {
		return Refund{}, err
	}
	return r, nil
}

// MaxRefundAge is how long after a Pix was received it may be refunded: the Pix rules'
// 90 days (a bank refuses a devolução asked later).
const MaxRefundAge = 90 * 24 * time.Hour

func (t *txn) createRefund(x Transaction, correlationID string, value int64, comment string) (Refund, error) {
	corr, err := cleanCorrelationID("correlationID", correlationID, true)
	if err != nil {
		return Refund{}, err
	}
	if comment, err = cleanString("comment", comment, MaxComment); err != nil {
		return Refund{}, err
	}
	if err := checkCentavos("value", value, true); err != nil { // 0: all that remains
		return Refund{}, err
	}
	prev, ok, err := replay(t, collRefunds, "refund", corr, (*refundRecord).setID, func(prev refundRecord) bool {
		return prev.TransactionEndToEndID == x.EndToEndID && (value == 0 || value == prev.Value)
	}, "a different refund with correlationID %q already exists", corr)
	if err != nil || ok {
		return prev.Refund, err // a retry: nothing moves again
	}
	if x.Type != TransactionPayment {
		return Refund{}, precondition("transactionEndToEndId", "only a received Pix can be refunded")
	}
	if !x.Time.IsZero() && t.now.Sub(x.Time) > MaxRefundAge {
		// the Pix rules: a devolução is asked within 90 days; a bank refuses a later one,
		// so none is held or sent
		return Refund{}, precondition("transactionEndToEndId", "the Pix %s was received more than 90 days ago: the Pix rules allow no refund after that", x.EndToEndID)
	}
	remaining := x.Value - x.RefundedValue
	if value == 0 {
		value = remaining
	}
	switch {
	case remaining == 0:
		return Refund{}, precondition("value", "the Pix %s has already been refunded in full", x.EndToEndID)
	case value > remaining:
		return Refund{}, invalid("value", "value %d is more than the %d that remains to refund of the Pix", value, remaining)
	}
	acct, err := t.defaultAccount()
	if err != nil {
		return Refund{}, err
	}
	r := Refund{
		RefundID: t.newID(), CorrelationID: corr, Value: value, Status: RefundInProcessing,
		Comment: comment, Time: t.now, TransactionEndToEndID: x.EndToEndID, AccountID: acct.AccountID,
		CreatedAt: t.now, UpdatedAt: t.now,
	}
	if x.Charge != nil {
		r.Charge, r.chargeTID = x.Charge.CorrelationID, x.Charge.TransactionID
	}
	o := order{ID: r.RefundID, Kind: OrderRefund, Source: accountSource(acct.AccountID), Value: value,
		EndToEndID: x.EndToEndID, Comment: comment}
	if err := t.createOrder(o); err != nil {
		if ErrorCode(err) == EPRECONDITION {
			return Refund{}, precondition("value", "not enough available balance to refund %s", formatReais(value))
		}
		return Refund{}, err
	}
	x.RefundedValue += value
	if err := t.saveTransaction(x); err != nil {
		return Refund{}, err
	}
	if err := t.insertRefundTransaction(r, x); err != nil {
		return Refund{}, err
	}
	return r, t.saveRefund(r, true)
}

// insertRefundTransaction records the refund r of the Pix x as a REFUND transaction, so
// the transaction list shows money going back as it shows money coming in (type=REFUND,
// and the charge filter lists a charge's refunds after its payment). refundSettled moves
// its status on.
func (t *txn) insertRefundTransaction(r Refund, x Transaction) error {
	rx := Transaction{ID: t.newID(), Type: TransactionRefund, Status: string(RefundInProcessing), Value: r.Value,
		Time: t.now, TransactionID: t.svc.core.ids.hex32(), InfoPagador: r.Comment, Payer: x.Payer, Customer: x.Customer,
		Charge: x.Charge, PixQrCode: x.PixQrCode, RefundID: r.RefundID, CreatedAt: t.now}
	rx.GlobalID = base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + rx.ID))
	return t.insertTransaction(rx)
}

// settleRefundTransaction gives the refund's REFUND transaction the refund's outcome and
// returns it; a refund from before REFUND transactions has none: nothing is done, and it
// returns nil.
func (t *txn) settleRefundTransaction(r Refund) (*Transaction, error) {
	var rx Transaction
	id, err := t.getByKey(collTransactions, "refund:"+r.RefundID, "transaction", &rx)
	if ok, err := found(err); err != nil || !ok {
		return nil, err
	}
	rx.ID, rx.Status, rx.EndToEndID = id, string(r.Status), r.EndToEndID
	return &rx, t.saveTransaction(rx)
}

// refundSettled records the final outcome of the refund's order: CONFIRMED with its
// endToEndId, or REJECTED with the bank's reason, its value counting no more against the
// refunded Pix; with its event, in the order's transaction.
func (t *txn) refundSettled(o order) error {
	r, err := t.refundByID(o.ID)
	if err != nil || r.Status != RefundInProcessing {
		return err
	}
	x, err := t.transactionByEndToEnd(r.TransactionEndToEndID)
	if err != nil {
		return err
	}
	if o.Status == OrderConfirmed {
		r.Status, r.EndToEndID, r.ReturnIdentification = RefundConfirmed, o.SettledEndToEndID, o.SettledEndToEndID
	} else {
		x.RefundedValue -= r.Value
		if err := t.saveTransaction(x); err != nil {
			return err
		}
		r.Status, r.Reason = RefundRejected, o.Reason
		if err := t.cashbackRejected(r); err != nil {
			return err
		}
	}
	r.UpdatedAt = t.now // as saved, for the event
	if err := t.saveRefund(r, false); err != nil {
		return err
	}
	rx, err := t.settleRefundTransaction(r)
	if err != nil {
		return err
	}
	return t.emitRefund(r, x, rx)
}

// SettleRefunds advances every refund of the company still IN_PROCESSING that is due:
// it sends again those whose send failed or never answered, asks the Rail about those it
// accepted, and records those the bank has settled. It returns how many it settled. RunDue
// does this for every kind of order of every company; SettleRefunds is the same step for
// one company's refunds.
//
// It is not one transaction: it reads the pending orders a page at a time, and each order
// is claimed, sent or asked about, and recorded in transactions of its own, once.
func (s *Service) SettleRefunds(ctx context.Context) (int, error) {
	return s.companyOrders(ctx, func(o order) bool { return o.Kind == OrderRefund })
}

// GetRefund returns the refund with the refundId or correlationID id.
func (s *Service) GetRefund(ctx context.Context, id string) (Refund, error) {
	var r Refund
	err := s.view(ctx, func(t *txn) error {
		var err error
		r, err = t.findRefund(id)
		return err
	})
	return r, err
}

// ListRefunds returns the company's refunds, newest first.
func (s *Service) ListRefunds(ctx context.Context, p ListParams) ([]Refund, PageInfo, error) {
	return s.listRefunds(ctx, p, indexAll, "")
}

// ListChargeRefunds returns the refunds of the charge with the id, newest first.
func (s *Service) ListChargeRefunds(ctx context.Context, chargeID string, p ListParams) ([]Refund, PageInfo, error) {
	if strings.TrimSpace(chargeID) == "" {
		return nil, PageInfo{}, notFound("Charge not found") // as GetCharge(""); listRefunds reads "" as every refund
	}
	return s.listRefunds(ctx, p, "", chargeID)
}

func (s *Service) listRefunds(ctx context.Context, p ListParams, index, chargeID string) ([]Refund, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Refund
	var total int
	err = s.view(ctx, func(t *txn) error {
		if chargeID != "" {
			c, err := t.findCharge(chargeID)
			if err != nil {
				return err
			}
			index = "charge:" + c.TransactionID
		}
		out, total, err = list(t, collRefunds, p.query(index), func(r *Refund, id string) { r.RefundID = id })
		return err
	})
	return out, p.info(total), err
}

// adoptRefunds gives an order to every refund IN_PROCESSING that has none: a refund a
// version before the order machine recorded (its hold exists, under the refund's id). The
// order is due at once, so the next pass sends it (the Rail is idempotent by the refund's
// id). Open runs it once per database (see migrateOrders).
func (s *Service) adoptRefunds(ctx context.Context) (int, error) {
	n := 0
	for skip := 0; ; skip += orderQueuePage {
		var page []Refund
		err := s.view(ctx, func(t *txn) error {
			var err error
			page, _, err = list(t, collRefunds, store.Query{Index: indexProcessing, Skip: skip, Limit: orderQueuePage},
				func(r *Refund, id string) { r.RefundID = id })
			return err
		})
		if err != nil {
			return n, err
		}
		for _, r := range page {
			adopted := false
			err := s.update(ctx, func(t *txn) error {
				adopted = false
				if _, err := t.orderByID(r.RefundID); ErrorCode(err) != ENOTFOUND {
					return err // it has its order (nil), or the read failed
				}
				cur, err := t.refundByID(r.RefundID)
				if err != nil || cur.Status != RefundInProcessing {
					return err
				}
				o := order{ID: cur.RefundID, Kind: OrderRefund, Source: accountSource(cur.AccountID), Value: cur.Value,
					EndToEndID: cur.TransactionEndToEndID, Comment: cur.Comment, Status: OrderPending,
					SentAt: cur.CreatedAt, NextAttempt: t.now, CreatedAt: cur.CreatedAt, UpdatedAt: t.now}
				adopted = true
				return t.saveOrder(o, true)
			})
			if err != nil {
				return n, err
			}
			if adopted {
				n++
			}
		}
		if len(page) < orderQueuePage {
			return n, nil
		}
	}
}

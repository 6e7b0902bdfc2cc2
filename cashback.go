package payments

import (
	"context"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collCashbacks = "cashbacks"

// Cashback gives a payer part of their money back, as a Pix devolution of the payment
// (a Refund with correlationID "cashback-<transactionID>"), so that it really reaches them
// and moves through the ledger like any refund.
//
//   - Percentage cashback: a charge created with EnableCashbackPercentage returns
//     CashbackPolicy.BasisPoints of the amount paid when it is paid.
//   - Exclusive (fidelity) cashback: GetOrCreateExclusiveCashback promises a customer, by
//     tax ID, a value; it stays PENDING until that customer pays a charge created with
//     EnableCashbackExclusivePercentage (the payer's tax ID, when the bank reports it,
//     else the charge's customer's), which returns it whole if the amount paid and the
//     account's available balance cover it; otherwise it waits, PENDING, for a later one.
//
// Cashback is paid from the company account's available balance, never more than it holds.
type Cashback struct {
	ID        string         `json:"id"`
	TaxID     string         `json:"taxID"`
	Value     int64          `json:"value"`
	Kind      CashbackKind   `json:"kind"`
	Status    CashbackStatus `json:"status"`
	RefundID  string         `json:"refundId,omitempty"`   // the devolution that paid it
	Payment   string         `json:"endToEndId,omitempty"` // the Pix that triggered it
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
}

// CashbackKind is how a cashback came to be.
type CashbackKind string

// Cashback kinds.
const (
	CashbackPercentage CashbackKind = "PERCENTAGE"
	CashbackExclusive  CashbackKind = "EXCLUSIVE"
)

// CashbackStatus is where a cashback stands.
type CashbackStatus string

// Cashback statuses.
const (
	CashbackPending CashbackStatus = "PENDING" // exclusive, waiting for the customer's payment
	CashbackPaid    CashbackStatus = "PAID"    // sent back to the payer (see its refund)
	// CashbackRejected: a percentage cashback whose devolution the bank rejected; nothing
	// reached the payer and the money stayed with the company. An exclusive cashback in
	// that case goes back to PENDING instead: it is still owed, and the customer's next
	// payment returns it.
	CashbackRejected CashbackStatus = "REJECTED"
)

// CashbackPolicy is a company's percentage cashback: BasisPoints of the amount paid
// (100 = 1%). The default, DefaultCashbackPolicy, returns 1%.
type CashbackPolicy struct {
	BasisPoints int64 `json:"basisPoints"`
}

// DefaultCashbackPolicy returns 1% of what was paid.
func DefaultCashbackPolicy() CashbackPolicy { return CashbackPolicy{BasisPoints: 100} }

func (c Company) cashback() CashbackPolicy {
	if c.CashbackPolicy != nil {
		return *c.CashbackPolicy
	}
	return DefaultCashbackPolicy()
}

func (cb Cashback) indexes() []store.Index {
	ix := []store.Index{byCreation(cb.CreatedAt)}
	if cb.Status == CashbackPending {
		ix = append(ix, store.Index{Name: "pending:" + cb.TaxID, Sort: sortTime(cb.CreatedAt)})
	}
	if cb.Status == CashbackPaid && cb.RefundID != "" {
		ix = append(ix, store.Index{Name: cashbackRefundIndex(cb.RefundID), Sort: sortTime(cb.CreatedAt)})
	}
	return ix
}

// cashbackRefundIndex lists the cashbacks the devolution refundID pays.
func cashbackRefundIndex(refundID string) string { return "refund:" + refundID }

// cashbackRejected undoes, in the transaction that records the bank's rejection of the
// devolution r, what applyCashback recorded for it: each exclusive cashback it was to pay
// is PENDING again, each percentage one REJECTED. Before, they stayed PAID, and the
// customer's balance showed nothing owed though nothing had reached them.
func (t *txn) cashbackRejected(r Refund) error {
	if !strings.HasPrefix(r.CorrelationID, cashbackRefundPrefix) {
		return nil
	}
	cbs, _, err := list[Cashback](t, collCashbacks, store.Query{Index: cashbackRefundIndex(r.RefundID), Limit: MaxLimit}, nil)
	if err != nil {
		return err
	}
	if len(cbs) == 0 { // paid by a version without the index: look through them all
		if cbs, err = t.cashbacksPaidBy(r.RefundID); err != nil {
			return err
		}
	}
	for _, cb := range cbs {
		if cb.Kind == CashbackExclusive {
			cb.Status, cb.RefundID, cb.Payment = CashbackPending, "", ""
		} else {
			cb.Status = CashbackRejected
		}
		cb.UpdatedAt = t.now
		if err := t.put(collCashbacks, cb.ID, "cashback", cb, nil, cb.indexes()); err != nil {
			return err
		}
	}
	return nil
}

// cashbacksPaidBy finds, page by page through every cashback of the company, those the
// devolution refundID pays: for a cashback paid before cashbackRefundIndex existed, whose
// devolution the bank rejects after an upgrade.
func (t *txn) cashbacksPaidBy(refundID string) ([]Cashback, error) {
	var out []Cashback
	for skip := 0; ; skip += MaxLimit {
		page, _, err := list[Cashback](t, collCashbacks, store.Query{Index: indexAll, Skip: skip, Limit: MaxLimit, NoTotal: true}, nil)
		if err != nil {
			return nil, err
		}
		for _, cb := range page {
			if cb.Status == CashbackPaid && cb.RefundID == refundID {
				out = append(out, cb)
			}
		}
		if len(page) < MaxLimit {
			return out, nil
		}
	}
}

// cashbackRefundPrefix begins the correlationID of a cashback's devolution, followed by
// the transactionID of the payment that earned it.
const cashbackRefundPrefix = "cashback-"

// GetOrCreateExclusiveCashback promises the customer with taxID an exclusive cashback of
// value centavos. When one is already pending for that tax ID it is returned instead, with
// created false, and nothing changes; value must be valid either way (EINVALID "value").
func (s *Service) GetOrCreateExclusiveCashback(ctx context.Context, taxID string, value int64) (cb Cashback, created bool, err error) {
	err = s.update(ctx, func(t *txn) error {
		cb, created = Cashback{}, false // afresh on every run: the store may run this function again
		if value <= 0 || value > MaxChargeValue {
			// bad input is refused, pending cashback or not
			return invalid("value", "value must be a positive number of centavos up to %d", int64(MaxChargeValue))
		}
		tid, pending, err := t.pendingCashbacks(taxID)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			cb = pending[0]
			return nil
		}
		cb = Cashback{ID: t.newID(), TaxID: tid.TaxID, Value: value, Kind: CashbackExclusive,
			Status: CashbackPending, CreatedAt: t.now, UpdatedAt: t.now}
		created = true
		return t.insert(collCashbacks, cb.ID, "cashback", cb, nil, cb.indexes())
	})
	return cb, created, err
}

// CashbackBalance is the exclusive cashback a customer has still to receive.
type CashbackBalance struct {
	Balance int64          `json:"balance"`
	Status  CashbackStatus `json:"status"` // PENDING when Balance > 0, else ""
}

// GetCashbackBalance returns the exclusive cashback still to be received by the customer
// with taxID.
func (s *Service) GetCashbackBalance(ctx context.Context, taxID string) (CashbackBalance, error) {
	var b CashbackBalance
	err := s.view(ctx, func(t *txn) error {
		b = CashbackBalance{}
		_, pending, err := t.pendingCashbacks(taxID)
		if err != nil {
			return err
		}
		for _, cb := range pending {
			b.Balance += cb.Value
		}
		if b.Balance > 0 {
			b.Status = CashbackPending
		}
		return nil
	})
	return b, err
}

// pendingCashbacks validates a tax ID and returns it with the exclusive cashbacks still
// pending for it, oldest first.
func (t *txn) pendingCashbacks(taxID string) (*TaxID, []Cashback, error) {
	tid, err := parseTaxID("taxID", taxID)
	if err != nil {
		return nil, nil, err
	}
	out, _, err := list[Cashback](t, collCashbacks, store.Query{Index: "pending:" + tid.TaxID, Limit: MaxLimit}, nil)
	return tid, out, err
}

// applyCashback pays the cashback a charge's payment earns, as one devolution of the
// payment, sent to the bank after the transaction commits.
func (t *txn) applyCashback(c *Charge, x *Transaction) error {
	if !c.EnableCashbackPercentage && !c.EnableCashbackExclusivePercentage {
		return nil
	}
	co, err := t.loadCompany()
	if err != nil {
		return err
	}
	var earned []Cashback
	if c.EnableCashbackPercentage {
		if v := percentOf(x.Value, co.cashback().BasisPoints); v > 0 {
			earned = append(earned, Cashback{ID: t.newID(), Value: v, Kind: CashbackPercentage, CreatedAt: t.now})
		}
	}
	if taxID := payerTaxID(c, x); c.EnableCashbackExclusivePercentage && taxID != "" {
		_, pending, err := t.pendingCashbacks(taxID)
		if err != nil {
			return err
		}
		earned = append(earned, pending...)
	}
	acct, err := t.defaultAccount()
	if err != nil {
		return err
	}
	budget := min(x.Value, acct.Balance.Available)
	var total int64
	for i := range earned {
		cb := &earned[i]
		if total+cb.Value > budget {
			continue // stays pending (exclusive) or is not paid (percentage beyond the balance); a later one may fit
		}
		total += cb.Value
		cb.TaxID = payerTaxID(c, x)
		cb.Status, cb.Payment, cb.UpdatedAt = CashbackPaid, x.EndToEndID, t.now
	}
	if total == 0 {
		return nil
	}
	stored, err := t.transactionByEndToEnd(x.EndToEndID)
	if err != nil {
		return err
	}
	r, err := t.createRefund(stored, cashbackRefundPrefix+x.TransactionID, total, "Cashback")
	if err != nil {
		return err
	}
	x.RefundedValue += total
	for _, cb := range earned {
		if cb.Status != CashbackPaid {
			continue
		}
		cb.RefundID = r.RefundID
		if cb.Kind == CashbackPercentage {
			err = t.insert(collCashbacks, cb.ID, "cashback", cb, nil, cb.indexes())
		} else {
			err = t.put(collCashbacks, cb.ID, "cashback", cb, nil, cb.indexes())
		}
		if err != nil {
			return err
		}
	}
	return nil // createRefund's order sends it after the commit
}

// payerTaxID is the tax ID a cashback is for: the payer's, whom the devolution reaches,
// when the bank reported it; else the charge's customer's, taken to be the payer. Taken
// the other way round, a charge made out to one customer and paid by another sent the
// first one's promised cashback to the second and closed the promise.
func payerTaxID(c *Charge, x *Transaction) string {
	switch {
	case x.Payer != nil && x.Payer.TaxID != nil:
		return x.Payer.TaxID.TaxID
	case c.Customer != nil && c.Customer.TaxID != nil:
		return c.Customer.TaxID.TaxID
	}
	return ""
}

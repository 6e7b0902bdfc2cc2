package payments

import (
	"context"
	"encoding/base64"
	"time"
)

// ReceivePixParams describe a Pix that arrived at the company: what a bank connector (or
// the sandbox) reports. EndToEndID and Value are required; without TxID (or with one that
// finds nothing) the Pix is to the key it was sent to, credited to the account the key
// names (the company's key: its default account).
type ReceivePixParams struct {
	// EndToEndID is the Pix network's id of the payment: the same id twice is one Pix.
	EndToEndID string
	Value      int64     // centavos
	Time       time.Time // when the Pix settled; zero means now
	// TxID is the reference the payer's code carried: a charge's txid, identifier or
	// transactionID, or a static QR code's identifier.
	TxID string
	// PixKey is the key the Pix was sent to; it defaults to the company's key. Another
	// account's key is accepted too: when the Pix names no charge or QR code (by TxID), it
	// is credited to that account. A key that is none of the company's accounts' is not
	// found (a subaccount's key is its owner's, at their own bank: no Pix arrives here for it).
	PixKey      string
	Payer       *Payer
	InfoPagador string // the payer's message
}

// Payer is who sent a Pix.
type Payer struct {
	Name  string
	TaxID string // CPF or CNPJ
}

// MaxEndToEndID is the longest endToEndId accepted (the Pix network's are 32 characters).
const MaxEndToEndID = 64

// ReceivePix records a Pix the company received, in one transaction with everything it
// causes: the transaction, the ledger entry crediting the company (less the fee, to its
// account, or to the charge's subaccount or splits, or to the account whose key the Pix
// was sent to, see ReceivePixParams.PixKey), the charge's completion and the
// CHARGE_COMPLETED (with CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER when the payer's tax ID
// is not the customer's) and TRANSACTION_RECEIVED events.
//
// Money is never dropped. A Pix whose charge can no longer take it (already paid, expired,
// deleted, or a value other than the amount due) is recorded and credited to the company's
// account with the reason in Transaction.Unmatched; the company decides whether to refund
// it (CreateRefund). A static QR code takes any number of payments.
//
// The same EndToEndID again returns the first transaction and moves nothing; with another
// value it is a conflict, and so is an EndToEndID another company has recorded (the Pix
// network's ids are unique, so that is never the same Pix twice in two companies). A
// bank connector that does not know the company calls ReceiveBankPix instead.
//
// When the payment earns cashback (see Cashback), the call is more than that transaction:
// the cashback's refund is recorded IN_PROCESSING in it, sent through the Rail after it
// commits, and the bank's answer recorded in a transaction of its own, as CreateRefund
// does.
func (s *Service) ReceivePix(ctx context.Context, p ReceivePixParams) (Transaction, error) {
	var x Transaction
	err := s.update(ctx, func(t *txn) error {
		var err error
		x, err = t.receivePix(p)
		return err
	})
	return x, err
}

// ReceiveChargePix records a Pix that pays the charge with id (any id GetCharge accepts)
// its amount due now, and returns the transaction and the charge as the payment left it.
// The check and the payment are one transaction: a charge already paid or expired is
// refused (EPRECONDITION on "id"), so of concurrent calls for one charge exactly one pays
// it, and no Pix is ever recorded that the charge cannot take. p.Value, when not 0, must be
// the amount due now (EINVALID on "value", saying the amount otherwise); p.TxID and p.Time
// are set here (the charge's txid, now), and p.Value too when 0; the rest of p is as for
// ReceivePix, which records the Pix in every other respect, except that an endToEndId
// already received is a conflict rather than the earlier transaction. The sandbox's payer
// uses it.
func (s *Service) ReceiveChargePix(ctx context.Context, id string, p ReceivePixParams) (Transaction, Charge, error) {
	var x Transaction
	var c Charge
	err := s.update(ctx, func(t *txn) error {
		var err error
		if c, err = t.findCharge(id); err != nil {
			return err
		}
		x, c, err = t.payCharge(c, p, "charge "+c.CorrelationID)
		return err
	})
	if err != nil {
		return Transaction{}, Charge{}, err
	}
	return x, c, nil
}

// payCharge records a Pix paying c, as read in t, its amount due now (see
// ReceiveChargePix), and returns it with the charge as it left it. name is the charge in
// error messages: "charge <correlationID>" for its company, "this charge" for the public
// payment page, which must not show the company's correlationID.
func (t *txn) payCharge(c Charge, p ReceivePixParams, name string) (Transaction, Charge, error) {
	switch c.Status { // as of now: present shows a charge past its expiry as EXPIRED
	case ChargeCompleted:
		return Transaction{}, Charge{}, precondition("id", "%s is already paid", name)
	case ChargeExpired:
		return Transaction{}, Charge{}, precondition("id", "%s has expired", name)
	}
	if p.Value != 0 && p.Value != c.AmountDue {
		return Transaction{}, Charge{}, invalid("value", "%s takes its amount due now, %d centavos, not %d", name, c.AmountDue, p.Value)
	}
	p.Value, p.TxID, p.Time = c.AmountDue, c.txid(), time.Time{}
	x, err := t.receivePix(p)
	if err != nil {
		return Transaction{}, Charge{}, err
	}
	if c, err = t.chargeByID(c.ID); err != nil {
		return Transaction{}, Charge{}, err
	}
	if c.EndToEndID != x.EndToEndID { // receivePix returned an earlier Pix with this endToEndId
		return Transaction{}, Charge{}, conflict("endToEndId", "a Pix with endToEndId %s was already received", x.EndToEndID)
	}
	return x, c, nil
}

// minPixTime is the earliest time a received Pix may carry: Pix began in November 2020;
// earlier times (year 1 from a zero value parsed wrong, say) are refused.
var minPixTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// pixTime is when a Pix reported to have settled at settled, at millisecond precision:
// now when zero; an invalid "time" outside minPixTime to a day after now.
func (t *txn) pixTime(settled time.Time) (time.Time, error) {
	if settled.IsZero() {
		return t.now, nil
	}
	at := settled.UTC().Truncate(time.Millisecond)
	if at.Before(minPixTime) || at.After(t.now.Add(24*time.Hour)) {
		return time.Time{}, invalid("time", "time must be from %s to a day after now, got %s", minPixTime.Format(time.DateOnly), at.Format(time.RFC3339))
	}
	return at, nil
}

func (t *txn) receivePix(p ReceivePixParams) (Transaction, error) {
	e2e, err := cleanString("endToEndId", p.EndToEndID, MaxEndToEndID)
	if err != nil {
		return Transaction{}, err
	}
	if e2e == "" {
		return Transaction{}, invalid("endToEndId", "endToEndId is required")
	}
	if err := checkCentavos("value", p.Value, false); err != nil {
		return Transaction{}, err
	}
	if prev, err := t.transactionByEndToEnd(e2e); err == nil {
		if prev.Value != p.Value || prev.Type != TransactionPayment {
			return Transaction{}, conflict("endToEndId", "a different Pix with endToEndId %s was already received", e2e)
		}
		return prev, nil
	} else if ErrorCode(err) != ENOTFOUND {
		return Transaction{}, err
	}
	at, err := t.pixTime(p.Time)
	if err != nil {
		return Transaction{}, err
	}
	x := Transaction{
		ID: t.newID(), Type: TransactionPayment, Status: "CONFIRMED", Value: p.Value,
		Time: at, EndToEndID: e2e, TransactionID: t.svc.core.ids.hex32(),
		CreatedAt: t.now,
	}
	x.GlobalID = base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + x.ID))
	if err := t.registerReceivedPix(e2e); err != nil {
		return Transaction{}, err // another company recorded it (receive_routing.go)
	}
	if x.InfoPagador, err = cleanString("infoPagador", p.InfoPagador, 140); err != nil {
		return Transaction{}, err
	}
	if p.Payer != nil {
		if x.Payer, err = p.Payer.customer(); err != nil {
			return Transaction{}, err
		}
	}
	co, err := t.loadCompany()
	if err != nil {
		return Transaction{}, err
	}
	x.PixKey = co.PixKey
	var toAccount *Account // the account whose key the Pix was sent to, if not the default
	if p.PixKey != "" {
		key, _, err := parsePixKey("pixKey", p.PixKey, "")
		if err != nil {
			return Transaction{}, err
		}
		if key != co.PixKey {
			if toAccount, err = t.keyAccount(key); err != nil {
				return Transaction{}, err
			}
			x.PixKey = key
		}
	}
	txid, err := cleanString("txid", p.TxID, 64)
	if err != nil {
		return Transaction{}, err
	}
	x.Raw = &PixRaw{EndToEndID: e2e, TxID: txid, Valor: formatReais(p.Value), Horario: at, InfoPagador: x.InfoPagador}
	x.Fee = co.fees().Fee(p.Value)

	var charge *Charge
	var deletedQR *PixQRCode // the code the txid named, deleted
	if txid != "" && txid != "***" {
		if charge, x.PixQrCode, err = t.receiveTarget(txid); err != nil {
			return Transaction{}, err
		}
		if q := x.PixQrCode; q != nil && q.Value > 0 && p.Value != q.Value {
			// a fixed-value code paid another amount: kept under the code, marked, so the
			// company finds it and can refund it, as for a charge
			x.Unmatched = "value " + formatReais(p.Value) + " differs from the QR code's value " + formatReais(q.Value)
		}
		if charge == nil && x.PixQrCode == nil {
			if x.Charge, err = t.deletedCharge(txid); err != nil {
				return Transaction{}, err
			} else if x.Charge != nil {
				x.Customer, x.Unmatched = x.Charge.Customer, "charge deleted"
			} else if deletedQR, err = t.deletedQRCode(txid, true); err != nil {
				return Transaction{}, err
			} else if deletedQR != nil {
				x.PixQrCode, x.Unmatched = deletedQR.ref(), "QR code deleted" // kept under the code, for the company to refund
			}
		}
	}
	credits := []Posting(nil)
	if charge != nil {
		x.Charge = charge.ref()
		x.Customer = charge.Customer
		if reason := charge.cannotTake(at, p.Value); reason != "" {
			x.Unmatched = reason
		} else {
			if credits, err = t.chargeCredits(*charge, p.Value-x.Fee); err != nil {
				return Transaction{}, err
			}
			if err := t.completeCharge(charge, x, at); err != nil {
				return Transaction{}, err
			}
			x.Charge = charge.ref()
		}
	}
	acct, err := t.defaultAccount()
	if err != nil {
		return Transaction{}, err
	}
	// Where the rest goes: the default account, unless the Pix names no charge or QR code
	// and was sent to another account's key.
	if toAccount != nil && charge == nil && x.Charge == nil && x.PixQrCode == nil {
		acct = *toAccount
	}
	book := accountBook(acct.AccountID)
	postings := []Posting{{Book: bookPixNetwork, Amount: -p.Value}}
	if x.Fee > 0 {
		postings = append(postings, Posting{Book: bookFees, Amount: x.Fee})
	}
	rest := p.Value - x.Fee
	for _, c := range credits {
		postings = append(postings, c)
		rest -= c.Amount
	}
	if rest > 0 {
		postings = append(postings, Posting{Book: book, Amount: rest})
	}
	if _, err := t.post("pix.received", x.ID, postings...); err != nil {
		return Transaction{}, err
	}
	if err := t.insertTransaction(x); err != nil {
		return Transaction{}, err
	}
	if charge != nil && x.Unmatched == "" {
		if err := t.applyCashback(charge, &x); err != nil {
			return Transaction{}, err
		}
	}
	// The events show the account as this Pix (and its cashback) left it.
	if err := t.fillBalance(&acct); err != nil {
		return Transaction{}, err
	}
	if acct.IsDefault {
		acct.PixKey = co.PixKey
	}
	pix := eventPix(co, x)
	if charge != nil && x.Unmatched == "" {
		t.present(charge)
		ec, err := t.eventCharge(charge)
		if err != nil {
			return Transaction{}, err
		}
		ev := chargePaidEvent{Charge: ec, Pix: pix, Company: co.eventRef(), Account: &acct}
		if err := t.emit(EventChargeCompleted, ev); err != nil {
			return Transaction{}, err
		}
		if notSamePayer(charge.Customer, x.Payer) {
			ev.Payer = x.Payer
			if err := t.emit(EventChargeNotSamePayer, ev); err != nil {
				return Transaction{}, err
			}
		}
	}
	q := deletedQR // as it was when deleted
	if x.PixQrCode != nil && q == nil {
		q = &PixQRCode{}
		if err := t.get(collQRCodes, x.PixQrCode.ID, "pix QR code", q); err != nil {
			return Transaction{}, err
		}
		t.presentQRCode(q)
	}
	refunds, err := t.refundsOf(x.EndToEndID)
	if err != nil {
		return Transaction{}, err
	}
	ec, err := t.eventCharge(charge)
	if err != nil {
		return Transaction{}, err
	}
	return x, t.emit(EventTransactionReceived, transactionEvent{Charge: ec, PixQrCode: q, Pix: pix,
		Company: co.eventRef(), Account: &acct, Refunds: refunds})
}

// keyAccount is the account (with its balance) of the company whose Pix key is key
// (canonical), other than the company's own key: where a Pix sent to it goes when it names
// nothing else. A key of no account is not found.
func (t *txn) keyAccount(key string) (*Account, error) {
	var a Account
	if _, err := t.getByKey(collAccounts, accountKey(key), "account", &a); err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return nil, notFound("Pix key %s does not belong to this company", key)
		}
		return nil, err
	}
	return &a, t.fillBalance(&a)
}

// notSamePayer reports whether a charge's customer and the payer of its Pix are known by
// tax ID and differ: then the payment also emits CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER.
// A customer or payer without a tax ID says nothing either way.
func notSamePayer(customer, payer *Customer) bool {
	return customer != nil && customer.TaxID != nil && payer != nil && payer.TaxID != nil &&
		customer.TaxID.TaxID != payer.TaxID.TaxID
}

func (p Payer) customer() (*Customer, error) {
	name, err := cleanString("payer.name", p.Name, 200)
	if err != nil {
		return nil, err
	}
	c := &Customer{Name: name}
	if p.TaxID != "" {
		if c.TaxID, err = parseTaxID("payer.taxID", p.TaxID); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// txidLookupKeys are the keys a charge (or the note a deleted one leaves) is found by
// from a Pix's txid.
func txidLookupKeys(txid string) []string { return append(txidKeys(txid), "transactionID:"+txid) }

// receiveTarget finds the charge or static QR code a txid points to; neither (an unknown
// reference, or a deleted charge: see deletedCharge) is not an error: the Pix is credited
// to the company.
func (t *txn) receiveTarget(txid string) (*Charge, *PixQRCodeRef, error) {
	for _, key := range txidLookupKeys(txid) {
		c, err := t.chargeByKey(key)
		if ok, err := found(err); err != nil {
			return nil, nil, err
		} else if ok {
			return &c, nil, nil
		}
	}
	var q PixQRCode
	_, err := t.getByKey(collQRCodes, "identifier:"+txid, "pix QR code", &q)
	if ok, err := found(err); err != nil || !ok {
		return nil, nil, err
	}
	return nil, q.ref(), nil
}

// deletedCharge is the charge the txid named if it was deleted (DeleteCharge leaves a
// note of it), or nil: a Pix paying it is recorded with Unmatched "charge deleted", so
// the company finds it by the reason and can send it back.
func (t *txn) deletedCharge(txid string) (*ChargeRef, error) {
	for _, key := range txidLookupKeys(txid) {
		var ref ChargeRef
		_, err := t.getByKey(collDeletedCharges, key, "deleted charge", &ref)
		if ok, err := found(err); err != nil {
			return nil, err
		} else if ok {
			return &ref, nil
		}
	}
	return nil, nil
}

// deletedChargeByGlobalID is the note of the deleted charge whose globalID is id, or nil.
func (t *txn) deletedChargeByGlobalID(id string) (*ChargeRef, error) {
	rid, ok := globalChargeID(id)
	if !ok || rid == "" {
		return nil, nil
	}
	var ref ChargeRef
	if ok, err := found(t.get(collDeletedCharges, rid, "deleted charge", &ref)); err != nil || !ok {
		return nil, err
	}
	return &ref, nil
}

// cannotTake says why a charge cannot take a payment of value at time at, or "". Whether
// it expired is a question of at, the time the Pix settled, not of its status: a Pix
// settled before the expiry and reported after it (bank callbacks come late, the due pass
// may have recorded the charge EXPIRED meanwhile) was paid in time and completes it.
func (c Charge) cannotTake(at time.Time, value int64) string {
	switch {
	case c.Status == ChargeCompleted:
		return "charge already completed"
	case !at.Before(c.ExpiresDate):
		return "charge expired"
	}
	if _, due := c.amountsAt(at); value != due {
		return "value " + formatReais(value) + " differs from the amount due " + formatReais(due)
	}
	return ""
}

// chargeCredits says where the net amount of a charge's payment goes besides the company
// account: all of it to the charge's subaccount, or each split to its subaccount, in order,
// while the net amount lasts. A subaccount that does not exist (any more) gets nothing: its
// part stays with the company account.
func (t *txn) chargeCredits(c Charge, net int64) ([]Posting, error) {
	var out []Posting
	give := func(key string, amount int64) error {
		amount = min(amount, net)
		if amount <= 0 {
			return nil
		}
		ok, err := t.subaccountExists(key) // a deleted one keeps its book, not its record
		if err != nil || !ok {
			return err
		}
		out = append(out, Posting{Book: subaccountBook(key), Amount: amount})
		net -= amount
		return nil
	}
	if c.Subaccount != "" {
		return out, give(c.Subaccount, net)
	}
	for _, sp := range c.Splits {
		if err := give(sp.PixKey, sp.Value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *txn) bookExists(id string) (bool, error) {
	_, err := t.tx.Get(collBooks, t.company, id)
	return found(storeErr(err, "book"))
}

// completeCharge marks a charge paid by x.
func (t *txn) completeCharge(c *Charge, x Transaction, at time.Time) error {
	c.Discount, c.AmountDue = c.amountsAt(at)
	c.ValueWithDiscount = c.Value - c.Discount
	c.Status = ChargeCompleted
	c.PaidAt = &at
	c.PaidValue = x.Value
	c.Fee = x.Fee
	c.EndToEndID = x.EndToEndID
	return t.saveCharge(c)
}

package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
)

const collPayments = "payments"

// PaymentType is how a payment names where the money goes.
type PaymentType string

// Payment types.
const (
	PaymentPixKey PaymentType = "PIX_KEY" // to a Pix key (also when no type is sent, as the Node SDK does)
	PaymentQRCode PaymentType = "QR_CODE" // to the key of a static BR Code, for its amount when it has one
	PaymentManual PaymentType = "MANUAL"  // to a bank account given by its details
)

// PaymentStatus is where an outgoing payment stands.
type PaymentStatus string

// Payment statuses. A payment is requested CREATED; ApprovePayment holds its value and
// sends it (APPROVED); the bank settles it CONFIRMED, or FAILED with the money returned.
// RemovePayment takes a CREATED payment off (REMOVED); its correlationID stays taken.
const (
	PaymentCreated   PaymentStatus = "CREATED"
	PaymentApproved  PaymentStatus = "APPROVED"
	PaymentConfirmed PaymentStatus = "CONFIRMED"
	PaymentFailed    PaymentStatus = "FAILED"
	PaymentRemoved   PaymentStatus = "REMOVED"
)

// Messages of the real API for the two payment errors integrations look for.
const (
	msgPaymentExists       = "Já existe um pagamento com o correlationID fornecido"
	msgPaymentNotEnoughBal = "You do not have enough balance to make this payment"
)

// Payment is an outgoing Pix the company requests and then approves: an outgoing order
// (see orders.go) paid from the company's default account.
type Payment struct {
	ID            string        `json:"id"`
	Type          PaymentType   `json:"type"`
	Value         int64         `json:"value"`
	Status        PaymentStatus `json:"status"`
	CorrelationID string        `json:"correlationID"`
	Comment       string        `json:"comment"`
	// DestinationAlias is the Pix key paid (PIX_KEY, QR_CODE) and DestinationAliasType its
	// type on the wire: CPF, CNPJ, EMAIL, PHONE or RANDOM. Empty for MANUAL.
	DestinationAlias     string `json:"destinationAlias"`
	DestinationAliasType string `json:"destinationAliasType"`
	// QRCode is the BR Code paid (QR_CODE).
	QRCode string `json:"qrCode,omitempty"`
	// Account is the bank account paid (MANUAL).
	Account         *BankAccount `json:"account,omitempty"`
	SourceAccountID string       `json:"sourceAccountId"`
	// Transaction is the Pix once approved: its value and time, its endToEndId once the
	// bank has one, and the bank's reason when it failed. Nil before approval.
	Transaction *PaymentTransaction `json:"transaction"`
	// Destination is who receives the money, as the Rail's key directory said when the
	// payment was requested (or the MANUAL account's details); reads never ask the Rail.
	Destination PaymentDestination `json:"destination"`
	CreatedAt   time.Time          `json:"createdAt"`
	UpdatedAt   time.Time          `json:"updatedAt"`
}

// PaymentTransaction is the Pix that pays a payment.
type PaymentTransaction struct {
	Value                  int64     `json:"value"`
	EndToEndID             string    `json:"endToEndId"`
	Time                   time.Time `json:"time"`
	ProviderRejectedReason string    `json:"providerRejectedReason,omitempty"`
}

// PaymentDestination is the owner of the destination.
type PaymentDestination struct {
	Name    string `json:"name"`
	TaxID   string `json:"taxID"`
	PixKey  string `json:"pixKey"`
	Bank    string `json:"bank"`
	Branch  string `json:"branch"`
	Account string `json:"account"`
}

// CreatePaymentParams request a payment. Type "" is PIX_KEY.
//
//   - PIX_KEY: Value, DestinationAlias and its DestinationAliasType (CPF, CNPJ, EMAIL,
//     PHONE, RANDOM or EVP; empty: detected from the key). The key must be valid for its
//     type and have an owner in the Rail's directory.
//   - QR_CODE: QRCode, a static Pix BR Code; its key is paid, and its amount when it has
//     one (Value then 0 or equal to it), else Value.
//   - MANUAL: Value and Account (ISPB, branch, account number, holder name and tax ID).
//
// CorrelationID is required and unique among the company's payments. AutoApprove
// approves the payment in the same call.
type CreatePaymentParams struct {
	Type                 PaymentType
	Value                int64
	DestinationAlias     string
	DestinationAliasType string
	QRCode               string
	Account              *BankAccount
	CorrelationID        string
	Comment              string
	AutoApprove          bool
}

// PaymentFilter selects payments for ListPayments: created between Start and End,
// inclusive; zero times do not filter.
type PaymentFilter struct {
	Start, End time.Time
	ListParams
}

func (p Payment) keys() []string { return []string{correlationKey(p.CorrelationID)} }

func (p Payment) indexes() []store.Index { return []store.Index{byCreation(p.CreatedAt)} }

// wireKeyType is a key type as the payment wire names it (RANDOM for EVP).
func wireKeyType(t brcode.KeyType) string {
	if t == brcode.KeyEVP {
		return "RANDOM"
	}
	return string(t)
}

// CreatePayment requests a payment (see CreatePaymentParams): status CREATED, nothing held
// yet. With AutoApprove it is approved in the same transaction (see ApprovePayment).
//
// The destination is looked up in the Rail's key directory before the transaction: an
// unknown key is an EINVALID *Error naming destinationAlias (or qrCode), and what the
// directory said is stored with the payment.
func (s *Service) CreatePayment(ctx context.Context, p CreatePaymentParams) (Payment, error) {
	pay, err := s.buildPayment(ctx, p)
	if err != nil {
		return Payment{}, err
	}
	var out Payment
	err = s.update(ctx, func(t *txn) error {
		out = Payment{}
		// A payment's correlationID is used once: sent again, even for the same payment, it
		// is refused, as the real API refuses it.
		if _, _, err := replay[Payment](t, collPayments, "payment", pay.CorrelationID, nil, nil, msgPaymentExists); err != nil {
			return err
		}
		out = pay
		out.ID, out.CreatedAt, out.UpdatedAt = t.newID(), t.now, t.now
		acct, err := t.defaultAccount()
		if err != nil {
			return err
		}
		out.SourceAccountID = acct.AccountID
		if p.AutoApprove {
			if out, err = t.approvePayment(out, acct); err != nil {
				return err
			}
		}
		return t.insert(collPayments, out.ID, "payment", out, out.keys(), out.indexes())
	})
	if err != nil {
		return Payment{}, err
	}
	if p.AutoApprove {
		s.withSentEndToEndID(ctx, &out)
	}
	return out, nil
}

// buildPayment validates a request and resolves its destination, outside any transaction.
func (s *Service) buildPayment(ctx context.Context, p CreatePaymentParams) (Payment, error) {
	corr, err := cleanCorrelationID("correlationID", p.CorrelationID, true)
	if err != nil {
		return Payment{}, err
	}
	comment, err := cleanString("comment", p.Comment, MaxComment)
	if err != nil {
		return Payment{}, err
	}
	pay := Payment{Type: p.Type, Status: PaymentCreated, CorrelationID: corr, Comment: comment, Value: p.Value}
	if pay.Type == "" {
		pay.Type = PaymentPixKey
	}
	var key string
	var keyType brcode.KeyType
	keyField := "destinationAlias"
	switch pay.Type {
	case PaymentPixKey:
		if key, keyType, err = parsePixKey("destinationAlias", p.DestinationAlias, p.DestinationAliasType); err != nil {
			return Payment{}, err
		}
	case PaymentQRCode:
		keyField = "qrCode"
		if key, keyType, err = parsePaymentQRCode(p.QRCode, &pay); err != nil {
			return Payment{}, err
		}
	case PaymentManual:
		if pay.Account, err = cleanBankAccount(p.Account); err != nil {
			return Payment{}, err
		}
		a := pay.Account
		pay.Destination = PaymentDestination{Name: a.HolderName, TaxID: a.HolderTaxID, Bank: a.ISPB, Branch: a.Branch, Account: a.Account}
	default:
		return Payment{}, invalid("type", "type must be PIX_KEY, QR_CODE or MANUAL")
	}
	if err := checkCentavos("value", pay.Value, false); err != nil {
		return Payment{}, err
	}
	if key != "" {
		owner, err := s.resolveKey(ctx, key, keyType)
		if errors.Is(err, rail.ErrNoKeyLookup) {
			// A bank without a look-up (the API Pix has none): the payment names the key
			// alone, and the bank refuses an unknown key when it is sent, which fails the
			// payment and returns its money.
			owner, err = KeyOwner{}, nil
		}
		err = fromRail(err)
		switch ErrorCode(err) {
		case "":
		case ENOTFOUND, EINVALID:
			return Payment{}, invalid(keyField, "Pix key not found: %s", key)
		case ECANCELED:
			return Payment{}, err
		default: // the bank's own failure, not the caller's: nothing was recorded
			err = unavailable(keyField, err, "the bank did not answer the look-up of Pix key %s: try again", key)
			s.core.log.Warn("resolving a Pix key", "company", s.company, "err", err)
			return Payment{}, err
		}
		pay.DestinationAlias, pay.DestinationAliasType = key, wireKeyType(keyType)
		pay.Destination = PaymentDestination{Name: owner.Name, TaxID: owner.TaxID, PixKey: key, Bank: owner.Bank, Branch: owner.Branch, Account: owner.Account}
	}
	return pay, nil
}

// parsePaymentQRCode reads the key of a static BR Code and, when it has one, its amount
// into pay.Value (which must then be 0 or equal to it).
func parsePaymentQRCode(qr string, pay *Payment) (string, brcode.KeyType, error) {
	qr = strings.TrimSpace(qr)
	if qr == "" {
		return "", "", invalid("qrCode", "qrCode is required")
	}
	code, err := brcode.Parse(qr)
	if err != nil {
		return "", "", invalid("qrCode", "qrCode is not a valid Pix BR Code: %s", reason(err))
	}
	if code.Dynamic() || code.Key == "" {
		return "", "", invalid("qrCode", "qrCode must be a static Pix BR Code: dynamic codes are not paid by this version")
	}
	keyType, key, err := brcode.DetectKey(code.Key)
	if err != nil {
		return "", "", invalid("qrCode", "the qrCode's Pix key is not valid: %s", reason(err))
	}
	if code.HasAmount {
		if pay.Value != 0 && pay.Value != code.Amount {
			return "", "", invalid("value", "value %d differs from the qrCode's amount %d", pay.Value, code.Amount)
		}
		pay.Value = code.Amount
	}
	pay.QRCode = qr
	return key, keyType, nil
}

// cleanBankAccount checks a MANUAL payment's account: an 8-digit ISPB, a branch of 1 to 4
// digits, an account number of 1 to 20 digits (a check digit after '-' allowed), a holder
// name and a valid CPF or CNPJ.
func cleanBankAccount(a *BankAccount) (*BankAccount, error) {
	if a == nil {
		return nil, invalid("account", "account is required for a MANUAL payment")
	}
	out := *a
	if !digits(out.ISPB, 8, 8) {
		return nil, invalid("psp.id", "psp.id must be the 8-digit ISPB of the institution")
	}
	if !digits(out.Branch, 1, 4) {
		return nil, invalid("account.branch", "account.branch must have 1 to 4 digits")
	}
	num, dv, _ := strings.Cut(out.Account, "-")
	if !digits(num, 1, 20) || dv != "" && !digits(dv, 1, 1) {
		return nil, invalid("account.account", "account.account must be 1 to 20 digits, with an optional -check digit")
	}
	name, err := cleanString("holder.name", out.HolderName, 200)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, invalid("holder.name", "holder.name is required")
	}
	out.HolderName = name
	tid, err := parseTaxID("holder.taxID", out.HolderTaxID)
	if err != nil {
		return nil, err
	}
	out.HolderTaxID = tid.TaxID
	if out.PSPName, err = cleanString("psp.name", out.PSPName, 200); err != nil {
		return nil, err
	}
	if out.AccountType, err = cleanString("account.accountType", out.AccountType, 20); err != nil {
		return nil, err
	}
	return &out, nil
}

func digits(s string, minLen, maxLen int) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ApprovePayment approves the CREATED payment with the correlationID: in one transaction
// it checks the default account's available balance (EPRECONDITION on "value", "You do
// not have enough balance to make this payment", when short), holds the value and records the payment APPROVED;
// after the commit the Rail sends it, and the bank's answer makes it CONFIRMED (event
// MOVEMENT_CONFIRMED) or FAILED with the money returned (MOVEMENT_FAILED). It returns the
// payment as approved. Approving a payment that is not CREATED is EPRECONDITION, its
// message naming the status, so approving twice, even at once, pays once.
func (s *Service) ApprovePayment(ctx context.Context, correlationID string) (Payment, error) {
	corr, err := cleanCorrelationID("correlationID", correlationID, true)
	if err != nil {
		return Payment{}, err
	}
	var out Payment
	err = s.update(ctx, func(t *txn) error {
		var err error
		if out, err = t.findPayment(corr, false); err != nil {
			return err
		}
		acct, err := t.account(out.SourceAccountID)
		if err != nil {
			return err
		}
		if out, err = t.approvePayment(out, acct); err != nil {
			return err
		}
		return t.put(collPayments, out.ID, "payment", out, out.keys(), out.indexes())
	})
	if err != nil {
		return Payment{}, err
	}
	s.withSentEndToEndID(ctx, &out)
	return out, nil
}

// withSentEndToEndID gives the approved payment p the endToEndId its Pix got: it was sent
// after the approval's commit, before the call returns, and a bank that answered at once
// gave it one, which the approval's answer then carries (its status stays the approval's).
func (s *Service) withSentEndToEndID(ctx context.Context, p *Payment) {
	if cur, err := s.GetPayment(ctx, p.ID); err == nil && cur.Transaction != nil && p.Transaction != nil {
		p.Transaction.EndToEndID = cur.Transaction.EndToEndID
	}
}

// approvePayment holds a CREATED payment's value on acct and makes it APPROVED, with its
// order; the caller stores it.
func (t *txn) approvePayment(p Payment, acct Account) (Payment, error) {
	if p.Status != PaymentCreated {
		return Payment{}, precondition("correlationID", "payment %s is %s: only a CREATED payment can be approved", p.CorrelationID, p.Status)
	}
	if acct.Balance.Available < p.Value {
		return Payment{}, precondition("value", msgPaymentNotEnoughBal)
	}
	o := order{ID: p.ID, Kind: OrderPayment, Source: accountSource(acct.AccountID), Value: p.Value,
		Account: p.Account, Comment: p.Comment}
	if p.Account == nil {
		o.Key, o.KeyType = p.DestinationAlias, keyTypeOf(p.DestinationAliasType)
	}
	if err := t.createOrder(o); err != nil {
		if ErrorCode(err) == EPRECONDITION {
			return Payment{}, precondition("value", msgPaymentNotEnoughBal)
		}
		return Payment{}, err
	}
	p.Status, p.UpdatedAt = PaymentApproved, t.now
	p.Transaction = &PaymentTransaction{Value: p.Value, Time: t.now}
	return p, nil
}

func keyTypeOf(wire string) brcode.KeyType {
	if wire == "RANDOM" {
		return brcode.KeyEVP
	}
	return brcode.KeyType(wire)
}

// paymentSettled records the final outcome of a payment's order, with its event.
func (t *txn) paymentSettled(o order) error {
	var p Payment
	if err := t.get(collPayments, o.ID, "payment", &p); err != nil {
		return err
	}
	if p.Status != PaymentApproved {
		return nil
	}
	if p.Transaction == nil {
		p.Transaction = &PaymentTransaction{Value: p.Value, Time: t.now}
	}
	p.Transaction.EndToEndID = o.SettledEndToEndID
	p.UpdatedAt = t.now
	event := EventMovementConfirmed
	ev := movementEvent{Payment: p.movement()}
	if o.Status == OrderConfirmed {
		p.Status = PaymentConfirmed
	} else {
		p.Status, p.Transaction.ProviderRejectedReason = PaymentFailed, o.Reason
		event = EventMovementFailed
		ev.Error = &movementError{Code: o.Reason, Description: "the bank did not complete the payment: " + o.Reason}
		if o.Detail != "" {
			ev.Error.Description += ": " + o.Detail // the bank's own words
		}
	}
	ev.Payment.Status = p.Status
	ev.Transaction = p.Transaction
	if err := t.put(collPayments, p.ID, "payment", p, p.keys(), p.indexes()); err != nil {
		return err
	}
	return t.emit(event, ev)
}

// movementEvent is the payload of MOVEMENT_CONFIRMED and MOVEMENT_FAILED (wire reference
// §5.1); FAILED adds error.
type movementEvent struct {
	Payment     movementPayment     `json:"payment"`
	Transaction *PaymentTransaction `json:"transaction"`
	Error       *movementError      `json:"error,omitempty"`
}

type movementPayment struct {
	Value            int64         `json:"value"`
	Status           PaymentStatus `json:"status"`
	DestinationAlias string        `json:"destinationAlias"`
	Comment          string        `json:"comment"`
	CorrelationID    string        `json:"correlationID"`
}

// movementRemovedEvent is the payload of MOVEMENT_REMOVED: payment{correlationID} only.
type movementRemovedEvent struct {
	Payment struct {
		CorrelationID string `json:"correlationID"`
	} `json:"payment"`
}

type movementError struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

func (p Payment) movement() movementPayment {
	return movementPayment{Value: p.Value, Status: p.Status, DestinationAlias: p.DestinationAlias, Comment: p.Comment, CorrelationID: p.CorrelationID}
}

// RemovePayment takes off a CREATED payment (one that was never approved), with the event
// MOVEMENT_REMOVED {payment: {correlationID}}. Nothing was held, so nothing moves. The
// payment stays, REMOVED, and its correlationID stays taken. The wire reference has no
// route for it; this is a library operation.
func (s *Service) RemovePayment(ctx context.Context, id string) (Payment, error) {
	var out Payment
	err := s.update(ctx, func(t *txn) error {
		var err error
		if out, err = t.findPayment(id, true); err != nil {
			return err
		}
		if out.Status != PaymentCreated {
			return precondition("id", "payment %s is %s: only a CREATED payment can be removed", out.CorrelationID, out.Status)
		}
		out.Status, out.UpdatedAt = PaymentRemoved, t.now
		if err := t.put(collPayments, out.ID, "payment", out, out.keys(), out.indexes()); err != nil {
			return err
		}
		var ev movementRemovedEvent
		ev.Payment.CorrelationID = out.CorrelationID
		return t.emit(EventMovementRemoved, ev)
	})
	return out, err
}

// findPayment reads a payment by correlationID or, when byID, also by id.
func (t *txn) findPayment(id string, byID bool) (Payment, error) {
	var p Payment
	_, err := t.getByKey(collPayments, correlationKey(id), "payment", &p)
	if ok, err := found(err); err != nil {
		return Payment{}, err
	} else if ok {
		return p, nil
	}
	if byID {
		p = Payment{}
		ok, err := found(t.get(collPayments, id, "payment", &p))
		if err != nil {
			return Payment{}, err
		} else if ok {
			return p, nil
		}
	}
	return Payment{}, notFound("Payment not found")
}

// GetPayment returns the payment with the id or correlationID, with its transaction and
// destination as stored: it never calls the Rail.
func (s *Service) GetPayment(ctx context.Context, id string) (Payment, error) {
	var p Payment
	err := s.view(ctx, func(t *txn) error {
		var err error
		p, err = t.findPayment(id, true)
		return err
	})
	return p, err
}

// ListPayments returns the company's payments, newest first.
func (s *Service) ListPayments(ctx context.Context, f PaymentFilter) ([]Payment, PageInfo, error) {
	p, err := f.ListParams.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) { // zero: no bound
		return nil, PageInfo{}, invalid("end", "end must not be before start")
	}
	q := p.query(indexAll)
	if q.From, q.To, err = timeRange(f.Start, f.End, "start"); err != nil {
		return nil, PageInfo{}, err
	}
	var out []Payment
	var total int
	err = s.view(ctx, func(t *txn) error {
		var err error
		out, total, err = list[Payment](t, collPayments, q, nil)
		return err
	})
	return out, p.info(total), err
}

// resolveKey asks the Rail who owns a Pix key, bounded as a call about an order is
// (Options.SendTimeout): a bank that does not answer holds the caller no longer than that,
// and its silence is the bank's failure, not the caller's context ending.
func (s *Service) resolveKey(ctx context.Context, key string, typ brcode.KeyType) (KeyOwner, error) {
	rctx, cancel := context.WithTimeout(ctx, s.core.sendTimeout)
	defer cancel()
	owner, err := s.core.rail.ResolveKey(rctx, key, typ)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer in %v", s.core.sendTimeout)
	}
	return owner, err
}

// Package rail is the contract between the payments Service and a bank: the driver that
// sends Pix out, looks up Pix keys, and, for a bank that collects for the company,
// registers charges and lists the Pix that arrived.
//
// The Service records an order (and holds its money) before it calls Send, and learns the
// outcome from Send, from Status, or from the bank itself through
// Service.RecordSettlement; a Rail keeps no promise the Service has not recorded first.
// Every driver passes the conformance suite in rail/railtest. rail/sandbox is the
// make-believe bank of tests and demos.
package rail

import (
	"context"
	"errors"
	"time"

	"github.com/pixfoundry/payments/brcode"
)

// Rail is the bank side: it sends Pix out and knows who owns a Pix key.
type Rail interface {
	// Send hands an outgoing Pix (a payment, a refund, a withdrawal) to the bank. It is
	// idempotent by order ID: sending the same order again starts nothing new and reports
	// where the first one stands.
	//
	// An error means one of two things, and the Service treats them apart. A *RefusedError
	// (see Refused) says the bank refused the order before acting: nothing was sent, and
	// the order fails at once, its money returned. Any other error (a timeout, a 5xx, a
	// lost connection) says the outcome is unknown: the bank may have acted, so the Service
	// asks Status before it sends the order again.
	Send(ctx context.Context, o PixOrder) (Settlement, error)
	// Status reports where an order sent earlier stands. ErrUnknownOrder says the bank has
	// no record of it (the send never reached it): the Service sends it again.
	Status(ctx context.Context, o PixOrder) (Settlement, error)
	// ResolveKey returns who owns a Pix key. A key nobody owns is ErrKeyNotFound; a key that
	// is not a key at all is an *InvalidError. A bank that offers no look-up of the DICT
	// (the Central Bank's API Pix has none) answers ErrNoKeyLookup for every valid key: the
	// Service then records a payment with the key alone, and the bank's refusal of an
	// unknown key at Send fails it.
	ResolveKey(ctx context.Context, key string, keyType brcode.KeyType) (KeyOwner, error)
}

// Poller is a Rail that says how often the Service should ask Status about an order the
// bank accepted but has not settled (banks rate-limit; one that pushes settlements, see
// Service.RecordSettlement, can be asked seldom). Without it the Service asks every
// DefaultPollInterval.
type Poller interface {
	PollInterval() time.Duration
}

// DefaultPollInterval is how soon an accepted, unsettled order is asked about again when
// the Rail is not a Poller.
const DefaultPollInterval = 10 * time.Second

// Sandboxed is a Rail whose money is make-believe. A Service over one says so
// (Service.Sandbox) and a server prints it at start, in /health and in /metrics.
type Sandboxed interface {
	Sandbox() bool
}

// IsSandbox reports whether r says its money is make-believe.
func IsSandbox(r Rail) bool {
	s, ok := r.(Sandboxed)
	return ok && s.Sandbox()
}

// Collector is a Rail of a bank that collects for the company: it registers dynamic
// charges (the bank serves their payload and hands back the BR Code to show), removes them,
// and lists the Pix that arrived, for reconciliation (banks may lose a webhook; the
// listing is the truth).
type Collector interface {
	// IssueCharge registers a charge with the bank under its TxID and returns the BR Code
	// to hand out. Issuing the same TxID again with the same charge returns the same code.
	IssueCharge(ctx context.Context, c Charge) (IssuedCharge, error)
	// RemoveCharge withdraws a charge so that it can no longer be paid. Removing one that
	// is unknown is ErrUnknownCharge.
	RemoveCharge(ctx context.Context, txid string) error
	// ListReceived lists the Pix the bank received from q.From (included) to q.To
	// (excluded), oldest first, a page at a time: the next page is asked with the Cursor
	// of the last. Across the pages of one window every Pix is listed once.
	ListReceived(ctx context.Context, q ReceivedQuery) (ReceivedPage, error)
}

// OrderKind says what an outgoing Pix is for.
type OrderKind string

// Order kinds.
const (
	OrderPayment    OrderKind = "PAYMENT"    // a payment to a Pix key or bank account
	OrderRefund     OrderKind = "REFUND"     // money sent back to the payer of a received Pix
	OrderWithdrawal OrderKind = "WITHDRAWAL" // money taken out to the company's own bank account
)

// BankAccount is a destination given by its bank details (a MANUAL payment): the
// institution (ISPB), branch, account number and type, and its holder.
type BankAccount struct {
	ISPB        string `json:"ispb"`
	PSPName     string `json:"pspName,omitempty"`
	Branch      string `json:"branch"`
	Account     string `json:"account"`
	AccountType string `json:"accountType,omitempty"` // CACC (checking), SVGS (savings), ...
	HolderName  string `json:"holderName"`
	HolderTaxID string `json:"holderTaxID"`
}

// PixOrder is an outgoing Pix as the Service hands it to the Rail.
type PixOrder struct {
	// ID is the Service's id of the order; the Rail is idempotent by it (a bank's own
	// idempotency key, such as Efí's idEnvio, is made from it).
	ID   string
	Kind OrderKind
	// EndToEndID is, for a refund, the endToEndId of the received Pix being refunded.
	EndToEndID string
	// Key and KeyType say where a payment goes (withdrawals may leave them empty: the
	// company's registered bank account). An empty KeyType means "detect it".
	Key     string
	KeyType brcode.KeyType
	// Account is where a payment by bank details (MANUAL) goes, instead of a key.
	Account *BankAccount
	// Value is in centavos, positive.
	Value   int64
	Comment string
	// SentAt is when the Service first sent the order; it is part of the order, so a
	// resend carries the same SentAt.
	SentAt time.Time
	// BankRef is the bank's own id for the order (an rtrId, an external id) once a
	// Settlement carried one; Status may need it to find the order.
	BankRef string
}

// SettlementStatus is where an outgoing Pix stands.
type SettlementStatus string

// Settlement statuses. Pending moves to Confirmed or Failed, once; those are final.
const (
	SettlementPending   SettlementStatus = "PENDING"
	SettlementConfirmed SettlementStatus = "CONFIRMED"
	SettlementFailed    SettlementStatus = "FAILED"
)

// Final reports whether s is a final status.
func (s SettlementStatus) Final() bool {
	return s == SettlementConfirmed || s == SettlementFailed
}

// Failure reasons a Rail reports in Settlement.Reason or RefusedError.Reason.
const (
	ReasonInvalidPixKey    = "INVALID_PIX_KEY"    // no such key: nothing was sent
	ReasonBankError        = "BANK_ERROR"         // the receiving bank failed
	ReasonNotEnoughBalance = "NOT_ENOUGH_BALANCE" // the receiving side refused the amount
	ReasonAccountNotFound  = "ACCOUNT_NOT_FOUND"  // no such account: nothing was sent
	ReasonRefused          = "REFUSED"            // the bank refused the order; Detail says why
)

// ISO 20022 return reasons Pix uses, as a bank reports them.
const (
	ReasonAC03 = "AC03" // invalid creditor account number
	ReasonAC06 = "AC06" // account blocked
	ReasonAC07 = "AC07" // creditor account closed
	ReasonAC14 = "AC14" // invalid creditor account type
	ReasonAG03 = "AG03" // transaction type not supported
	ReasonAM02 = "AM02" // amount exceeds the allowed maximum
	ReasonAM04 = "AM04" // insufficient funds
	ReasonAM09 = "AM09" // wrong amount
	ReasonBE01 = "BE01" // holder does not match the account
	ReasonBE17 = "BE17" // creditor identifier invalid
	ReasonDS04 = "DS04" // order rejected by the bank
	ReasonMD01 = "MD01" // no mandate
	ReasonRR04 = "RR04" // regulatory reason
)

// Settlement is the outcome of an order as far as the bank knows.
type Settlement struct {
	Status SettlementStatus
	// EndToEndID identifies the Pix in the Pix network; empty when none was sent.
	EndToEndID string
	// Reason says why a Failed order failed, as a code: ReasonInvalidPixKey, an ISO 20022
	// code, ...
	Reason string
	// Detail is the bank's own words about the order (its free-text reason), if any.
	Detail string
	// BankRef is the bank's id for the order (an idEnvio, an rtrId, an external id), if
	// it gives one. The Service keeps it and hands it back in PixOrder.BankRef.
	BankRef string
	// At is when the order reached its status.
	At time.Time
}

// KeyOwner is who a Pix key belongs to, as the DICT says.
type KeyOwner struct {
	Name    string
	TaxID   string // CPF or CNPJ, bare
	Bank    string // ISPB of the owner's institution, 8 digits
	Branch  string
	Account string
}

// Charge is a dynamic charge as the Service registers it with a collecting bank.
type Charge struct {
	// TxID identifies the charge at the bank and in the Pix the payer sends.
	TxID string
	// Key is the receiving Pix key.
	Key string
	// Value is in centavos, positive.
	Value int64
	// Expires is when the charge stops taking payments.
	Expires time.Time
	// MerchantName and MerchantCity are the receiver as the BR Code shows it.
	MerchantName string
	MerchantCity string
	// Message is shown to the payer (solicitacaoPagador).
	Message string
	// PayerName and PayerTaxID name who is expected to pay, if known.
	PayerName  string
	PayerTaxID string
	// Due, when set, makes the charge one with a due date (the API Pix's cobv): Expires
	// is then ignored, and the payer (PayerName and PayerTaxID) is required.
	Due *DueTerms
}

// DueTerms are the terms of a charge with a due date. Percentages are basis points (100
// is 1.00%), values centavos; each of fine, interest and discount is one of the two or
// neither.
type DueTerms struct {
	// Date is the day the charge falls due, "2006-01-02" in the receiver's calendar.
	Date string
	// DaysAfter is how many days after Date the charge is still paid, late.
	DaysAfter int
	// A fine, once, for paying after Date.
	FineBasisPoints int64
	FineCentavos    int64
	// Interest for each late day (calendar days).
	InterestBasisPointsPerDay int64
	InterestCentavosPerDay    int64
	// A discount for paying early: tiers that hold until a date, or an amount for each
	// calendar day of advance.
	DiscountTiers             []DiscountTier
	DiscountBasisPointsPerDay int64
	DiscountCentavosPerDay    int64
}

// DiscountTier is a discount that holds until Date ("2006-01-02") included: BasisPoints
// of the value or Centavos off; a charge's tiers are all of one of the two.
type DiscountTier struct {
	Date        string
	BasisPoints int64
	Centavos    int64
}

// IssuedCharge is a charge the bank registered.
type IssuedCharge struct {
	TxID string
	// BRCode is the Pix copy-and-paste code to show the payer.
	BRCode string
	// Location is where the bank serves the charge's payload, for a dynamic code; empty
	// when the BR Code carries the charge itself.
	Location string
}

// ReceivedQuery is a window of ListReceived: From included, To excluded.
type ReceivedQuery struct {
	From, To time.Time
	// Cursor is the previous page's ReceivedPage.Cursor; empty for the first page.
	Cursor string
	// Limit is the most Pix a page holds; 0 lets the bank choose.
	Limit int
}

// ReceivedPage is one page of ListReceived.
type ReceivedPage struct {
	Pix []ReceivedPix
	// Cursor asks for the next page; empty when this is the last.
	Cursor string
}

// ReceivedPix is a Pix the bank received for the company.
type ReceivedPix struct {
	// EndToEndID is the Pix network's id of the payment: the same id twice is one Pix.
	EndToEndID string
	// TxID is the charge's or static code's reference the Pix carried, if any.
	TxID string
	// Key is the receiving Pix key.
	Key string
	// Value is in centavos.
	Value int64
	// At is when the Pix settled.
	At         time.Time
	PayerName  string
	PayerTaxID string
	// Message is the payer's message (infoPagador).
	Message string
}

// ErrKeyNotFound is ResolveKey's answer for a key nobody owns.
var ErrKeyNotFound = errors.New("rail: Pix key not found")

// ErrNoKeyLookup is ResolveKey's answer from a bank that cannot say who owns a key.
var ErrNoKeyLookup = errors.New("rail: the bank offers no look-up of Pix key owners")

// ErrUnknownOrder is Status's answer for an order the bank has no record of: the send never
// reached it, and sending again is safe.
var ErrUnknownOrder = errors.New("rail: the bank has no record of the order")

// ErrUnknownCharge is RemoveCharge's answer for a charge the bank has no record of.
var ErrUnknownCharge = errors.New("rail: the bank has no record of the charge")

// RefusedError is a definite refusal: the bank refused the order before acting, so nothing
// was sent and the order can fail with its money returned.
type RefusedError struct {
	// Reason is a failure code (ReasonInvalidPixKey, an ISO 20022 code, ReasonRefused).
	Reason string
	// Detail is the bank's own words, if any.
	Detail string
}

func (e *RefusedError) Error() string {
	if e.Detail != "" {
		return "rail: the bank refused the order: " + e.Reason + ": " + e.Detail
	}
	return "rail: the bank refused the order: " + e.Reason
}

// Refused returns a *RefusedError; an empty reason is ReasonRefused.
func Refused(reason, detail string) error {
	if reason == "" {
		reason = ReasonRefused
	}
	return &RefusedError{Reason: reason, Detail: detail}
}

// AsRefused returns the refusal err carries, if any.
func AsRefused(err error) (*RefusedError, bool) {
	var r *RefusedError
	ok := errors.As(err, &r)
	return r, ok
}

// InvalidError is a driver's answer to an input the Service should never send (an order
// without an id) or a caller gave (a key that is not a key): Field names it.
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return "rail: " + e.Field + ": " + e.Message }

// Invalid returns an *InvalidError.
func Invalid(field, message string) error { return &InvalidError{Field: field, Message: message} }

// CheckOrder returns an *InvalidError for an order the Service never makes: no ID, a value
// not positive, no SentAt, an unknown kind, a payment with neither key nor bank account,
// or a refund without the endToEndId it refunds. Drivers call it first.
func CheckOrder(o PixOrder) error {
	switch {
	case o.ID == "":
		return Invalid("id", "the order has no id")
	case o.Value <= 0:
		return Invalid("value", "value must be a positive number of centavos")
	case o.SentAt.IsZero():
		return Invalid("sentAt", "the order has no sentAt")
	}
	switch o.Kind {
	case OrderPayment:
		if o.Key == "" && o.Account == nil {
			return Invalid("key", "a payment needs a Pix key or a bank account")
		}
	case OrderRefund:
		if o.EndToEndID == "" {
			return Invalid("endToEndId", "a refund needs the endToEndId of the Pix it refunds")
		}
	case OrderWithdrawal:
	default:
		return Invalid("kind", "unknown order kind "+string(o.Kind))
	}
	return nil
}

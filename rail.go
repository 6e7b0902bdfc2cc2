package payments

import (
	"errors"
	"time"

	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/sandbox"
)

// The bank side's contract lives in package rail; these aliases keep the names callers
// of this package have always used.
type (
	// Rail is the bank side: see rail.Rail.
	Rail = rail.Rail
	// OrderKind says what an outgoing Pix is for.
	OrderKind = rail.OrderKind
	// PixOrder is an outgoing Pix as the Service hands it to the Rail.
	PixOrder = rail.PixOrder
	// SettlementStatus is where an outgoing Pix stands.
	SettlementStatus = rail.SettlementStatus
	// Settlement is the outcome of an order as far as the bank knows.
	Settlement = rail.Settlement
	// KeyOwner is who a Pix key belongs to, as the DICT says.
	KeyOwner = rail.KeyOwner
	// BankAccount is a destination given by its bank details (a MANUAL payment).
	BankAccount = rail.BankAccount
	// SandboxRail is the make-believe bank: see sandbox.Rail.
	SandboxRail = sandbox.Rail
)

// The constants below are package rail's and rail/sandbox's, written out so that go doc
// shows their values; TestConstants keeps them equal.

// Order kinds: rail.OrderPayment and the others.
const (
	OrderPayment    OrderKind = "PAYMENT"    // a payment to a Pix key or bank account
	OrderRefund     OrderKind = "REFUND"     // money sent back to the payer of a received Pix
	OrderWithdrawal OrderKind = "WITHDRAWAL" // money taken out to the company's own bank account
)

// Settlement statuses: rail.SettlementPending and the others. Pending moves to Confirmed
// or Failed, once; those are final.
const (
	SettlementPending   SettlementStatus = "PENDING"
	SettlementConfirmed SettlementStatus = "CONFIRMED"
	SettlementFailed    SettlementStatus = "FAILED"
)

// Failure reasons a Rail reports: see package rail.
const (
	ReasonInvalidPixKey    = "INVALID_PIX_KEY"    // no such key: nothing was sent
	ReasonBankError        = "BANK_ERROR"         // the receiving bank failed
	ReasonNotEnoughBalance = "NOT_ENOUGH_BALANCE" // the receiving side refused the amount
	ReasonAccountNotFound  = "ACCOUNT_NOT_FOUND"  // no such account: nothing was sent
	ReasonAC03             = "AC03"               // invalid creditor account number
	ReasonAC06             = "AC06"               // account blocked
	ReasonAC07             = "AC07"               // creditor account closed
	ReasonAC14             = "AC14"               // invalid creditor account type
	ReasonAG03             = "AG03"               // transaction type not supported
	ReasonAM02             = "AM02"               // amount exceeds the allowed maximum
	ReasonAM04             = "AM04"               // insufficient funds
	ReasonAM09             = "AM09"               // wrong amount
	ReasonBE01             = "BE01"               // holder does not match the account
	ReasonBE17             = "BE17"               // creditor identifier invalid
	ReasonDS04             = "DS04"               // order rejected by the bank
	ReasonMD01             = "MD01"               // no mandate
	ReasonRR04             = "RR04"               // regulatory reason
)

// Sandbox triggers and the sandbox's institution: see package rail/sandbox.
const (
	SandboxKeyNotFound           = "pix-key-not-found@woovi.com" // no such key: a payment to it is refused, INVALID_PIX_KEY
	SandboxKeyBankError          = "bank-error@woovi.com"        // a payment to it fails with BANK_ERROR
	SandboxValueNotEnoughBalance = 666                           // a payment of this many centavos fails with NOT_ENOUGH_BALANCE
	SandboxISPB                  = "99999999"                    // the sandbox's fictitious institution
)

// NewSandboxRail returns the sandbox bank on clock (the system clock if nil) that settles
// orders delay after they are sent: see sandbox.New.
func NewSandboxRail(clock Clock, delay time.Duration) *SandboxRail {
	return sandbox.New(clock, delay) // a nil Clock is a nil sandbox.Clock: the system clock
}

// SandboxAccountFailure returns the failure code the sandbox gives an order to the
// account number: see sandbox.AccountFailure.
func SandboxAccountFailure(account string) string { return sandbox.AccountFailure(account) }

// fromRail turns an error of the Rail into an *Error: an input the Rail found invalid is
// EINVALID on its field, a key nobody owns ENOTFOUND, a context that ended ECANCELED, and
// anything else internal.
func fromRail(err error) error {
	var inv *rail.InvalidError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &inv):
		return invalid(inv.Field, "%s", inv.Message)
	case errors.Is(err, rail.ErrKeyNotFound):
		return notFound("Pix key not found")
	}
	return internal(err)
}

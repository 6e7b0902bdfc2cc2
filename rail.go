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

// Order kinds.
const (
	OrderPayment    = rail.OrderPayment
	OrderRefund     = rail.OrderRefund
	OrderWithdrawal = rail.OrderWithdrawal
)

// Settlement statuses.
const (
	SettlementPending   = rail.SettlementPending
	SettlementConfirmed = rail.SettlementConfirmed
	SettlementFailed    = rail.SettlementFailed
)

// Failure reasons: see package rail.
const (
	ReasonInvalidPixKey    = rail.ReasonInvalidPixKey
	ReasonBankError        = rail.ReasonBankError
	ReasonNotEnoughBalance = rail.ReasonNotEnoughBalance
	ReasonAccountNotFound  = rail.ReasonAccountNotFound
	ReasonAC03             = rail.ReasonAC03
	ReasonAC06             = rail.ReasonAC06
	ReasonAC07             = rail.ReasonAC07
	ReasonAC14             = rail.ReasonAC14
	ReasonAG03             = rail.ReasonAG03
	ReasonAM02             = rail.ReasonAM02
	ReasonAM04             = rail.ReasonAM04
	ReasonAM09             = rail.ReasonAM09
	ReasonBE01             = rail.ReasonBE01
	ReasonBE17             = rail.ReasonBE17
	ReasonDS04             = rail.ReasonDS04
	ReasonMD01             = rail.ReasonMD01
	ReasonRR04             = rail.ReasonRR04
)

// Sandbox triggers and the sandbox's institution: see package rail/sandbox.
const (
	SandboxKeyNotFound           = sandbox.KeyNotFound
	SandboxKeyBankError          = sandbox.KeyBankError
	SandboxValueNotEnoughBalance = sandbox.ValueNotEnoughBalance
	SandboxISPB                  = sandbox.ISPB
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

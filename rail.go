package payments

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
)

// Rail is the bank side: it sends Pix out and knows who owns a Pix key. The Service records
// an order (and holds its money) before it calls Send, and learns the outcome from Send or
// later from Status; a Rail keeps no promise the Service has not recorded first.
type Rail interface {
	// Send hands an outgoing Pix (a payment, a refund, a withdrawal) to the bank. It is
	// idempotent by order ID: sending the same order again starts nothing new and reports
	// where the first one stands.
	Send(ctx context.Context, o PixOrder) (Settlement, error)
	// Status reports where an order sent earlier stands.
	Status(ctx context.Context, o PixOrder) (Settlement, error)
	// ResolveKey returns who owns a Pix key. A key nobody owns is a not-found error.
	ResolveKey(ctx context.Context, key string, keyType brcode.KeyType) (KeyOwner, error)
}

// OrderKind says what an outgoing Pix is for.
type OrderKind string

// Order kinds.
const (
	OrderPayment    OrderKind = "PAYMENT"    // a payment to a Pix key
	OrderRefund     OrderKind = "REFUND"     // money sent back to the payer of a received Pix
	OrderWithdrawal OrderKind = "WITHDRAWAL" // money taken out to the company's own bank account
)

// PixOrder is an outgoing Pix as the Service hands it to the Rail.
type PixOrder struct {
	// ID is the Service's id of the order; the Rail is idempotent by it.
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
}

// SettlementStatus is where an outgoing Pix stands.
type SettlementStatus string

// Settlement statuses. Pending moves to Confirmed or Failed, once; those are final.
const (
	SettlementPending   SettlementStatus = "PENDING"
	SettlementConfirmed SettlementStatus = "CONFIRMED"
	SettlementFailed    SettlementStatus = "FAILED"
)

// Failure reasons a Rail reports in Settlement.Reason.
const (
	ReasonInvalidPixKey    = "INVALID_PIX_KEY"    // no such key: nothing was sent
	ReasonBankError        = "BANK_ERROR"         // the receiving bank failed
	ReasonNotEnoughBalance = "NOT_ENOUGH_BALANCE" // the receiving side refused the amount
)

// Settlement is the outcome of an order as far as the bank knows.
type Settlement struct {
	Status SettlementStatus
	// EndToEndID identifies the Pix in the Pix network; empty when none was sent.
	EndToEndID string
	// Reason says why a Failed order failed, e.g. ReasonInvalidPixKey.
	Reason string
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

// Sandbox triggers: Pix keys and a value that make SandboxRail fail, so that integrators
// can test their failure paths. The keys are the ones the real sandbox documents.
const (
	SandboxKeyNotFound           = "pix-key-not-found@woovi.com"
	SandboxKeyBankError          = "bank-error@woovi.com"
	SandboxValueNotEnoughBalance = 666
)

// SandboxISPB is the fictitious institution of the sandbox: it appears in the endToEndIds
// SandboxRail makes and as the bank of every key owner it resolves.
const SandboxISPB = "99999999"

// SandboxRail is an in-process Rail: deterministic and stateless. Every result is computed
// from the order alone (its ID, kind, key, value and SentAt) and the clock, so a restart
// loses nothing and Send, a resend and Status always agree.
//
// With delay 0, Send settles at once. With delay d, Send returns Pending and the order
// settles when the clock reaches SentAt+d: Status returns the final outcome from then on,
// with At = SentAt+d. Move a ManualClock to settle orders in tests.
//
// The endToEndId is "E" (a refund: "D", as Pix returns are) + SandboxISPB + SentAt in UTC
// as yyyyMMddHHmm + 11 letters and digits derived from the order ID: 32 characters, the
// same for every call about one order.
//
// Failure triggers:
//
//   - key pix-key-not-found@woovi.com (SandboxKeyNotFound), or a key that is not a valid
//     key of its type: Failed with INVALID_PIX_KEY at once, even with a delay, and no
//     endToEndId (nothing was sent). ResolveKey of that key is a not-found error.
//
//   - key bank-error@woovi.com (SandboxKeyBankError): Failed with BANK_ERROR when the
//     order settles (after the delay, if any). ResolveKey succeeds.
//
//   - value 666 centavos (SandboxValueNotEnoughBalance): Failed with NOT_ENOUGH_BALANCE
//     when the order settles: the receiving bank refuses it.
//
//   - a bank account (a MANUAL payment) whose number is one of the sandbox's failing
//     numbers: 1111111 … 9999999 (seven equal digits) and 1010101 … 1010115. Failed with
//     the code SandboxAccountFailure gives (see there for the table): ACCOUNT_NOT_FOUND,
//     INVALID_PIX_KEY and the ISO 20022 codes are refused at once, with no endToEndId
//     (nothing was sent); NOT_ENOUGH_BALANCE and BANK_ERROR fail when the order settles.
//
// Every other order is Confirmed. ResolveKey returns for any other valid key an owner
// derived from the key: a name, a valid CPF (or the key itself for CPF and CNPJ keys),
// SandboxISPB, branch 0001 and an account number.
//
// Send and Status return an EINVALID error for an order the Service should never make: no
// ID, a value not positive, no SentAt, an unknown kind, a payment without a key, or a
// refund without the endToEndId it refunds.
type SandboxRail struct {
	clock Clock
	delay time.Duration
}

// NewSandboxRail returns a sandbox rail on clock (the system clock if nil) that settles
// orders delay after they are sent.
func NewSandboxRail(clock Clock, delay time.Duration) *SandboxRail {
	if clock == nil {
		clock = SystemClock{}
	}
	return &SandboxRail{clock: clock, delay: delay}
}

// Send hands the order to the sandbox bank; see SandboxRail for the outcomes.
func (r *SandboxRail) Send(ctx context.Context, o PixOrder) (Settlement, error) {
	return r.Status(ctx, o)
}

// Status reports where the order stands; see SandboxRail.
func (r *SandboxRail) Status(ctx context.Context, o PixOrder) (Settlement, error) {
	if err := ctx.Err(); err != nil {
		return Settlement{}, internal(err)
	}
	if err := checkOrder(o); err != nil {
		return Settlement{}, err
	}
	if o.Key != "" {
		_, key, err := railKey(o.Key, o.KeyType)
		if err != nil || key == SandboxKeyNotFound {
			return Settlement{Status: SettlementFailed, Reason: ReasonInvalidPixKey, At: o.SentAt}, nil
		}
		o.Key = key
	}
	if o.Account != nil {
		if code := SandboxAccountFailure(o.Account.Account); code != "" && code != ReasonNotEnoughBalance && code != ReasonBankError {
			return Settlement{Status: SettlementFailed, Reason: code, At: o.SentAt}, nil // refused at once: nothing sent
		}
	}
	s := Settlement{Status: SettlementPending, EndToEndID: sandboxEndToEndID(o), At: o.SentAt}
	settleAt := o.SentAt.Add(r.delay)
	if r.delay > 0 && r.clock.Now().Before(settleAt) {
		return s, nil
	}
	s.At = settleAt
	switch {
	case o.Key == SandboxKeyBankError:
		s.Status, s.Reason = SettlementFailed, ReasonBankError
	case o.Value == SandboxValueNotEnoughBalance:
		s.Status, s.Reason = SettlementFailed, ReasonNotEnoughBalance
	case o.Account != nil && SandboxAccountFailure(o.Account.Account) != "":
		s.Status, s.Reason = SettlementFailed, SandboxAccountFailure(o.Account.Account)
	default:
		s.Status = SettlementConfirmed
	}
	return s, nil
}

// ResolveKey returns the owner of a valid key; see SandboxRail.
func (r *SandboxRail) ResolveKey(ctx context.Context, key string, keyType brcode.KeyType) (KeyOwner, error) {
	if err := ctx.Err(); err != nil {
		return KeyOwner{}, internal(err)
	}
	typ, k, err := railKey(key, keyType)
	if err != nil {
		return KeyOwner{}, invalid("key", "key is not a valid Pix key: %s", reason(err))
	}
	if k == SandboxKeyNotFound {
		return KeyOwner{}, notFound("Pix key not found")
	}
	h := sha256.Sum256([]byte(k))
	o := KeyOwner{Bank: SandboxISPB, Branch: "0001", Account: sandboxDigits(h[20:28])}
	switch typ {
	case brcode.KeyCNPJ:
		o.Name, o.TaxID = sandboxSurnames[int(h[1])%len(sandboxSurnames)]+" Comercio LTDA", k
	case brcode.KeyCPF:
		o.Name, o.TaxID = sandboxName(h), k
	default:
		o.Name, o.TaxID = sandboxName(h), sandboxCPF(h[8:17])
	}
	return o, nil
}

func checkOrder(o PixOrder) error {
	switch {
	case o.ID == "":
		return invalid("id", "the order has no id")
	case o.Value <= 0:
		return invalid("value", "value must be a positive number of centavos")
	case o.SentAt.IsZero():
		return invalid("sentAt", "the order has no sentAt")
	}
	switch o.Kind {
	case OrderPayment:
		if o.Key == "" && o.Account == nil {
			return invalid("key", "a payment needs a Pix key or a bank account")
		}
	case OrderRefund:
		if o.EndToEndID == "" {
			return invalid("endToEndId", "a refund needs the endToEndId of the Pix it refunds")
		}
	case OrderWithdrawal:
	default:
		return invalid("kind", "unknown order kind %q", o.Kind)
	}
	return nil
}

// railKey returns the type and canonical form of key, of type t or, when t is empty,
// of the type its shape says.
func railKey(key string, t brcode.KeyType) (brcode.KeyType, string, error) {
	if t == "" {
		return brcode.DetectKey(key)
	}
	k, err := brcode.NormalizeKey(key, t)
	return t, k, err
}

const sandboxAlphanumerics = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSandboxEndToEndID returns a new endToEndId of a Pix sent by the fictitious sandbox
// bank, in the network's format: "E", SandboxISPB, the Service's time as yyyyMMddHHmm in
// UTC and 11 letters and digits from the Service's id source; 32 characters. The sandbox
// pay route gives it to the Pix it simulates, so that with a ManualClock and a fixed
// Options.IDs its output is the same on every run.
func (s *Service) NewSandboxEndToEndID() string {
	return "E" + SandboxISPB + s.now().Format("200601021504") + s.core.ids.alphanumerics(11)
}

// sandboxEndToEndID is the order's endToEndId: see SandboxRail.
func sandboxEndToEndID(o PixOrder) string {
	prefix := "E"
	if o.Kind == OrderRefund {
		prefix = "D"
	}
	h := sha256.Sum256([]byte(o.ID))
	b := make([]byte, 0, 32)
	b = append(b, prefix...)
	b = append(b, SandboxISPB...)
	b = o.SentAt.UTC().AppendFormat(b, "200601021504")
	for _, c := range h[:11] {
		b = append(b, sandboxAlphanumerics[int(c)%len(sandboxAlphanumerics)])
	}
	return string(b)
}

var (
	sandboxFirstNames = []string{"Ana", "Bruno", "Carla", "Diego", "Eduarda", "Felipe", "Gabriela", "Henrique",
		"Isabela", "Joao", "Larissa", "Marcos", "Natalia", "Otavio", "Paula", "Rafael"}
	sandboxSurnames = []string{"Silva", "Santos", "Oliveira", "Souza", "Lima", "Pereira", "Costa", "Almeida",
		"Ferreira", "Rodrigues", "Gomes", "Martins"}
)

func sandboxName(h [32]byte) string {
	return sandboxFirstNames[int(h[0])%len(sandboxFirstNames)] + " " + sandboxSurnames[int(h[1])%len(sandboxSurnames)]
}

// sandboxDigits maps each byte to a decimal digit.
func sandboxDigits(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = '0' + c%10
	}
	return string(out)
}

// sandboxCPF makes a valid CPF from 9 bytes: 9 digits and their two check digits.
func sandboxCPF(b []byte) string {
	d := []byte(sandboxDigits(b[:9]))
	if sandboxAllSame(d) {
		d[8] = '0' + (d[8]-'0'+1)%10
	}
	d = append(d, cpfCheckDigit(d))
	return string(append(d, cpfCheckDigit(d)))
}

func sandboxAllSame(d []byte) bool {
	for _, c := range d {
		if c != d[0] {
			return false
		}
	}
	return true
}

// cpfCheckDigit is the next CPF check digit of d (9 or 10 digits): weights from len(d)+1
// down to 2, sum*10 mod 11, 10 counting as 0.
func cpfCheckDigit(d []byte) byte {
	sum := 0
	for i, c := range d {
		sum += int(c-'0') * (len(d) + 1 - i)
	}
	r := sum * 10 % 11
	if r == 10 {
		r = 0
	}
	return byte('0' + r)
}

// Failure codes of the sandbox's failing account numbers, beyond the reasons above: the
// ISO 20022 return reasons Pix uses.
const (
	ReasonAccountNotFound = "ACCOUNT_NOT_FOUND"
	ReasonAC03            = "AC03" // invalid creditor account number
	ReasonAC06            = "AC06" // account blocked
	ReasonAC07            = "AC07" // creditor account closed
	ReasonAC14            = "AC14" // invalid creditor account type
	ReasonAG03            = "AG03" // transaction type not supported
	ReasonAM02            = "AM02" // amount exceeds the allowed maximum
	ReasonAM04            = "AM04" // insufficient funds
	ReasonAM09            = "AM09" // wrong amount
	ReasonBE01            = "BE01" // holder does not match the account
	ReasonBE17            = "BE17" // creditor identifier invalid
	ReasonDS04            = "DS04" // order rejected by the bank
	ReasonMD01            = "MD01" // no mandate
	ReasonRR04            = "RR04" // regulatory reason
)

// sandboxRepdigitFailures maps the account numbers 1111111 … 9999999 (digit d repeated
// seven times) to their code: index d-1.
var sandboxRepdigitFailures = [9]string{
	ReasonAccountNotFound,  // 1111111
	ReasonNotEnoughBalance, // 2222222
	ReasonInvalidPixKey,    // 3333333
	ReasonAC03,             // 4444444
	ReasonAC06,             // 5555555
	ReasonAM04,             // 6666666
	ReasonBankError,        // 7777777
	ReasonBE01,             // 8888888
	ReasonDS04,             // 9999999
}

// sandboxSequenceFailures maps 1010101 … 1010115 to their code: index n-1010101.
var sandboxSequenceFailures = [15]string{
	ReasonAccountNotFound, ReasonNotEnoughBalance, ReasonInvalidPixKey, ReasonAC03, ReasonAC06, // 1010101-1010105
	ReasonAC07, ReasonAC14, ReasonAG03, ReasonAM02, ReasonAM04, // 1010106-1010110
	ReasonAM09, ReasonBE01, ReasonBE17, ReasonDS04, ReasonMD01, // 1010111-1010115
}

// SandboxAccountFailure returns the failure code SandboxRail gives an order to the account
// number (digits; a check digit after '-' is ignored), or "" when the number is not one of
// the sandbox's failing numbers:
//
//	1111111 ACCOUNT_NOT_FOUND   1010101 ACCOUNT_NOT_FOUND    1010109 AM02
//	2222222 NOT_ENOUGH_BALANCE  1010102 NOT_ENOUGH_BALANCE   1010110 AM04
//	3333333 INVALID_PIX_KEY     1010103 INVALID_PIX_KEY      1010111 AM09
//	4444444 AC03                1010104 AC03                 1010112 BE01
//	5555555 AC06                1010105 AC06                 1010113 BE17
//	6666666 AM04                1010106 AC07                 1010114 DS04
//	7777777 BANK_ERROR          1010107 AC14                 1010115 MD01
//	8888888 BE01                1010108 AG03
//	9999999 DS04
func SandboxAccountFailure(account string) string {
	n, _, _ := strings.Cut(strings.TrimSpace(account), "-")
	if len(n) != 7 {
		return ""
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return ""
		}
	}
	if d := n[0]; d != '0' && strings.Count(n, n[:1]) == 7 {
		return sandboxRepdigitFailures[d-'1']
	}
	if v, err := strconv.Atoi(n); err == nil && v >= 1010101 && v <= 1010115 {
		return sandboxSequenceFailures[v-1010101]
	}
	return ""
}

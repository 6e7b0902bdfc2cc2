// Package sandbox is a make-believe bank: a rail.Rail that settles orders in process,
// deterministically, with triggers that make them fail, and a rail.Collector that keeps
// what it was told in memory. It is the bank of tests and demos, and says so
// (Sandbox() is true): no real centavo moves through it.
package sandbox

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// Triggers: Pix keys and a value that make the sandbox fail, so that integrators can test
// their failure paths. The keys are the ones the real sandbox documents.
const (
	KeyNotFound           = "pix-key-not-found@woovi.com"
	KeyBankError          = "bank-error@woovi.com"
	ValueNotEnoughBalance = 666
)

// ISPB is the fictitious institution of the sandbox: it appears in the endToEndIds the
// sandbox makes and as the bank of every key owner it resolves.
const ISPB = "99999999"

// Clock gives the time; any payments.Clock is one.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Rail is the sandbox bank. Sending is deterministic: every result is computed from the
// order alone (its ID, kind, key, value and SentAt) and the clock, so Send, a resend and
// Status always agree, and a restart loses nothing (Status forgets what was sent and says
// so, and the resend settles the order as before).
//
// With delay 0, Send settles at once. With delay d, Send returns Pending and the order
// settles when the clock reaches SentAt+d: Status returns the final outcome from then on,
// with At = SentAt+d. Move a ManualClock to settle orders in tests.
//
// The endToEndId is "E" (a refund: "D", as Pix returns are) + ISPB + SentAt in UTC as
// yyyyMMddHHmm + 11 letters and digits derived from the order ID: 32 characters, the same
// for every call about one order. The bank's reference (Settlement.BankRef) is "SBX" and
// 16 hex digits derived from the order ID.
//
// Failure triggers:
//
//   - key pix-key-not-found@woovi.com (KeyNotFound), or a key that is not a valid key of
//     its type: refused (a *rail.RefusedError with INVALID_PIX_KEY) by Send, and Failed
//     with INVALID_PIX_KEY by Status, at once even with a delay, and no endToEndId (nothing
//     was sent). ResolveKey of that key is rail.ErrKeyNotFound.
//
//   - key bank-error@woovi.com (KeyBankError): Failed with BANK_ERROR when the order
//     settles (after the delay, if any). ResolveKey succeeds.
//
//   - value 666 centavos (ValueNotEnoughBalance): Failed with NOT_ENOUGH_BALANCE when the
//     order settles: the receiving bank refuses it.
//
//   - a bank account (a MANUAL payment) whose number is one of the sandbox's failing
//     numbers: 1111111 … 9999999 (seven equal digits) and 1010101 … 1010115. Failed with
//     the code AccountFailure gives (see there for the table): ACCOUNT_NOT_FOUND,
//     INVALID_PIX_KEY and the ISO 20022 codes are refused at once, with no endToEndId
//     (nothing was sent); NOT_ENOUGH_BALANCE and BANK_ERROR fail when the order settles.
//
// Every other order is Confirmed. ResolveKey returns for any other valid key an owner
// derived from the key: a name, a valid CPF (or the key itself for CPF and CNPJ keys),
// ISPB, branch 0001 and an account number.
//
// Send and Status return a *rail.InvalidError for an order the Service should never make
// (see rail.CheckOrder).
//
// As a rail.Collector it keeps the charges it issued and the Pix it received (Receive) in
// memory: a restart forgets them.
type Rail struct {
	clock Clock
	delay time.Duration

	mu       sync.Mutex
	sent     map[string]struct{}         // the ids of the orders sent, for Status
	charges  map[string]issued           // by txid
	received map[string]rail.ReceivedPix // by endToEndId
}

type issued struct {
	charge rail.Charge
	code   string
}

// New returns a sandbox bank on clock (the system clock if nil) that settles orders delay
// after they are sent.
func New(clock Clock, delay time.Duration) *Rail {
	if clock == nil {
		clock = systemClock{}
	}
	return &Rail{clock: clock, delay: delay, sent: map[string]struct{}{}, charges: map[string]issued{}, received: map[string]rail.ReceivedPix{}}
}

// Sandbox reports that the sandbox's money is make-believe.
func (r *Rail) Sandbox() bool { return true }

// Send hands the order to the sandbox bank; see Rail for the outcomes.
func (r *Rail) Send(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	if err := ctx.Err(); err != nil {
		return rail.Settlement{}, err
	}
	if err := rail.CheckOrder(o); err != nil {
		return rail.Settlement{}, err
	}
	r.mu.Lock()
	r.sent[o.ID] = struct{}{}
	r.mu.Unlock()
	s := r.settlement(o)
	if s.Status == rail.SettlementFailed && s.EndToEndID == "" {
		return rail.Settlement{}, rail.Refused(s.Reason, "the sandbox refused the order: "+s.Reason)
	}
	return s, nil
}

// Status reports where an order sent to this Rail stands; see Rail. An order it was not
// sent (since the process started: the record of what was sent is kept in memory) is
// rail.ErrUnknownOrder, and the Service sends it again, which, being computed from the
// order, settles it as the first send would have.
func (r *Rail) Status(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	if err := ctx.Err(); err != nil {
		return rail.Settlement{}, err
	}
	if err := rail.CheckOrder(o); err != nil {
		return rail.Settlement{}, err
	}
	r.mu.Lock()
	_, sent := r.sent[o.ID]
	r.mu.Unlock()
	if !sent {
		return rail.Settlement{}, rail.ErrUnknownOrder
	}
	return r.settlement(o), nil
}

// settlement computes where a sent order stands from the order and the clock.
func (r *Rail) settlement(o rail.PixOrder) rail.Settlement {
	ref := bankRef(o.ID)
	if o.Key != "" {
		_, key, err := railKey(o.Key, o.KeyType)
		if err != nil || key == KeyNotFound {
			return rail.Settlement{Status: rail.SettlementFailed, Reason: rail.ReasonInvalidPixKey, BankRef: ref, At: o.SentAt}
		}
		o.Key = key
	}
	if o.Account != nil {
		if code := AccountFailure(o.Account.Account); code != "" && code != rail.ReasonNotEnoughBalance && code != rail.ReasonBankError {
			return rail.Settlement{Status: rail.SettlementFailed, Reason: code, BankRef: ref, At: o.SentAt} // refused at once: nothing sent
		}
	}
	s := rail.Settlement{Status: rail.SettlementPending, EndToEndID: endToEndID(o), BankRef: ref, At: o.SentAt}
	settleAt := o.SentAt.Add(r.delay)
	if r.delay > 0 && r.clock.Now().Before(settleAt) {
		return s
	}
	s.At = settleAt
	switch {
	case o.Key == KeyBankError:
		s.Status, s.Reason, s.Detail = rail.SettlementFailed, rail.ReasonBankError, "the receiving bank failed (sandbox trigger)"
	case o.Value == ValueNotEnoughBalance:
		s.Status, s.Reason, s.Detail = rail.SettlementFailed, rail.ReasonNotEnoughBalance, "the receiving side refused the amount (sandbox trigger)"
	case o.Account != nil && AccountFailure(o.Account.Account) != "":
		s.Status, s.Reason = rail.SettlementFailed, AccountFailure(o.Account.Account)
	default:
		s.Status = rail.SettlementConfirmed
	}
	return s
}

// ResolveKey returns the owner of a valid key; see Rail.
func (r *Rail) ResolveKey(ctx context.Context, key string, keyType brcode.KeyType) (rail.KeyOwner, error) {
	if err := ctx.Err(); err != nil {
		return rail.KeyOwner{}, err
	}
	typ, k, err := railKey(key, keyType)
	if err != nil {
		return rail.KeyOwner{}, rail.Invalid("key", "key is not a valid Pix key: "+err.Error())
	}
	if k == KeyNotFound {
		return rail.KeyOwner{}, rail.ErrKeyNotFound
	}
	h := sha256.Sum256([]byte(k))
	o := rail.KeyOwner{Bank: ISPB, Branch: "0001", Account: digits(h[20:28])}
	switch typ {
	case brcode.KeyCNPJ:
		o.Name, o.TaxID = surnames[int(h[1])%len(surnames)]+" Comercio LTDA", k
	case brcode.KeyCPF:
		o.Name, o.TaxID = name(h), k
	default:
		o.Name, o.TaxID = name(h), cpf(h[8:17])
	}
	return o, nil
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

// Alphanumerics are the letters and digits of the sandbox's endToEndIds, in the order
// its derivations index them.
const Alphanumerics = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// endToEndID is the order's endToEndId: see Rail.
func endToEndID(o rail.PixOrder) string {
	prefix := "E"
	if o.Kind == rail.OrderRefund {
		prefix = "D"
	}
	h := sha256.Sum256([]byte(o.ID))
	b := make([]byte, 0, 32)
	b = append(b, prefix...)
	b = append(b, ISPB...)
	b = o.SentAt.UTC().AppendFormat(b, "200601021504")
	for _, c := range h[:11] {
		b = append(b, Alphanumerics[int(c)%len(Alphanumerics)])
	}
	return string(b)
}

// bankRef is the sandbox bank's id for an order: see Rail.
func bankRef(orderID string) string {
	h := sha256.Sum256([]byte("ref|" + orderID))
	const hex = "0123456789abcdef"
	b := []byte("SBX")
	for _, c := range h[:8] {
		b = append(b, hex[c>>4], hex[c&15])
	}
	return string(b)
}

var (
	firstNames = []string{"Ana", "Bruno", "Carla", "Diego", "Eduarda", "Felipe", "Gabriela", "Henrique",
		"Isabela", "Joao", "Larissa", "Marcos", "Natalia", "Otavio", "Paula", "Rafael"}
	surnames = []string{"Silva", "Santos", "Oliveira", "Souza", "Lima", "Pereira", "Costa", "Almeida",
		"Ferreira", "Rodrigues", "Gomes", "Martins"}
)

func name(h [32]byte) string {
	return firstNames[int(h[0])%len(firstNames)] + " " + surnames[int(h[1])%len(surnames)]
}

// digits maps each byte to a decimal digit.
func digits(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = '0' + c%10
	}
	return string(out)
}

// cpf makes a valid CPF from 9 bytes: 9 digits and their two check digits.
func cpf(b []byte) string {
	d := []byte(digits(b[:9]))
	if allSame(d) {
		d[8] = '0' + (d[8]-'0'+1)%10
	}
	d = append(d, cpfCheckDigit(d))
	return string(append(d, cpfCheckDigit(d)))
}

func allSame(d []byte) bool {
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

// repdigitFailures maps the account numbers 1111111 … 9999999 (digit d repeated seven
// times) to their code: index d-1.
var repdigitFailures = [9]string{
	rail.ReasonAccountNotFound,  // 1111111
	rail.ReasonNotEnoughBalance, // 2222222
	rail.ReasonInvalidPixKey,    // 3333333
	rail.ReasonAC03,             // 4444444
	rail.ReasonAC06,             // 5555555
	rail.ReasonAM04,             // 6666666
	rail.ReasonBankError,        // 7777777
	rail.ReasonBE01,             // 8888888
	rail.ReasonDS04,             // 9999999
}

// sequenceFailures maps 1010101 … 1010115 to their code: index n-1010101.
var sequenceFailures = [15]string{
	rail.ReasonAccountNotFound, rail.ReasonNotEnoughBalance, rail.ReasonInvalidPixKey, rail.ReasonAC03, rail.ReasonAC06, // 1010101-1010105
	rail.ReasonAC07, rail.ReasonAC14, rail.ReasonAG03, rail.ReasonAM02, rail.ReasonAM04, // 1010106-1010110
	rail.ReasonAM09, rail.ReasonBE01, rail.ReasonBE17, rail.ReasonDS04, rail.ReasonMD01, // 1010111-1010115
}

// AccountFailure returns the failure code the sandbox gives an order to the account
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
func AccountFailure(account string) string {
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
		return repdigitFailures[d-'1']
	}
	if v, err := strconv.Atoi(n); err == nil && v >= 1010101 && v <= 1010115 {
		return sequenceFailures[v-1010101]
	}
	return ""
}

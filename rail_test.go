package payments_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
)

// endToEndRE is the shape of a Pix endToEndId: E (D for a return), ISPB, yyyyMMddHHmm, 11 alphanumerics.
var endToEndRE = regexp.MustCompile(`^[ED][0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$`)

func payOrder(id string, value int64, key string) payments.PixOrder {
	return payments.PixOrder{ID: id, Kind: payments.OrderPayment, Key: key, KeyType: brcode.KeyEmail, Value: value, SentAt: t0}
}

func TestSandboxRail_Send(t *testing.T) {
	t.Run("Immediate", func(t *testing.T) {
		is := is.New(t)
		rail := payments.NewSandboxRail(payments.NewManualClock(t0), 0)
		s, err := rail.Send(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(s.Status, payments.SettlementConfirmed) // confirmed at once with no delay
		is.Equal(s.At, t0)
		is.Equal(s.Reason, "")
		is.Equal(len(s.EndToEndID), 32)               // the real length
		is.True(endToEndRE.MatchString(s.EndToEndID)) // and shape
		is.Equal(s.EndToEndID[:21], "E"+payments.SandboxISPB+"202611221200")

		again, err := rail.Send(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(again, s) // idempotent by order id
		st, err := payments.NewSandboxRail(payments.NewManualClock(t0), 0).Status(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(st, s) // stateless: another instance (a restart) reports the same

		other, err := rail.Send(ctx, payOrder("o2", 1000, "ana@example.com"))
		is.NoErr(err)
		is.True(other.EndToEndID != s.EndToEndID) // each order its own endToEndId
	})
	t.Run("Delayed", func(t *testing.T) {
		is := is.New(t)
		clock := payments.NewManualClock(t0)
		rail := payments.NewSandboxRail(clock, 10*time.Second)
		o := payOrder("o1", 1000, "ana@example.com")
		s, err := rail.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, payments.SettlementPending) // pending until the delay passes
		is.True(endToEndRE.MatchString(s.EndToEndID))  // the Pix is out: it has its id already
		clock.Advance(9 * time.Second)
		s2, err := rail.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s2, s) // still pending just before
		clock.Advance(time.Second)
		s3, err := rail.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s3.Status, payments.SettlementConfirmed) // confirmed at SentAt+delay
		is.Equal(s3.At, t0.Add(10*time.Second))
		is.Equal(s3.EndToEndID, s.EndToEndID) // same Pix
		s4, err := rail.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s4, s3) // a resend after settling reports the outcome
	})
	t.Run("Refund", func(t *testing.T) {
		is := is.New(t)
		rail := payments.NewSandboxRail(nil, 0)
		s, err := rail.Send(ctx, payments.PixOrder{ID: "r1", Kind: payments.OrderRefund, EndToEndID: "E99999999202611221200abcdefghijk", Value: 100, SentAt: t0})
		is.NoErr(err)
		is.Equal(s.Status, payments.SettlementConfirmed)
		is.Equal(s.EndToEndID[:1], "D") // a Pix return
		is.True(endToEndRE.MatchString(s.EndToEndID))
	})
	t.Run("Withdrawal", func(t *testing.T) {
		is := is.New(t)
		s, err := payments.NewSandboxRail(nil, 0).Send(ctx, payments.PixOrder{ID: "w1", Kind: payments.OrderWithdrawal, Value: 100, SentAt: t0})
		is.NoErr(err)
		is.Equal(s.Status, payments.SettlementConfirmed) // no key needed
	})
}

func TestSandboxRail_Failures(t *testing.T) {
	cases := []struct {
		name        string
		o           payments.PixOrder
		immediate   bool // fails at Send even with a delay
		reason      string
		hasEndToEnd bool
	}{
		{"KeyNotFound", payOrder("o1", 100, payments.SandboxKeyNotFound), true, payments.ReasonInvalidPixKey, false},
		{"KeyNotFoundAnyCase", payOrder("o1", 100, "Pix-Key-Not-Found@Woovi.com"), true, payments.ReasonInvalidPixKey, false},
		{"MalformedKey", payOrder("o1", 100, "not-a-key"), true, payments.ReasonInvalidPixKey, false},
		{"BankError", payOrder("o1", 100, payments.SandboxKeyBankError), false, payments.ReasonBankError, true},
		{"NotEnoughBalance", payOrder("o1", payments.SandboxValueNotEnoughBalance, "ana@example.com"), false, payments.ReasonNotEnoughBalance, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			s, err := payments.NewSandboxRail(nil, 0).Send(ctx, tc.o)
			is.NoErr(err)
			is.Equal(s.Status, payments.SettlementFailed) // the trigger fails the order
			is.Equal(s.Reason, tc.reason)                 // for its documented reason
			is.Equal(s.EndToEndID != "", tc.hasEndToEnd)  // an endToEndId only when a Pix went out

			clock := payments.NewManualClock(t0)
			rail := payments.NewSandboxRail(clock, time.Minute)
			s, err = rail.Send(ctx, tc.o)
			is.NoErr(err)
			if tc.immediate {
				is.Equal(s.Status, payments.SettlementFailed) // refused before sending, even with a delay
			} else {
				is.Equal(s.Status, payments.SettlementPending) // fails when it settles
				clock.Advance(time.Minute)
				s, err = rail.Status(ctx, tc.o)
				is.NoErr(err)
				is.Equal(s.Status, payments.SettlementFailed)
				is.Equal(s.Reason, tc.reason)
				is.Equal(s.At, t0.Add(time.Minute))
			}
		})
	}
}

func TestSandboxRail_Invalid(t *testing.T) {
	good := payOrder("o1", 100, "ana@example.com")
	cases := []struct {
		name  string
		edit  func(*payments.PixOrder)
		field string
	}{
		{"NoID", func(o *payments.PixOrder) { o.ID = "" }, "id"},
		{"ZeroValue", func(o *payments.PixOrder) { o.Value = 0 }, "value"},
		{"NoSentAt", func(o *payments.PixOrder) { o.SentAt = time.Time{} }, "sentAt"},
		{"UnknownKind", func(o *payments.PixOrder) { o.Kind = "GIFT" }, "kind"},
		{"PaymentWithoutKey", func(o *payments.PixOrder) { o.Key = "" }, "key"},
		{"RefundWithoutEndToEndID", func(o *payments.PixOrder) { o.Kind = payments.OrderRefund }, "endToEndId"},
	}
	rail := payments.NewSandboxRail(nil, 0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			o := good
			tc.edit(&o)
			_, err := rail.Send(ctx, o)
			is.Equal(payments.ErrorCode(err), payments.EINVALID) // an order the Service never makes
			is.Equal(payments.ErrorField(err), tc.field)
			_, err = rail.Status(ctx, o)
			is.Equal(payments.ErrorField(err), tc.field) // Status checks the same
		})
	}
	t.Run("Canceled", func(t *testing.T) {
		is := is.New(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := rail.Send(cctx, good)
		is.Equal(payments.ErrorCode(err), payments.ECANCELED) // a canceled context is not an internal fault
	})
}

func TestSandboxRail_ResolveKey(t *testing.T) {
	is := is.New(t)
	rail := payments.NewSandboxRail(nil, 0)
	o, err := rail.ResolveKey(ctx, "ana@example.com", brcode.KeyEmail)
	is.NoErr(err)
	is.True(o.Name != "")             // a name
	is.True(brcode.ValidCPF(o.TaxID)) // a valid CPF
	is.Equal(o.Bank, payments.SandboxISPB)
	is.Equal(o.Branch, "0001")
	is.Equal(len(o.Account), 8)
	again, err := payments.NewSandboxRail(nil, 0).ResolveKey(ctx, "ANA@example.com", "")
	is.NoErr(err)
	is.Equal(again, o) // deterministic, from the canonical key
	other, err := rail.ResolveKey(ctx, "bruno@example.com", brcode.KeyEmail)
	is.NoErr(err)
	is.True(other != o) // another key, another owner

	cpf, err := rail.ResolveKey(ctx, "529.982.247-25", brcode.KeyCPF)
	is.NoErr(err)
	is.Equal(cpf.TaxID, "52998224725") // a CPF key belongs to that CPF
	cnpj, err := rail.ResolveKey(ctx, "11222333000181", "")
	is.NoErr(err)
	is.Equal(cnpj.TaxID, "11222333000181") // a CNPJ key to that CNPJ

	for i := range 200 { // every synthesized CPF is valid
		o, err := rail.ResolveKey(ctx, fmt.Sprintf("user%d@example.com", i), brcode.KeyEmail)
		is.NoErr(err)
		is.True(brcode.ValidCPF(o.TaxID))
	}

	_, err = rail.ResolveKey(ctx, payments.SandboxKeyNotFound, brcode.KeyEmail)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // the not-found trigger
	_, err = rail.ResolveKey(ctx, payments.SandboxKeyBankError, brcode.KeyEmail)
	is.NoErr(err) // the bank-error key exists; sending to it fails
	_, err = rail.ResolveKey(ctx, "ana@example.com", brcode.KeyCPF)
	is.Equal(payments.ErrorField(err), "key") // not a key of that type
}

// The sandbox rail settles orders from the order alone; its triggers make failures on purpose.
func ExampleSandboxRail() {
	ctx := context.Background()
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	rail := payments.NewSandboxRail(clock, 5*time.Second)

	o := payments.PixOrder{ID: "order-1", Kind: payments.OrderPayment, Key: "ana@example.com", Value: 1500, SentAt: clock.Now()}
	s, _ := rail.Send(ctx, o)
	fmt.Println(s.Status)
	clock.Advance(5 * time.Second)
	s, _ = rail.Status(ctx, o)
	fmt.Println(s.Status, len(s.EndToEndID))

	o = payments.PixOrder{ID: "order-2", Kind: payments.OrderPayment, Key: payments.SandboxKeyNotFound, Value: 1500, SentAt: clock.Now()}
	s, _ = rail.Send(ctx, o)
	fmt.Println(s.Status, s.Reason)
	// Output:
	// PENDING
	// CONFIRMED 32
	// FAILED INVALID_PIX_KEY
}

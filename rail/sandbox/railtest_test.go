package sandbox_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/railtest"
	"github.com/pixfoundry/payments/rail/sandbox"
)

// The sandbox passes the conformance suite, settling at once and after a delay.
func TestConformance(t *testing.T) {
	for _, delay := range []time.Duration{0, 5 * time.Second} {
		t.Run("Delay"+delay.String(), func(t *testing.T) {
			railtest.Run(t, func(t *testing.T) railtest.Harness {
				clock := payments.NewManualClock(t0)
				r := sandbox.New(clock, delay)
				return railtest.Harness{
					Rail:   r,
					Settle: func(t *testing.T) { clock.Advance(delay + time.Second) },
					Confirmed: []rail.PixOrder{
						{ID: "pay-email", Kind: rail.OrderPayment, Key: "ana@example.com", KeyType: brcode.KeyEmail, Value: 1500, SentAt: t0},
						{ID: "pay-detected", Kind: rail.OrderPayment, Key: "+5511987654321", Value: 250, SentAt: t0},
						accountOrder("pay-account", "1234567-8"),
						{ID: "refund", Kind: rail.OrderRefund, EndToEndID: "E12345678202611221200abcdefghijk", Value: 500, SentAt: t0},
						{ID: "withdrawal", Kind: rail.OrderWithdrawal, Value: 10000, SentAt: t0},
					},
					Failing: []rail.PixOrder{
						{ID: "bank-error", Kind: rail.OrderPayment, Key: sandbox.KeyBankError, Value: 100, SentAt: t0},
						{ID: "not-enough", Kind: rail.OrderPayment, Key: "ana@example.com", Value: sandbox.ValueNotEnoughBalance, SentAt: t0},
						accountOrder("account-bank-error", "7777777"),
					},
					Refused: rail.PixOrder{ID: "refused", Kind: rail.OrderPayment, Key: sandbox.KeyNotFound, KeyType: brcode.KeyEmail, Value: 100, SentAt: t0},
					Key:     "ana@example.com", KeyType: brcode.KeyEmail,
					MissingKey: sandbox.KeyNotFound, MissingKeyType: brcode.KeyEmail,
					Charge: rail.Charge{TxID: "railtest1", Key: "ana@example.com", Value: 1000, Expires: t0.Add(time.Hour),
						MerchantName: "Loja da Ana", MerchantCity: "Sao Paulo", Message: "pedido 1"},
					Receive: func(t *testing.T, p rail.ReceivedPix) {
						is.New(t).NoErr(r.Receive(p)) // the sandbox receives the Pix
					},
				}
			})
		})
	}
}

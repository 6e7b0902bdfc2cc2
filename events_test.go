package payments_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// pixPayload is the payload of CHARGE_COMPLETED and TRANSACTION_RECEIVED.
type pixPayload struct {
	Charge  *payments.Charge      `json:"charge"`
	Pix     *payments.Transaction `json:"pix"`
	Account *payments.Account     `json:"account"`
}

// eventPayloads decodes the payloads of the events named name (with prefix), in order.
func eventPayloads[T any](t *testing.T, svc *payments.Service, name string) []T {
	t.Helper()
	evs, err := svc.Events(ctx, 0, payments.MaxLimit)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, ev := range evs {
		if ev.Name != svc.EventName(name) {
			continue
		}
		var v T
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestService_EventPayloadsAfterChange: what a transaction and an event carry is the state
// after the change: the charge's updatedAt as saved, and the account's balance after the
// Pix (and its cashback) moved it. The rail settles refunds a minute later, so that the
// cashback's hold is still there when the balance is read.
func TestService_EventPayloadsAfterChange(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := st.open(t)
			t.Cleanup(func() { s.Close() })
			clock := payments.NewManualClock(t0)
			svc, err := payments.New(s, payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			testEventPayloadsAfterChange(t, env{svc: svc, clock: clock, store: s})
		})
	}
}

func testEventPayloadsAfterChange(t *testing.T, e env) {
	for _, tc := range []struct {
		name     string
		cashback bool
	}{{"Plain", false}, {"Cashback", true}} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: tc.name, Value: 10000, EnableCashbackPercentage: tc.cashback})
			e.clock.Advance(time.Minute)
			paidAt := e.clock.Now()
			x := pay(t, e, c)
			is.Equal(x.Charge.UpdatedAt, paidAt) // the transaction's charge, as the payment left it
			stored, err := e.svc.GetTransaction(ctx, x.EndToEndID)
			is.NoErr(err)
			is.Equal(stored.Charge.UpdatedAt, paidAt) // stored so
			is.Equal(stored.Charge.Status, payments.ChargeCompleted)
			after := balance(t, e)
			is.Equal(after.Blocked > 0, tc.cashback) // the cashback's refund is held
			for _, name := range []string{payments.EventChargeCompleted, payments.EventTransactionReceived} {
				ps := eventPayloads[pixPayload](t, e.svc, name)
				p := ps[len(ps)-1]
				is.Equal(p.Charge.UpdatedAt, paidAt)     // the charge after the change
				is.Equal(p.Pix.Charge.UpdatedAt, paidAt) // in the pix too
				is.Equal(p.Account.Balance, after)       // the balance after the movement, not before
			}
		})
	}
	t.Run("Expired", func(t *testing.T) {
		is := is.New(t)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "expires", Value: 500, ExpiresIn: payments.MinChargeExpiresIn})
		e.clock.Advance(time.Hour)
		n, err := e.svc.ExpireCharges(ctx)
		is.NoErr(err)
		is.Equal(n, 1)
		ps := eventPayloads[struct {
			Charge payments.Charge `json:"charge"`
		}](t, e.svc, payments.EventChargeExpired)
		is.Equal(len(ps), 1)
		is.Equal(ps[0].Charge.Status, payments.ChargeExpired)
		is.Equal(ps[0].Charge.UpdatedAt, e.clock.Now()) // when it was recorded EXPIRED
	})
}

package payments_test

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
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
	t.Parallel()
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

// wireKeys is, for each event of the catalogue (without prefix), the top-level keys of its
// payload in the wire reference (§5.1): the real API's sample bodies.
var wireKeys = map[string][]string{
	payments.EventChargeCreated:             {"event", "charge", "company", "account"},
	payments.EventChargeCompleted:           {"event", "charge", "pix", "company", "account"},
	payments.EventChargeExpired:             {"event", "charge", "company", "account"},
	payments.EventChargeNotSamePayer:        {"event", "charge", "pix", "company", "account", "payer"},
	payments.EventTransactionReceived:       {"event", "charge", "pixQrCode", "pix", "company", "account", "refunds"},
	payments.EventRefundConfirmed:           {"event", "refundTransaction", "originalTransaction", "company", "account"},
	payments.EventRefundRejected:            {"event", "refundTransaction", "originalTransaction", "company", "account", "error"},
	payments.EventMovementConfirmed:         {"event", "payment", "transaction"},
	payments.EventMovementFailed:            {"event", "payment", "transaction", "error"},
	payments.EventMovementRemoved:           {"event", "payment"},
	payments.EventRefundReceivedConfirmed:   {"event", "refundTransaction", "originalTransaction", "company", "account"},
	payments.EventTransactionRefundReceived: {"event", "charge", "pixQrCode", "pix", "company", "account", "refunds"},
	payments.EventDisputeCreated:            {"event", "dispute"},
	payments.EventDisputeAccepted:           {"event", "dispute"},
	payments.EventDisputeRejected:           {"event", "dispute"},
	payments.EventDisputeCanceled:           {"event", "dispute"},
	payments.EventPixAutomaticApproved:      pixAutomaticApprovedKeys,
	payments.EventPixAutomaticRejected:      pixAutomaticSubscriptionKeys, // ended: no next period
	payments.EventPixAutomaticCobrCreated:   pixAutomaticInstallmentKeys,
	payments.EventPixAutomaticCobrApproved:  pixAutomaticInstallmentKeys,
	payments.EventPixAutomaticCobrRejected:  pixAutomaticInstallmentKeys,
	payments.EventPixAutomaticCobrCompleted: pixAutomaticInstallmentKeys,
	payments.EventPixAutomaticTryRejected:   pixAutomaticInstallmentKeys,
	payments.EventPixAutomaticTryRequested:  pixAutomaticInstallmentKeys,
}

// wireInnerKeys are keys the reference gives inside a payload: "<event>/<key>" → keys the
// object must have (at least; exactly, when the name starts with "=").
var wireInnerKeys = map[string][]string{
	"TRANSACTION_RECEIVED/pix": {"payer", "value", "time", "endToEndId", "fee", "status", "type", "createdAt",
		"pixKey", "globalID", "debitParty", "creditParty", "raw"},
	"TRANSACTION_RECEIVED/company": {"id", "name", "taxID"},
	"CHARGE_COMPLETED/pix":         {"value", "time", "endToEndId", "status", "type", "globalID"},
	"CHARGE_CREATED/company":       {"id", "name", "taxID"},
	"CHARGE_COMPLETED/company":     {"id", "name", "taxID"},
	"CHARGE_EXPIRED/company":       {"id", "name", "taxID"},
	"CHARGE_CREATED/account":       {"accountId", "balance"},
	"CHARGE_COMPLETED/account":     {"accountId", "balance"},
	"CHARGE_EXPIRED/account":       {"accountId", "balance"},
	"PIX_TRANSACTION_REFUND_SENT_CONFIRMED/refundTransaction": {"value", "time", "endToEndId", "status", "type",
		"debitParty", "creditParty", "partial", "globalID"},
	"PIX_TRANSACTION_REFUND_SENT_CONFIRMED/originalTransaction": {"value", "time", "endToEndId", "status", "type",
		"debitParty", "creditParty", "globalID"},
	"PIX_TRANSACTION_REFUND_SENT_REJECTED/refundTransaction": {"value", "time", "endToEndId", "status", "type",
		"debitParty", "creditParty", "partial", "globalID"},
	"PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED/refundTransaction": {"value", "time", "endToEndId", "status", "type",
		"debitParty", "creditParty", "partial", "globalID"},
	"PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED/originalTransaction": {"value", "time", "endToEndId", "status", "type",
		"debitParty", "creditParty", "globalID"},
	"TRANSACTION_REFUND_RECEIVED/pix": {"value", "time", "endToEndId", "status", "type", "debitParty", "creditParty",
		"partial", "globalID"},
	"TRANSACTION_REFUND_RECEIVED/company": {"id", "name", "taxID"},
	"=MOVEMENT_CONFIRMED/payment":         {"value", "status", "destinationAlias", "comment", "correlationID"},
	"=MOVEMENT_CONFIRMED/transaction":     {"value", "endToEndId", "time"},
	"=MOVEMENT_FAILED/payment":            {"value", "status", "destinationAlias", "comment", "correlationID"},
	"=MOVEMENT_FAILED/transaction":        {"value", "endToEndId", "time", "providerRejectedReason"},
	"=MOVEMENT_FAILED/error":              {"code", "description"},
	"=MOVEMENT_REMOVED/payment":           {"correlationID"},
	"=DISPUTE_CREATED/dispute":            disputePayloadKeys,
	"=DISPUTE_ACCEPTED/dispute":           disputePayloadKeys,
	"=DISPUTE_REJECTED/dispute":           disputePayloadKeys,
	"=DISPUTE_CANCELED/dispute":           disputePayloadKeys,
}

// produceEveryEvent runs operations that, together, emit every event of the catalogue.
func produceEveryEvent(t *testing.T, e env) {
	t.Helper()
	is := is.New(t)
	customer := &payments.CreateCustomerParams{Name: "Dan", TaxID: "52998224725"}
	c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "paid", Value: 10000, Customer: customer})
	x := pay(t, e, c) // another payer: CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER too
	_, err := e.svc.CreateChargeRefund(ctx, "paid", payments.CreateChargeRefundParams{CorrelationID: "r-ok", Value: 1000})
	is.NoErr(err)
	_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r-fails",
		Value: payments.SandboxValueNotEnoughBalance})
	is.NoErr(err)
	_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p-ok", Value: 500,
		DestinationAlias: "ana@example.com", DestinationAliasType: "EMAIL", AutoApprove: true})
	is.NoErr(err)
	_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p-fails", Value: 500,
		DestinationAlias: "bank-error@woovi.com", DestinationAliasType: "EMAIL", AutoApprove: true})
	is.NoErr(err)
	_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p-removed", Value: 500,
		DestinationAlias: "ana@example.com", DestinationAliasType: "EMAIL"})
	is.NoErr(err)
	_, err = e.svc.RemovePayment(ctx, "p-removed")
	is.NoErr(err)
	ok, err := e.svc.GetPayment(ctx, "p-ok")
	is.NoErr(err)
	_, _, err = e.svc.RecordPayoutReturn(ctx, payments.RecordPayoutReturnParams{OrderID: ok.ID, EndToEndID: "D99999999202611271200returned01", Value: 200})
	is.NoErr(err) // the receiver sent part of p-ok back
	produceDisputeEvents(t, e)
	producePixAutomaticEvents(t, e)
	createCharge(t, e, payments.CreateChargeParams{CorrelationID: "expires", Value: 500, ExpiresIn: payments.MinChargeExpiresIn})
	e.clock.Advance(time.Hour)
	is.NoErr(e.svc.RunDue(ctx)) // the expiry, and any order still pending
}

// TestService_EventCatalog: every event of the catalogue is produced by some operation, in
// the shape of the wire reference: its payload's top-level keys are the reference's, with
// "event" first and equal to the event's name, and the keys the reference gives inside.
func TestService_EventCatalog(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		produceEveryEvent(t, e)
		evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		seen := map[string]bool{}
		for _, ev := range evs {
			seen[ev.Name] = true
		}
		catalog := e.svc.EventCatalog()
		is.Equal(len(catalog), len(wireKeys)) // every catalogue event has its wire keys here
		for _, typ := range catalog {
			is.True(seen[typ.Name]) // produced
			is.True(typ.Description != "")
		}
		for _, ev := range evs {
			is.True(strings.HasPrefix(string(ev.Data), `{"event":`)) // "event" first, as webhook bodies carry it
			var payload map[string]json.RawMessage
			is.NoErr(json.Unmarshal(ev.Data, &payload))
			var name string
			is.NoErr(json.Unmarshal(payload["event"], &name))
			is.Equal(name, ev.Name) // the same name
			base := name[strings.Index(name, ":")+1:]
			if !strings.Contains(name, ":") {
				base = name
			}
			want, ok := wireKeys[base]
			if !ok {
				t.Fatalf("event %s is not in the catalogue", name)
			}
			is.Equal(sortedKeys(payload), sorted(want)) // the reference's top-level keys, no more, no less
			for key, inner := range wireInnerKeys {
				exact := strings.HasPrefix(key, "=")
				ev, field, _ := strings.Cut(strings.TrimPrefix(key, "="), "/")
				if ev != base {
					continue
				}
				var obj map[string]json.RawMessage
				is.NoErr(json.Unmarshal(payload[field], &obj))
				if exact {
					is.Equal(sortedKeys(obj), sorted(inner)) // exactly the reference's keys
					continue
				}
				for _, k := range inner {
					if _, ok := obj[k]; !ok {
						t.Errorf("%s: %s has no %q: %s", name, field, k, payload[field])
					}
				}
			}
		}
	})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestService_ChargeCompletedNotSamePayer: a charge paid by someone whose tax ID is not its
// customer's also emits CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER, in the same transaction,
// with the payer at the top; paid by the customer, or with no tax ID to compare, it does not.
func TestService_ChargeCompletedNotSamePayer(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		for _, tc := range []struct {
			name     string
			customer string // tax ID; "" no customer
			payer    string // tax ID; "" none reported
			emitted  bool
		}{
			{"SamePayer", "52998224725", "529.982.247-25", false},
			{"OtherPayer", "52998224725", "11144477735", true},
			{"OtherCNPJ", "11222333000181", "11144477735", true},
			{"NoCustomer", "", "11144477735", false},
			{"CustomerWithoutTaxID", "-", "11144477735", false},
			{"PayerWithoutTaxID", "52998224725", "", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				p := payments.CreateChargeParams{CorrelationID: "c-" + tc.name, Value: 1000}
				switch tc.customer {
				case "":
				case "-":
					p.Customer = &payments.CreateCustomerParams{Name: "Sem CPF", Email: "sem@example.com"}
				default:
					p.Customer = &payments.CreateCustomerParams{Name: "Dan " + tc.name, TaxID: tc.customer}
				}
				c := createCharge(t, e, p)
				evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
				is.NoErr(err)
				after := evs[len(evs)-1].Seq
				x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, TxID: c.Identifier[:25],
					Payer: &payments.Payer{Name: "Ana", TaxID: tc.payer}})
				is.NoErr(err)
				evs, err = e.svc.Events(ctx, after, payments.MaxLimit)
				is.NoErr(err)
				var names []string
				for _, ev := range evs {
					names = append(names, ev.Name)
				}
				want := []string{"OPENPIX:CHARGE_COMPLETED", "OPENPIX:TRANSACTION_RECEIVED"}
				if tc.emitted {
					want = []string{"OPENPIX:CHARGE_COMPLETED", "OPENPIX:CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER", "OPENPIX:TRANSACTION_RECEIVED"}
				}
				is.Equal(names, want) // with the payment, in its transaction's sequence
				if !tc.emitted {
					return
				}
				var payload struct {
					Charge payments.Charge      `json:"charge"`
					Pix    payments.Transaction `json:"pix"`
					Payer  *payments.Customer   `json:"payer"`
				}
				is.NoErr(json.Unmarshal(evs[1].Data, &payload))
				is.Equal(payload.Payer.Name, "Ana")                        // the payer, at the top
				is.Equal(payload.Payer.TaxID.TaxID, tc.payer)              // with the tax ID that differs
				is.Equal(payload.Charge.Customer.TaxID.TaxID, tc.customer) // from the customer's
				is.Equal(payload.Pix.EndToEndID, x.EndToEndID)             // the Pix that paid it
				is.Equal(payload.Charge.Status, payments.ChargeCompleted)
			})
		}
	})
}

// TestService_EventsFollowCursor: while writers create and pay charges from many
// goroutines, a reader follows the outbox with a cursor, in small pages. It sees every
// event once, in sequence order, with no gap: the sequence only grows, and a transaction
// that took a number becomes visible only after every one that took a smaller number
// (store.Store's Next guarantee).
// TestService_EventsAfterLast: nothing is numbered after the largest number; the cursor
// wrapped around and listed every event again.
func TestService_EventsAfterLast(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "one", Value: 100})
		evs, err := e.svc.Events(ctx, 0, 10)
		is.NoErr(err)
		is.Equal(len(evs), 1)
		evs, err = e.svc.Events(ctx, math.MaxUint64, 10)
		is.NoErr(err)
		is.Equal(len(evs), 0)
	})
}

func TestService_EventsFollowCursor(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		const writers, perWriter = 8, 15
		const want = writers * perWriter * 3 // CHARGE_CREATED, CHARGE_COMPLETED, TRANSACTION_RECEIVED

		done := make(chan struct{})
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("w%d-%d", w, i), Value: 1000})
					if err != nil {
						errs <- err
						return
					}
					if _, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, TxID: c.Identifier[:25]}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		go func() { wg.Wait(); close(done) }()

		var seen []payments.Event
		var last uint64
		follow := func() error {
			evs, err := e.svc.Events(ctx, last, 7)
			if err != nil {
				return err
			}
			for _, ev := range evs {
				if ev.Seq != last+1 {
					return fmt.Errorf("after event %d came %d: a gap or a repeat", last, ev.Seq)
				}
				last = ev.Seq
				seen = append(seen, ev)
			}
			if len(evs) == 0 {
				runtime.Gosched() // nothing new yet: let the writers run
			}
			return nil
		}
	loop:
		for {
			select {
			case <-done:
				break loop
			default:
			}
			is.NoErr(follow()) // in order, no gap, no repeat, while the writers write
		}
		for len(seen) < want { // the writers are done: what remains is all committed
			n := len(seen)
			is.NoErr(follow())
			if len(seen) == n {
				break
			}
		}
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		is.Equal(len(seen), want) // every event, once
		evs, err := e.svc.Events(ctx, last, 10)
		is.NoErr(err)
		is.Equal(len(evs), 0) // and nothing after the last
		created := map[string]int{}
		for _, ev := range seen {
			created[ev.Name]++
		}
		is.Equal(created, map[string]int{"OPENPIX:CHARGE_CREATED": writers * perWriter,
			"OPENPIX:CHARGE_COMPLETED": writers * perWriter, "OPENPIX:TRANSACTION_RECEIVED": writers * perWriter}) // each change's events
	})
}

// Package railtest is the conformance suite every rail.Rail driver passes, and FaultRail,
// a Rail that fails on purpose for tests of the code above a Rail.
//
// A driver's test is a short harness: a new bank for every subtest, a way to move the
// bank's time on, and the inputs the driver confirms, fails and refuses:
//
//	func TestConformance(t *testing.T) {
//		railtest.Run(t, func(t *testing.T) railtest.Harness {
//			clock := newManualClock(t0)
//			return railtest.Harness{
//				Rail:      sandbox.New(clock, 5*time.Second),
//				Settle:    func(t *testing.T) { clock.Advance(5 * time.Second) },
//				Confirmed: []rail.PixOrder{{ID: "p1", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 100, SentAt: t0}},
//				Refused:   rail.PixOrder{ID: "r1", Kind: rail.OrderPayment, Key: sandbox.KeyNotFound, Value: 100, SentAt: t0},
//				Key:       "ana@example.com", MissingKey: sandbox.KeyNotFound,
//			}
//		})
//	}
//
// The suite holds a driver to what package rail promises: Send is idempotent by order ID
// and agrees with Status, a final status never changes, a refusal is definite, an ended
// context is reported as such (never as a refusal), inputs the Service never makes are
// *rail.InvalidError, and a rail.Collector's charges and listings behave as documented.
package railtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// Harness tells the suite how to drive one bank. Run asks for a new Harness in every
// subtest, so that each starts with a bank that has seen none of the others' orders.
type Harness struct {
	// Rail is the driver under test.
	Rail rail.Rail
	// Settle moves the bank's time on until every order sent so far has reached its final
	// status (for the sandbox: it advances the sandbox's clock past its delay). The suite
	// calls it more than once to show that final statuses stay put. Nil means the bank
	// settles every order at once.
	Settle func(t *testing.T)
	// Confirmed are orders the bank accepts and confirms: at least one, and one of every
	// kind the driver sends (a payment to a key, to a bank account, a refund, a
	// withdrawal), each with its own ID.
	Confirmed []rail.PixOrder
	// Failing are orders the bank accepts (Send returns no error) and fails when they
	// settle, as a receiving bank's error does; empty when the driver cannot make them.
	Failing []rail.PixOrder
	// Refused is an order the bank refuses definitely: its Send is a *rail.RefusedError.
	Refused rail.PixOrder
	// Key is a Pix key the bank resolves to its owner; KeyType is its type ("" lets the
	// driver detect it).
	Key     string
	KeyType brcode.KeyType
	// MissingKey is a valid Pix key nobody owns; MissingKeyType is its type.
	MissingKey     string
	MissingKeyType brcode.KeyType
	// NoKeyLookup says the bank cannot look keys up (rail.ErrNoKeyLookup): the suite then
	// checks that every valid key gets that answer and an invalid one is still invalid;
	// Key and MissingKey are still needed (as valid keys).
	NoKeyLookup bool
	// Charge is a charge a rail.Collector registers; the suite issues and removes it. It
	// is needed only when Rail is a rail.Collector.
	Charge rail.Charge
	// Receive, for a rail.Collector, makes the bank receive p as a payer's bank delivers
	// it, at the time p.At the suite chooses. Nil skips the tests of ListReceived.
	Receive func(t *testing.T, p rail.ReceivedPix)
}

// Run runs every conformance test against the driver newHarness makes.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := []struct {
		name      string
		collector bool // a test of rail.Collector: skipped for other rails
		fn        func(*testing.T, Harness)
	}{
		{"SendIsIdempotent", false, testSendIdempotent},
		{"ConcurrentSendsAreOneOrder", false, testConcurrentSends},
		{"SendAndStatusAgree", false, testSendAndStatusAgree},
		{"FinalStatusesStay", false, testFinalStatusesStay},
		{"StatusBeforeSend", false, testStatusBeforeSend},
		{"CanceledContext", false, testCanceled},
		{"ExpiredContext", false, testExpired},
		{"RefusalIsDefinite", false, testRefused},
		{"InvalidOrders", false, testInvalidOrders},
		{"ResolveKey", false, testResolveKey},
		{"IssueChargeIsIdempotent", true, testIssueChargeIdempotent},
		{"RemoveChargeTwice", true, testRemoveChargeTwice},
		{"ListReceivedPagesCoverTheWindow", true, testListReceivedPages},
		{"ListReceivedWhileReceiving", true, testListReceivedWhileReceiving},
		{"ListReceivedEmptyWindow", true, testListReceivedEmpty},
		{"CollectorContextDone", true, testCollectorContextDone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			check(t, h)
			if _, ok := h.Rail.(rail.Collector); tt.collector && !ok {
				t.Skip("the Rail is not a rail.Collector")
			}
			tt.fn(t, h)
		})
	}
}

// check stops the test when the harness lacks what every test needs.
func check(t *testing.T, h Harness) {
	t.Helper()
	switch {
	case h.Rail == nil:
		t.Fatal("railtest: Harness.Rail is nil")
	case len(h.Confirmed) == 0:
		t.Fatal("railtest: Harness.Confirmed is empty")
	case h.Refused.ID == "":
		t.Fatal("railtest: Harness.Refused has no ID")
	case h.Key == "" || h.MissingKey == "":
		t.Fatal("railtest: Harness.Key and Harness.MissingKey are needed")
	}
	if _, ok := h.Rail.(rail.Collector); ok && h.Charge.TxID == "" {
		t.Fatal("railtest: the Rail is a rail.Collector and Harness.Charge has no TxID")
	}
}

var ctx = context.Background()

// settle moves the bank's time on through the harness.
func settle(t *testing.T, h Harness) {
	t.Helper()
	if h.Settle != nil {
		h.Settle(t)
	}
}

func send(t *testing.T, r rail.Rail, o rail.PixOrder) rail.Settlement {
	t.Helper()
	s, err := r.Send(ctx, o)
	is.New(t).NoErr(err) // Send of an order the harness says the bank accepts
	return s
}

func status(t *testing.T, r rail.Rail, o rail.PixOrder) rail.Settlement {
	t.Helper()
	s, err := r.Status(ctx, o)
	is.New(t).NoErr(err) // Status of an order sent before
	return s
}

// outcome is what a final settlement says for good: two answers about a settled order
// agree on all of it.
type outcome struct {
	Status     rail.SettlementStatus
	EndToEndID string
	Reason     string
	BankRef    string
	At         time.Time
}

func outcomeOf(s rail.Settlement) outcome {
	return outcome{Status: s.Status, EndToEndID: s.EndToEndID, Reason: s.Reason, BankRef: s.BankRef, At: s.At.UTC()}
}

// agrees checks that later, an answer about the same order given after earlier, says
// the same or has moved on from Pending: a final status never changes, one order has one
// bank reference, and a Pix that is out keeps its endToEndId.
func agrees(t *testing.T, earlier, later rail.Settlement) {
	t.Helper()
	is := is.New(t)
	is.True(earlier.Status == rail.SettlementPending || earlier.Status.Final()) // a known status
	is.True(later.Status == rail.SettlementPending || later.Status.Final())     // a known status
	if earlier.Status.Final() {
		is.Equal(outcomeOf(later), outcomeOf(earlier)) // a final status never changes
		return
	}
	is.Equal(later.BankRef, earlier.BankRef) // one order, one bank reference
	if earlier.EndToEndID != "" {
		is.Equal(later.EndToEndID, earlier.EndToEndID) // a Pix that is out keeps its endToEndId
	}
}

// settled sends every order, settles them and returns their final settlements, checked
// against Status.
func settled(t *testing.T, h Harness, orders []rail.PixOrder) []rail.Settlement {
	t.Helper()
	for _, o := range orders {
		send(t, h.Rail, o)
	}
	settle(t, h)
	out := make([]rail.Settlement, len(orders))
	for i, o := range orders {
		out[i] = status(t, h.Rail, o)
		is.New(t).True(out[i].Status.Final()) // Settle settles every order sent
	}
	return out
}

func testSendIdempotent(t *testing.T, h Harness) {
	is := is.New(t)
	first := make([]rail.Settlement, len(h.Confirmed))
	for i, o := range h.Confirmed {
		first[i] = send(t, h.Rail, o)
		again := send(t, h.Rail, o)
		agrees(t, first[i], again) // the same order again reports where the first stands
	}
	settle(t, h)
	e2e, refs := map[string]string{}, map[string]string{}
	for i, o := range h.Confirmed {
		s := send(t, h.Rail, o)
		agrees(t, first[i], s)
		is.Equal(s.Status, rail.SettlementConfirmed) // the bank confirms the harness's order
		is.True(s.EndToEndID != "")                  // a confirmed Pix has an endToEndId
		is.Equal(s.Reason, "")                       // and no failure reason
		again := send(t, h.Rail, o)
		is.Equal(outcomeOf(again), outcomeOf(s)) // one transfer: the same Pix however often it is sent
		is.Equal(e2e[s.EndToEndID], "")          // each order its own Pix: no endToEndId shared with another order
		e2e[s.EndToEndID] = o.ID
		if s.BankRef != "" {
			is.Equal(refs[s.BankRef], "") // each order its own bank reference
			refs[s.BankRef] = o.ID
		}
	}
}

func testConcurrentSends(t *testing.T, h Harness) {
	is := is.New(t)
	o := h.Confirmed[0]
	const n = 8
	answers := make([]rail.Settlement, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i], errs[i] = h.Rail.Send(ctx, o) })
	}
	wg.Wait()
	for i := range n {
		is.NoErr(errs[i]) // every concurrent Send of one order is answered
	}
	settle(t, h)
	final := status(t, h.Rail, o)
	is.Equal(final.Status, rail.SettlementConfirmed) // one order, confirmed
	for i := range n {
		agrees(t, answers[i], final) // every answer was about the one transfer
	}
}

func testSendAndStatusAgree(t *testing.T, h Harness) {
	is := is.New(t)
	orders := append(append([]rail.PixOrder{}, h.Confirmed...), h.Failing...)
	sent := make([]rail.Settlement, len(orders))
	for i, o := range orders {
		sent[i] = send(t, h.Rail, o)
		agrees(t, sent[i], status(t, h.Rail, o)) // Status right after Send says what Send said
	}
	settle(t, h)
	for i, o := range orders {
		st := status(t, h.Rail, o)
		agrees(t, sent[i], st)
		is.True(st.Status.Final()) // settled once the bank's time has moved on
		s := send(t, h.Rail, o)
		is.Equal(outcomeOf(s), outcomeOf(st)) // a resend after settling reports the final outcome
		if i < len(h.Confirmed) {
			is.Equal(st.Status, rail.SettlementConfirmed) // the harness's confirmed order
			is.True(st.EndToEndID != "")                  // with its Pix's endToEndId
			is.Equal(st.Reason, "")                       // and no failure reason
		} else {
			is.Equal(st.Status, rail.SettlementFailed) // the harness's failing order
			is.True(st.Reason != "")                   // says why it failed
		}
	}
}

func testFinalStatusesStay(t *testing.T, h Harness) {
	is := is.New(t)
	orders := append(append([]rail.PixOrder{}, h.Confirmed...), h.Failing...)
	final := settled(t, h, orders)
	for range 2 {
		settle(t, h)
		for i, o := range orders {
			is.Equal(outcomeOf(status(t, h.Rail, o)), outcomeOf(final[i])) // Status keeps the final outcome
			is.Equal(outcomeOf(send(t, h.Rail, o)), outcomeOf(final[i]))   // and so does a resend
		}
	}
}

func testStatusBeforeSend(t *testing.T, h Harness) {
	is := is.New(t)
	o := h.Confirmed[0]
	before, err := h.Rail.Status(ctx, o)
	_, refused := rail.AsRefused(err)
	is.True(!refused) // Status never refuses: only Send does
	if err != nil {
		is.True(errors.Is(err, rail.ErrUnknownOrder)) // an order never sent is unknown to the bank
	}
	s := send(t, h.Rail, o)
	if err == nil {
		agrees(t, before, s) // a bank that knows outcomes from the order alone told the truth early
	}
	settle(t, h)
	is.Equal(status(t, h.Rail, o).Status, rail.SettlementConfirmed) // the order, sent after all, settles
}

// doneContext is a context that has ended with err (context.Canceled or
// context.DeadlineExceeded).
func doneContext(t *testing.T, err error) context.Context {
	t.Helper()
	if errors.Is(err, context.Canceled) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		return c
	}
	c, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
	t.Cleanup(cancel)
	return c
}

// contextDone checks that every Rail call in a context that ended with want says so, and
// that the order the call was about can still be sent.
func contextDone(t *testing.T, h Harness, want error) {
	is := is.New(t)
	done := doneContext(t, want)
	o := h.Confirmed[0]

	_, err := h.Rail.Send(done, o)
	is.True(errors.Is(err, want)) // Send reports the ended context
	_, refused := rail.AsRefused(err)
	is.True(!refused) // an ended context is an unknown outcome, never a refusal
	_, err = h.Rail.Status(done, o)
	is.True(errors.Is(err, want)) // Status reports the ended context
	_, err = h.Rail.ResolveKey(done, h.Key, h.KeyType)
	is.True(errors.Is(err, want)) // ResolveKey reports the ended context
	_, err = h.Rail.Send(done, h.Refused)
	is.True(errors.Is(err, want)) // the context ended before the bank could refuse
	_, refused = rail.AsRefused(err)
	is.True(!refused) // so it is no refusal

	send(t, h.Rail, o) // the order the ended context was about can be sent
	settle(t, h)
	is.Equal(status(t, h.Rail, o).Status, rail.SettlementConfirmed) // and settles as any other
}

func testCanceled(t *testing.T, h Harness) { contextDone(t, h, context.Canceled) }

func testExpired(t *testing.T, h Harness) { contextDone(t, h, context.DeadlineExceeded) }

func testRefused(t *testing.T, h Harness) {
	is := is.New(t)
	o := h.Refused
	_, err := h.Rail.Send(ctx, o)
	refusal, ok := rail.AsRefused(err)
	is.True(ok) // the harness's refused order is a *rail.RefusedError
	if !ok {
		t.Fatalf("Send of the refused order: %v", err)
	}
	is.True(refusal.Reason != "") // a refusal says why
	for i := range 2 {
		if i > 0 {
			settle(t, h) // moving the bank's time on changes none of it
		}
		_, err = h.Rail.Send(ctx, o)
		again, ok := rail.AsRefused(err)
		is.True(ok)                            // sending it again is refused again
		is.Equal(again.Reason, refusal.Reason) // for the same reason
		st, err := h.Rail.Status(ctx, o)
		if errors.Is(err, rail.ErrUnknownOrder) {
			continue // nothing was sent, so the bank may have no record of it
		}
		is.NoErr(err)                              // Status of a refused order
		is.Equal(st.Status, rail.SettlementFailed) // failed, never confirmed
		is.Equal(st.Reason, refusal.Reason)        // for the reason of the refusal
		is.Equal(st.EndToEndID, "")                // no Pix went out
	}
}

func testInvalidOrders(t *testing.T, h Harness) {
	base := h.Confirmed[0]
	cases := []struct {
		name  string
		edit  func(*rail.PixOrder)
		field string
	}{
		{"NoID", func(o *rail.PixOrder) { o.ID = "" }, "id"},
		{"ZeroValue", func(o *rail.PixOrder) { o.Value = 0 }, "value"},
		{"NegativeValue", func(o *rail.PixOrder) { o.Value = -100 }, "value"},
		{"NoSentAt", func(o *rail.PixOrder) { o.SentAt = time.Time{} }, "sentAt"},
		{"UnknownKind", func(o *rail.PixOrder) { o.Kind = "GIFT" }, "kind"},
		{"PaymentWithoutDestination", func(o *rail.PixOrder) {
			o.Kind, o.Key, o.KeyType, o.Account = rail.OrderPayment, "", "", nil
		}, "key"},
		{"RefundWithoutEndToEndID", func(o *rail.PixOrder) { o.Kind, o.EndToEndID = rail.OrderRefund, "" }, "endToEndId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			o := base
			o.ID = base.ID + "-invalid"
			tc.edit(&o)
			is.Equal(invalidField(rail.CheckOrder(o)), tc.field) // the case is one rail.CheckOrder names

			_, err := h.Rail.Send(ctx, o)
			is.Equal(invalidField(err), tc.field) // Send: a *rail.InvalidError on the field
			_, err = h.Rail.Status(ctx, o)
			is.Equal(invalidField(err), tc.field) // Status checks the same
		})
	}
}

// invalidField is the Field of the *rail.InvalidError err carries, or a description of
// err when it carries none.
func invalidField(err error) string {
	var inv *rail.InvalidError
	if errors.As(err, &inv) {
		return inv.Field
	}
	return fmt.Sprintf("not a *rail.InvalidError: %v", err)
}

func testResolveKey(t *testing.T, h Harness) {
	is := is.New(t)
	if h.NoKeyLookup {
		_, err := h.Rail.ResolveKey(ctx, h.Key, h.KeyType)
		is.True(errors.Is(err, rail.ErrNoKeyLookup)) // a valid key: the bank cannot say whose
		_, err = h.Rail.ResolveKey(ctx, h.MissingKey, h.MissingKeyType)
		is.True(errors.Is(err, rail.ErrNoKeyLookup)) // nor of another
		_, err = h.Rail.ResolveKey(ctx, "not a key", brcode.KeyCPF)
		is.Equal(invalidField(err), "key") // a key that is no key of its type is invalid
		return
	}
	owner, err := h.Rail.ResolveKey(ctx, h.Key, h.KeyType)
	is.NoErr(err)                                                          // the harness's key has an owner
	is.True(owner.Name != "")                                              // with a name
	is.True(brcode.ValidCPF(owner.TaxID) || brcode.ValidCNPJ(owner.TaxID)) // and a bare CPF or CNPJ
	again, err := h.Rail.ResolveKey(ctx, h.Key, h.KeyType)
	is.NoErr(err)
	is.Equal(again, owner) // the same key, the same owner

	_, err = h.Rail.ResolveKey(ctx, h.MissingKey, h.MissingKeyType)
	is.True(errors.Is(err, rail.ErrKeyNotFound)) // a key nobody owns

	_, err = h.Rail.ResolveKey(ctx, "not a key", brcode.KeyCPF)
	is.Equal(invalidField(err), "key") // a key that is no key of its type is invalid
}

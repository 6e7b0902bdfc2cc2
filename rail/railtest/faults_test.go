package railtest_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/railtest"
	"github.com/pixfoundry/payments/rail/sandbox"
)

var ctx = context.Background()

// t0 is where every test clock starts.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// accepted reports whether bank got o: the sandbox's Status of an order it was never sent
// is rail.ErrUnknownOrder.
func accepted(t *testing.T, bank *sandbox.Rail, o rail.PixOrder) bool {
	t.Helper()
	_, err := bank.Status(ctx, o)
	if errors.Is(err, rail.ErrUnknownOrder) {
		return false
	}
	is.New(t).NoErr(err) // Status of an order the bank may have
	return true
}

const delay = 5 * time.Second

// harness is the conformance harness of bank, a FaultRail over the sandbox inner, on clock.
func harness(bank rail.Rail, inner *sandbox.Rail, clock *payments.ManualClock) railtest.Harness {
	return railtest.Harness{
		Rail:   bank,
		Settle: func(t *testing.T) { clock.Advance(delay) },
		Confirmed: []rail.PixOrder{
			{ID: "pay", Kind: rail.OrderPayment, Key: "ana@example.com", KeyType: brcode.KeyEmail, Value: 1500, SentAt: t0},
			{ID: "refund", Kind: rail.OrderRefund, EndToEndID: "E12345678202611221200abcdefghijk", Value: 500, SentAt: t0},
		},
		Failing: []rail.PixOrder{{ID: "bank-error", Kind: rail.OrderPayment, Key: sandbox.KeyBankError, Value: 100, SentAt: t0}},
		Refused: rail.PixOrder{ID: "refused", Kind: rail.OrderPayment, Key: sandbox.KeyNotFound, Value: 100, SentAt: t0},
		Key:     "ana@example.com", KeyType: brcode.KeyEmail,
		MissingKey: sandbox.KeyNotFound, MissingKeyType: brcode.KeyEmail,
		Charge: rail.Charge{TxID: "railtest1", Key: "ana@example.com", Value: 1000, Expires: t0.Add(time.Hour),
			MerchantName: "Loja", MerchantCity: "Sao Paulo"},
		Receive: func(t *testing.T, p rail.ReceivedPix) {
			is.New(t).NoErr(inner.Receive(p)) // the bank receives the Pix
		},
	}
}

// The conformance suite passes through a FaultRail that injects nothing, over the sandbox
// and over a Rail that is no Collector (the Collector's tests are then skipped).
func TestFaultRail_Conformance(t *testing.T) {
	t.Run("Sandbox", func(t *testing.T) {
		railtest.Run(t, func(t *testing.T) railtest.Harness {
			clock := payments.NewManualClock(t0)
			bank := sandbox.New(clock, delay)
			return harness(railtest.Faults(bank, 1).Rail(), bank, clock)
		})
	})
	t.Run("PlainRail", func(t *testing.T) {
		railtest.Run(t, func(t *testing.T) railtest.Harness {
			clock := payments.NewManualClock(t0)
			bank := sandbox.New(clock, delay)
			h := harness(railtest.Faults(struct{ rail.Rail }{bank}, 1).Rail(), bank, clock)
			h.Charge, h.Receive = rail.Charge{}, nil
			return h
		})
	})
}

// faultsOver returns a FaultRail over a sandbox on a clock at t0, with no delay.
func faultsOver(seed uint64) (*railtest.FaultRail, *sandbox.Rail) {
	bank := sandbox.New(payments.NewManualClock(t0), 0)
	return railtest.Faults(bank, seed), bank
}

func order(id string) rail.PixOrder {
	return rail.PixOrder{ID: id, Kind: rail.OrderPayment, Key: "ana@example.com", Value: 1500, SentAt: t0}
}

// injected checks that err is a fault the FaultRail injected, and no refusal.
func injected(t *testing.T, err error) {
	t.Helper()
	is := is.New(t)
	is.True(errors.Is(err, railtest.ErrInjected)) // the injected fault
	_, refused := rail.AsRefused(err)
	is.True(!refused) // an unknown outcome, never a refusal
}

func TestFaultRail_Pass(t *testing.T) {
	is := is.New(t)
	f, bank := faultsOver(1)
	r := f.Rail()
	s, err := r.Send(ctx, order("o1"))
	is.NoErr(err)
	want, err := bank.Status(ctx, order("o1"))
	is.NoErr(err)
	is.Equal(s, want)                             // the inner rail's answer
	is.Equal(f.Forwarded(railtest.MethodSend), 1) // forwarded once
	is.Equal(f.Injected(railtest.MethodSend), 0)  // with nothing injected
	o := order("refused")
	o.Key = sandbox.KeyNotFound
	_, err = r.Send(ctx, o)
	_, refused := rail.AsRefused(err)
	is.True(refused) // the inner rail's refusal comes through as it is

	_, ok := r.(rail.Collector)
	is.True(ok)                                                   // over a Collector, a Collector
	is.True(rail.IsSandbox(r))                                    // over a sandbox, a sandbox
	is.Equal(f.PollInterval(), rail.DefaultPollInterval)          // over no Poller, the default interval
	plain := railtest.Faults(struct{ rail.Rail }{bank}, 1).Rail() // a Rail that is nothing more
	_, ok = plain.(rail.Collector)
	is.True(!ok)                    // over no Collector, no Collector
	is.True(!rail.IsSandbox(plain)) // over no Sandboxed, no sandbox
}

func TestFaultRail_Fail(t *testing.T) {
	is := is.New(t)
	f, bank := faultsOver(1)
	r := f.Rail()
	f.Next(railtest.MethodSend, railtest.Fail, 2)
	for range 2 {
		_, err := r.Send(ctx, order("o1"))
		injected(t, err)
	}
	is.Equal(f.Forwarded(railtest.MethodSend), 0) // nothing reached the bank
	is.Equal(f.Injected(railtest.MethodSend), 2)  // two faults
	is.True(!accepted(t, bank, order("o1")))      // the bank never got the order
	_, err := r.Status(ctx, order("o1"))
	is.True(errors.Is(err, rail.ErrUnknownOrder)) // and says so: the order may be sent again

	s, err := r.Send(ctx, order("o1"))
	is.NoErr(err)                                   // the schedule is spent: the third Send passes
	is.Equal(s.Status, rail.SettlementConfirmed)    // and the order goes through
	is.True(accepted(t, bank, order("o1")))         // the bank got it
	is.Equal(f.Forwarded(railtest.MethodSend), 1)   // one call forwarded
	is.Equal(f.Forwarded(railtest.MethodStatus), 1) // methods are counted apart
}

func TestFaultRail_Timeout(t *testing.T) {
	t.Run("BlocksUntilCanceled", func(t *testing.T) {
		is := is.New(t)
		f, bank := faultsOver(1)
		f.Next(railtest.MethodSend, railtest.Timeout, 1)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := f.Rail().Send(cctx, order("o1"))
			done <- err
		}()
		for f.Injected(railtest.MethodSend) == 0 {
			runtime.Gosched() // until the call has taken its fault
		}
		select {
		case err := <-done:
			t.Fatalf("Send returned %v before its context was done", err)
		default: // still waiting for an answer that never comes
		}
		cancel()
		err := <-done
		is.True(errors.Is(err, context.Canceled)) // the context's error
		_, refused := rail.AsRefused(err)
		is.True(!refused)                             // no refusal
		is.Equal(f.Forwarded(railtest.MethodSend), 0) // nothing forwarded
		is.True(!accepted(t, bank, order("o1")))      // the bank never got the order
	})
	t.Run("Deadline", func(t *testing.T) {
		is := is.New(t)
		f, _ := faultsOver(1)
		f.Next(railtest.MethodResolveKey, railtest.Timeout, 1)
		dctx, cancel := context.WithDeadline(ctx, t0) // long past
		defer cancel()
		_, err := f.Rail().ResolveKey(dctx, "ana@example.com", brcode.KeyEmail)
		is.True(errors.Is(err, context.DeadlineExceeded))   // the context's error
		is.Equal(f.Forwarded(railtest.MethodResolveKey), 0) // nothing forwarded
	})
}

func TestFaultRail_LoseAnswer(t *testing.T) {
	is := is.New(t)
	clock := payments.NewManualClock(t0)
	bank := sandbox.New(clock, delay)
	f := railtest.Faults(bank, 1)
	r := f.Rail()
	f.Next(railtest.MethodSend, railtest.LoseAnswer, 2)

	_, err := r.Send(ctx, order("o1"))
	injected(t, err)
	is.Equal(f.Forwarded(railtest.MethodSend), 1) // the call reached the bank
	is.True(accepted(t, bank, order("o1")))       // which took the order
	st, err := r.Status(ctx, order("o1"))
	is.NoErr(err)                               // and knows it
	is.Equal(st.Status, rail.SettlementPending) // on its way
	is.True(st.EndToEndID != "")                // with its Pix's endToEndId

	refused := order("refused")
	refused.Key = sandbox.KeyNotFound
	_, err = r.Send(ctx, refused)
	injected(t, err) // a lost refusal is an unknown outcome too

	clock.Advance(delay)
	s, err := r.Send(ctx, order("o1"))
	is.NoErr(err)                                 // the resend the Service makes
	is.Equal(s.Status, rail.SettlementConfirmed)  // learns the outcome
	is.Equal(s.EndToEndID, st.EndToEndID)         // of the one Pix
	is.Equal(f.Forwarded(railtest.MethodSend), 3) // every call reached the bank
	is.Equal(f.Injected(railtest.MethodSend), 2)  // two answers were lost
}

func TestFaultRail_Collector(t *testing.T) {
	is := is.New(t)
	clock := payments.NewManualClock(t0)
	bank := sandbox.New(clock, 0)
	f := railtest.Faults(bank, 1)
	c := f.Rail().(rail.Collector)
	charge := rail.Charge{TxID: "tx1", Key: "ana@example.com", Value: 1000, Expires: t0.Add(time.Hour), MerchantName: "Loja", MerchantCity: "Sao Paulo"}

	f.Next(railtest.MethodIssueCharge, railtest.Fail, 1)
	_, err := c.IssueCharge(ctx, charge)
	injected(t, err)
	err = bank.RemoveCharge(ctx, "tx1")
	is.True(errors.Is(err, rail.ErrUnknownCharge)) // a failed IssueCharge issued nothing

	f.Next(railtest.MethodIssueCharge, railtest.LoseAnswer, 1)
	_, err = c.IssueCharge(ctx, charge)
	injected(t, err)
	f.Next(railtest.MethodRemoveCharge, railtest.Fail, 1)
	injected(t, c.RemoveCharge(ctx, "tx1"))
	is.NoErr(c.RemoveCharge(ctx, "tx1")) // the lost IssueCharge issued it, the failed RemoveCharge kept it

	is.NoErr(bank.Receive(rail.ReceivedPix{EndToEndID: "E1", Value: 100, At: t0}))
	q := rail.ReceivedQuery{From: t0, To: t0.Add(time.Hour)}
	f.Next(railtest.MethodListReceived, railtest.Timeout, 1)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.ListReceived(cctx, q)
	is.True(errors.Is(err, context.Canceled)) // a timed-out listing ends with its context
	page, err := c.ListReceived(ctx, q)
	is.NoErr(err)
	is.Equal(len(page.Pix), 1) // the next passes

	is.Equal(f.Forwarded(railtest.MethodIssueCharge), 1)  // the lost one
	is.Equal(f.Forwarded(railtest.MethodRemoveCharge), 1) // the one that passed
	is.Equal(f.Forwarded(railtest.MethodListReceived), 1) // the one that passed
	is.Equal(f.Injected(railtest.MethodListReceived), 1)  // the timeout
}

// outcomes sends n orders through f, one at a time, and says what became of each:
// "ok", "Fail" (not forwarded) or "LoseAnswer" (forwarded, answer lost).
func outcomes(t *testing.T, f *railtest.FaultRail, n int) []string {
	t.Helper()
	is := is.New(t)
	out := make([]string, n)
	for i := range n {
		before := f.Forwarded(railtest.MethodSend)
		_, err := f.Rail().Send(ctx, order("o"))
		switch {
		case err == nil:
			out[i] = "ok"
		case f.Forwarded(railtest.MethodSend) == before:
			injected(t, err)
			out[i] = railtest.Fail.String()
		default:
			injected(t, err)
			out[i] = railtest.LoseAnswer.String()
		}
	}
	is.Equal(f.Injected(railtest.MethodSend), n-count(out, "ok")) // every error was injected
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func TestFaultRail_Random(t *testing.T) {
	is := is.New(t)
	seeded := func(seed uint64) *railtest.FaultRail {
		f, _ := faultsOver(seed)
		f.SetRate(railtest.MethodSend, railtest.Fail, 0.2)
		f.SetRate(railtest.MethodSend, railtest.LoseAnswer, 0.1)
		return f
	}
	const n = 2000
	got := outcomes(t, seeded(7), n)
	fails, lost := count(got, "Fail"), count(got, "LoseAnswer")
	is.True(fails > n*15/100 && fails < n*25/100)   // about the Fail rate
	is.True(lost > n*5/100 && lost < n*15/100)      // about the LoseAnswer rate
	is.Equal(outcomes(t, seeded(7), n), got)        // the same seed, the same faults
	is.True(!equal(outcomes(t, seeded(8), n), got)) // another seed, other faults

	f := seeded(7)
	f.Clear()
	is.Equal(count(outcomes(t, f, 100), "ok"), 100) // after Clear every call passes
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFaultRail_ScheduleBeforeRate(t *testing.T) {
	is := is.New(t)
	f, _ := faultsOver(1)
	f.SetRate(railtest.MethodSend, railtest.Fail, 1)
	f.Next(railtest.MethodSend, railtest.Pass, 2)
	f.Next(railtest.MethodSend, railtest.LoseAnswer, 1)
	is.Equal(outcomes(t, f, 4), []string{"ok", "ok", "LoseAnswer", "Fail"}) // the schedule first, then the rate
}

func TestFaultRail_SetRateOverOne(t *testing.T) {
	is := is.New(t)
	f, _ := faultsOver(1)
	f.SetRate(railtest.MethodSend, railtest.Fail, 0.6)
	defer func() { is.True(recover() != nil) }() // rates of one method adding up to more than 1
	f.SetRate(railtest.MethodSend, railtest.Timeout, 0.6)
}

func TestFaultRail_Concurrent(t *testing.T) {
	is := is.New(t)
	f, _ := faultsOver(1)
	f.Next(railtest.MethodSend, railtest.Fail, 50)
	f.SetRate(railtest.MethodStatus, railtest.LoseAnswer, 0.5)
	const n = 100
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = f.Rail().Send(ctx, order("o"))
			f.Rail().Status(ctx, order("o"))
		})
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			injected(t, err)
			failed++
		}
	}
	is.Equal(failed, 50)                            // exactly the scheduled faults
	is.Equal(f.Forwarded(railtest.MethodSend), 50)  // and the rest forwarded
	is.Equal(f.Injected(railtest.MethodSend), 50)   // counted once each
	is.Equal(f.Forwarded(railtest.MethodStatus), n) // lost answers are forwarded
}

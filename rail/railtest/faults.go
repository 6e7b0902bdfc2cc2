package railtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// ErrInjected is the error of a call a FaultRail fails or whose answer it loses. It is
// never a *rail.RefusedError: to the caller the outcome is unknown, as after a timeout or
// a lost connection.
var ErrInjected = errors.New("railtest: injected rail fault")

// Method names a call of a Rail or Collector that a FaultRail can fault.
type Method string

// The calls a FaultRail can fault.
const (
	MethodSend         Method = "Send"
	MethodStatus       Method = "Status"
	MethodResolveKey   Method = "ResolveKey"
	MethodIssueCharge  Method = "IssueCharge"
	MethodRemoveCharge Method = "RemoveCharge"
	MethodListReceived Method = "ListReceived"
)

// Fault is what a FaultRail does with one call.
type Fault int

// Faults a FaultRail injects.
const (
	// Pass forwards the call and returns its answer: no fault.
	Pass Fault = iota
	// Fail returns ErrInjected without forwarding the call: the bank does nothing.
	Fail
	// Timeout forwards nothing and blocks until the call's context is done, then returns
	// the context's error, as a bank that never answers does.
	Timeout
	// LoseAnswer forwards the call and returns ErrInjected instead of its answer: the bank
	// acted and the caller cannot tell.
	LoseAnswer
)

func (k Fault) String() string {
	switch k {
	case Pass:
		return "Pass"
	case Fail:
		return "Fail"
	case Timeout:
		return "Timeout"
	case LoseAnswer:
		return "LoseAnswer"
	}
	return fmt.Sprintf("Fault(%d)", int(k))
}

// FaultRail is a rail.Rail for tests that fails on purpose around an inner Rail. Each call
// takes the next fault scheduled for its method (Next); with none scheduled, a random
// draw from the rates set for the method (SetRate) decides, from the seed the FaultRail
// was made with; with no rates, the call passes. It counts the calls it forwards and the
// faults it injects, per method. It is safe for concurrent use.
//
// Hand code under test Rail(), not the FaultRail: when the inner rail is a
// rail.Collector, Rail() is one too, its calls faulted in the same way. A FaultRail is a
// rail.Sandboxed and a rail.Poller that answer as the inner rail does.
type FaultRail struct {
	inner rail.Rail
	outer rail.Rail // the FaultRail, or a faultCollector over it

	mu        sync.Mutex
	rng       *rand.Rand
	plan      map[Method][]Fault
	rates     map[Method][LoseAnswer + 1]float64
	forwarded map[Method]int
	injected  map[Method]int
}

// Faults wraps inner in a FaultRail whose random faults are drawn from seed. It injects
// nothing until told to (Next, SetRate).
func Faults(inner rail.Rail, seed uint64) *FaultRail {
	f := &FaultRail{
		inner:     inner,
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		plan:      map[Method][]Fault{},
		rates:     map[Method][LoseAnswer + 1]float64{},
		forwarded: map[Method]int{},
		injected:  map[Method]int{},
	}
	f.outer = f
	if c, ok := inner.(rail.Collector); ok {
		f.outer = &faultCollector{FaultRail: f, inner: c}
	}
	return f
}

// Rail returns the Rail to hand to code under test: the FaultRail itself or, when the
// inner rail is a rail.Collector, the FaultRail with the Collector's methods.
func (f *FaultRail) Rail() rail.Rail { return f.outer }

// Next schedules k for the next n calls of m, after the faults already scheduled for m.
// Scheduled faults come before random ones; a scheduled Pass lets a call through.
func (f *FaultRail) Next(m Method, k Fault, n int) {
	if k < Pass || k > LoseAnswer {
		panic("railtest: unknown fault " + k.String())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.plan[m] = append(f.plan[m], k)
	}
}

// SetRate makes each call of m with no fault scheduled get k with probability rate
// (0 stops it). The rates of one method's faults add up to at most 1.
func (f *FaultRail) SetRate(m Method, k Fault, rate float64) {
	if k <= Pass || k > LoseAnswer {
		panic("railtest: SetRate of " + k.String())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.rates[m]
	r[k] = rate
	sum := 0.0
	for _, x := range r {
		if x < 0 {
			panic("railtest: negative fault rate")
		}
		sum += x
	}
	if sum > 1 {
		panic(fmt.Sprintf("railtest: the fault rates of %s add up to %v, more than 1", m, sum))
	}
	f.rates[m] = r
}

// Clear drops every scheduled fault and rate: from then on every call passes. The
// counters stay.
func (f *FaultRail) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.plan)
	clear(f.rates)
}

// Forwarded reports how many calls of m reached the inner rail: those that passed and
// those whose answer was lost.
func (f *FaultRail) Forwarded(m Method) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forwarded[m]
}

// Injected reports how many calls of m got a fault (Fail, Timeout or LoseAnswer).
func (f *FaultRail) Injected(m Method) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[m]
}

// decide takes the fault of the next call of m and counts it.
func (f *FaultRail) decide(m Method) Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := Pass
	if plan := f.plan[m]; len(plan) > 0 {
		k, f.plan[m] = plan[0], plan[1:]
	} else if rates, ok := f.rates[m]; ok {
		u, acc := f.rng.Float64(), 0.0
		for fault := Fail; fault <= LoseAnswer; fault++ {
			acc += rates[fault]
			if u < acc {
				k = fault
				break
			}
		}
	}
	if k != Pass {
		f.injected[m]++
	}
	if k == Pass || k == LoseAnswer {
		f.forwarded[m]++
	}
	return k
}

// call runs fn, the call m of the inner rail, with the fault decide picks.
func call[T any](ctx context.Context, f *FaultRail, m Method, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	switch k := f.decide(m); k {
	case Fail:
		return zero, fmt.Errorf("railtest: %s failed before reaching the bank: %w", m, ErrInjected)
	case Timeout:
		<-ctx.Done()
		return zero, ctx.Err()
	case LoseAnswer:
		fn(ctx)
		return zero, fmt.Errorf("railtest: %s reached the bank and its answer was lost: %w", m, ErrInjected)
	}
	return fn(ctx)
}

// Send sends o through the inner rail, unless a fault says otherwise.
func (f *FaultRail) Send(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	return call(ctx, f, MethodSend, func(ctx context.Context) (rail.Settlement, error) { return f.inner.Send(ctx, o) })
}

// Status asks the inner rail about o, unless a fault says otherwise.
func (f *FaultRail) Status(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	return call(ctx, f, MethodStatus, func(ctx context.Context) (rail.Settlement, error) { return f.inner.Status(ctx, o) })
}

// ResolveKey asks the inner rail who owns key, unless a fault says otherwise.
func (f *FaultRail) ResolveKey(ctx context.Context, key string, keyType brcode.KeyType) (rail.KeyOwner, error) {
	return call(ctx, f, MethodResolveKey, func(ctx context.Context) (rail.KeyOwner, error) {
		return f.inner.ResolveKey(ctx, key, keyType)
	})
}

// Sandbox reports whether the inner rail's money is make-believe.
func (f *FaultRail) Sandbox() bool { return rail.IsSandbox(f.inner) }

// PollInterval is the inner rail's, or rail.DefaultPollInterval when it is no
// rail.Poller.
func (f *FaultRail) PollInterval() time.Duration {
	if p, ok := f.inner.(rail.Poller); ok {
		return p.PollInterval()
	}
	return rail.DefaultPollInterval
}

// faultCollector is a FaultRail over a rail.Collector, with the Collector's methods
// faulted as the Rail's are.
type faultCollector struct {
	*FaultRail
	inner rail.Collector
}

// IssueCharge registers c with the inner rail, unless a fault says otherwise.
func (f *faultCollector) IssueCharge(ctx context.Context, c rail.Charge) (rail.IssuedCharge, error) {
	return call(ctx, f.FaultRail, MethodIssueCharge, func(ctx context.Context) (rail.IssuedCharge, error) {
		return f.inner.IssueCharge(ctx, c)
	})
}

// RemoveCharge removes the charge txid from the inner rail, unless a fault says
// otherwise.
func (f *faultCollector) RemoveCharge(ctx context.Context, txid string) error {
	_, err := call(ctx, f.FaultRail, MethodRemoveCharge, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, f.inner.RemoveCharge(ctx, txid)
	})
	return err
}

// ListReceived lists the inner rail's received Pix, unless a fault says otherwise.
func (f *faultCollector) ListReceived(ctx context.Context, q rail.ReceivedQuery) (rail.ReceivedPage, error) {
	return call(ctx, f.FaultRail, MethodListReceived, func(ctx context.Context) (rail.ReceivedPage, error) {
		return f.inner.ListReceived(ctx, q)
	})
}

var (
	_ rail.Rail      = (*FaultRail)(nil)
	_ rail.Sandboxed = (*FaultRail)(nil)
	_ rail.Poller    = (*FaultRail)(nil)
	_ rail.Collector = (*faultCollector)(nil)
)

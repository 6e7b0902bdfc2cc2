package payments

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixfoundry/payments/rail"
)

// The intervals Run works on unless Options say otherwise.
const (
	// DefaultDueInterval is how often Run does the due work (RunDue): Options.DueInterval.
	DefaultDueInterval = 5 * time.Second
	// DefaultWebhookPoll is how often Run's webhook worker looks for retries that fell due
	// when no commit woke it: Options.WebhookPoll.
	DefaultWebhookPoll = time.Second
	// DefaultReconcileInterval is how often Run reconciles with a bank that lists what it
	// received (a rail.Collector): Options.ReconcileInterval.
	DefaultReconcileInterval = time.Minute
)

// reconcileOverlap is how far each of Run's reconciliation windows reaches back before the
// end of the last: a bank may list a Pix a little after its time.
const reconcileOverlap = 5 * time.Minute

// firstReconcileWindow is how far back Run's first reconciliation reaches: what arrived
// while the process was down.
const firstReconcileWindow = 24 * time.Hour

// runner is what Run needs of the Options, and whether a Run is going on.
type runner struct {
	due, poll, reconcile time.Duration // a negative due or reconcile is off
	running              atomic.Bool
}

// newRunner reads Run's intervals from opts, with their defaults.
func newRunner(opts Options) *runner {
	r := &runner{due: opts.DueInterval, poll: opts.WebhookPoll, reconcile: opts.ReconcileInterval}
	if r.due == 0 {
		r.due = DefaultDueInterval
	}
	if r.poll <= 0 {
		r.poll = DefaultWebhookPoll
	}
	if r.reconcile == 0 {
		r.reconcile = DefaultReconcileInterval
	}
	return r
}

// Run does the work a long-lived process does in the background until ctx ends, then
// waits for all of it to stop and returns nil. It is the one loop an embedder runs:
//
//	go svc.Run(ctx) // or in an errgroup; cancel ctx, and wait, before svc.Close
//
// It runs, each on a goroutine of its own:
//   - webhook delivery (ServeWebhooks, looking for due retries every Options.WebhookPoll):
//     an event is sent as soon as the commit that made it wakes the worker. Without a
//     WebhookSender only e-mail webhooks have anything to deliver; Run does not fail for it;
//   - the due work (RunDue), at once and then every Options.DueInterval: expired charges,
//     subscriptions' charges, outgoing orders re-sent or asked about, webhook retries;
//   - reconciliation with the bank (Reconcile), at once and then every
//     Options.ReconcileInterval, when the bank (Options.Rail) lists what it received (a
//     rail.Collector, as the sandbox bank and rail/apipix are): the first window reaches a
//     day back, to find what arrived while the process was down, and each later one from a
//     little before the end of the last, since a bank may list a Pix late. Registering
//     the Service's webhook with a PSP is the bank driver's business and the host's (see
//     examples/server), not Run's.
//
// Failures are logged (Options.Logger) and the next turn tries again; none stops Run.
// Run works for every company of the store, whichever company's Service it is called on.
// A second Run on the same Service (or another company's Service of the same Open) while
// one is going on returns at once with EPRECONDITION: run one per process. Several
// processes sharing a store (PostgreSQL) may each run theirs.
func (s *Service) Run(ctx context.Context) error {
	r := s.core.runner
	if !r.running.CompareAndSwap(false, true) {
		return &Error{Code: EPRECONDITION, Message: "Run is going on already for this Service: one Run per process does all companies' background work"}
	}
	defer r.running.Store(false)
	var wg sync.WaitGroup
	wg.Go(func() { s.ServeWebhooks(ctx, r.poll) })
	if r.due > 0 {
		wg.Go(func() { s.runEvery(ctx, r.due, s.runDueTurn) })
	}
	if _, ok := s.core.rail.(rail.Collector); ok && r.reconcile > 0 {
		var last time.Time // the end of the last window reconciled; zero before the first
		wg.Go(func() { s.runEvery(ctx, r.reconcile, func(ctx context.Context) { last = s.reconcileTurn(ctx, last) }) })
	}
	wg.Wait()
	return nil
}

// runEvery calls turn at once and then every interval until ctx ends.
func (s *Service) runEvery(ctx context.Context, interval time.Duration, turn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		turn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runDueTurn is one of Run's due passes; RunDue logs its own failures.
func (s *Service) runDueTurn(ctx context.Context) {
	if ctx.Err() == nil {
		_ = s.RunDue(ctx)
	}
}

// reconcileTurn reconciles from a little before last (or a day back, when last is zero)
// to now, and returns the new end of the last window reconciled: now when it succeeded,
// last otherwise, so that the next turn covers the window again.
func (s *Service) reconcileTurn(ctx context.Context, last time.Time) time.Time {
	if ctx.Err() != nil {
		return last
	}
	to := s.now()
	from := to.Add(-firstReconcileWindow)
	if !last.IsZero() {
		from = last.Add(-reconcileOverlap)
	}
	res, err := s.Reconcile(ctx, from, to)
	if err != nil {
		if ctx.Err() == nil {
			s.core.log.Error("reconciling with the bank (tried again at the next turn)", "from", from, "to", to, "err", err)
		}
		return last
	}
	if res.Recorded > 0 || res.Unmatched > 0 {
		s.core.log.Warn("reconciliation recorded Pix the bank had not reported", "recorded", res.Recorded, "unmatched", res.Unmatched)
	}
	return to
}

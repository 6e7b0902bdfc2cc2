package payments

import (
	"context"
	"sync"
	"time"
)

// ServeWebhooks delivers webhooks until ctx ends: the worker of a long-running process.
// Each webhook whose queue entry is due is served on a goroutine of its own as soon as it
// is due (a commit that queues an event wakes the worker; poll finds retries that fell
// due), while the others go on: a slow or hanging receiver holds back only its own
// webhook. At most Options.WebhookConcurrency webhooks are served at once, and at most a
// quarter of them (at least one) for any one company, so that one company's receivers
// cannot take every turn. Each webhook gets up to Options.WebhookInFlight of its events at
// once (default DefaultWebhookInFlight; see deliverWebhook), so its deliveries may arrive
// out of outbox order, as with the real API and Standard Webhooks, which promise no order
// either: receivers dedupe by webhook-id. WebhookInFlight 1 keeps each webhook's events in
// order. When ctx ends it waits for the deliveries in flight, which stop unrecorded and are
// sent again later, and returns. Store failures are logged (Options.Logger)
// and the webhook tried again at the next look.
//
// RunWebhooks, by contrast, is one pass that returns when the webhooks it served are done:
// a loop of passes waits at each for the slowest receiver. While ServeWebhooks runs,
// RunDue leaves webhooks to it (it wakes it); AdvanceClock still runs and waits for the
// deliveries due at each step.
func (s *Service) ServeWebhooks(ctx context.Context, poll time.Duration) {
	wc := s.core.webhooks
	wc.mu.Lock()
	wc.serving++
	wc.mu.Unlock()
	defer func() {
		wc.mu.Lock()
		wc.serving--
		wc.mu.Unlock()
	}()
	d := &webhookDispatch{svc: s, slots: make(chan struct{}, wc.concurrency),
		perCompany: max(1, wc.concurrency/4), inFlight: map[string]int{}, freed: make(chan struct{}, 1)}
	defer d.wg.Wait()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		d.dispatch(ctx)
		select {
		case <-ctx.Done():
			return
		case <-wc.wakeups:
		case <-t.C:
		case <-d.freed:
		}
	}
}

// webhookDispatch is the state of one ServeWebhooks worker.
type webhookDispatch struct {
	svc        *Service
	slots      chan struct{} // one per webhook being served
	perCompany int
	freed      chan struct{} // a delivery ended: look again (coalesced)
	wg         sync.WaitGroup

	mu       sync.Mutex
	inFlight map[string]int // webhooks being served, by company
}

// dispatch starts a delivery for every due webhook that no one in this process is
// serving, while there are turns free.
func (d *webhookDispatch) dispatch(ctx context.Context) {
	s, wc := d.svc, d.svc.core.webhooks
	if err := s.fanOut(ctx); err != nil && ctx.Err() == nil {
		s.core.log.Error("webhook fan-out", "err", err) // the entries stay: the next look tries again
	}
	to := sortTime(s.now()) + "~"
	for from := ""; ; {
		page, next, err := s.dueWebhooks(ctx, from, to)
		if err != nil {
			if ctx.Err() == nil {
				s.core.log.Error("listing due webhooks", "err", err)
			}
			return
		}
		for _, e := range byCompanyInTurn(page) {
			if !d.start(ctx, wc, e) {
				return // no turn free: a delivery ending wakes the worker
			}
		}
		if len(page) < webhookQueuePage {
			return
		}
		from = next
	}
}

// start serves the webhook e on a goroutine of its own unless it is being served already
// or its company has its share of turns; it returns false when no turn is free at all.
// Only the worker's loop calls it, so the share it checks cannot grow meanwhile.
func (d *webhookDispatch) start(ctx context.Context, wc *webhookCore, e webhookQueued) bool {
	d.mu.Lock()
	full := d.inFlight[e.Company] >= d.perCompany
	d.mu.Unlock()
	if full {
		return true // the company's share is taken: one of its deliveries ending looks again
	}
	select {
	case d.slots <- struct{}{}:
	default:
		return false
	}
	key := webhookQueueID(e.Company, e.ID)
	done, ok := wc.tryTake(key)
	if !ok {
		<-d.slots
		return true // served already (by a pass of RunWebhooks, say)
	}
	d.mu.Lock()
	d.inFlight[e.Company]++
	d.mu.Unlock()
	d.wg.Go(func() {
		co := &Service{core: d.svc.core, company: e.Company}
		err := co.deliverWebhook(ctx, e.ID)
		if err != nil && err != errNoSender && ctx.Err() == nil {
			d.svc.core.log.Error("webhook delivery", "company", e.Company, "webhook", e.ID, "err", err)
		}
		wc.release(key, done)
		d.ended(e.Company, err == nil) // after a failure, or with nothing sent, the next tick looks again, not at once
	})
	return true
}

// ended gives back the turn of a delivery of company's, and wakes the worker when look.
func (d *webhookDispatch) ended(company string, look bool) {
	d.mu.Lock()
	if d.inFlight[company]--; d.inFlight[company] <= 0 {
		delete(d.inFlight, company)
	}
	d.mu.Unlock()
	<-d.slots
	if !look {
		return
	}
	select {
	case d.freed <- struct{}{}:
	default:
	}
}

// tryTake is take without waiting: ok is false when another pass of this process is
// delivering to the webhook key.
func (w *webhookCore) tryTake(key string) (done chan struct{}, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, busy := w.busy[key]; busy {
		return nil, false
	}
	done = make(chan struct{})
	w.busy[key] = done
	return done, true
}

// served reports whether a ServeWebhooks worker runs in this process.
func (w *webhookCore) served() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.serving > 0
}

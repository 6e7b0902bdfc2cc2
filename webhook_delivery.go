package payments

import (
	"cmp"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/webhook"
)

// webhookCore is the delivery machinery all companies' Services share.
type webhookCore struct {
	sender      WebhookSender
	mailer      Mailer
	attempts    int
	timeout     time.Duration
	concurrency int
	onAttempt   func(WebhookAttempt) // Options.OnWebhookAttempt
	lease       time.Duration        // 0: one process owns the store, no leases

	mu      sync.Mutex
	busy    map[string]chan struct{} // webhooks a pass of this process is delivering to; closed when it is done
	serving int                      // ServeWebhooks workers running
	key     *rsa.PrivateKey
	signer  *webhook.Signer // signs with key; made with it
	wakeups chan struct{}
}

func newWebhookCore(st store.Store, opts Options) *webhookCore {
	w := &webhookCore{sender: opts.WebhookSender, attempts: opts.WebhookAttempts, timeout: opts.WebhookTimeout,
		concurrency: opts.WebhookConcurrency, busy: map[string]chan struct{}{}, wakeups: make(chan struct{}, 1), mailer: opts.Mailer,
		onAttempt: opts.OnWebhookAttempt}
	if w.mailer == nil {
		w.mailer = &MemoryMailer{Logger: opts.Logger}
	}
	if w.attempts <= 0 {
		w.attempts = DefaultWebhookAttempts
	}
	if w.timeout <= 0 {
		w.timeout = DefaultWebhookTimeout
	}
	if w.concurrency <= 0 && opts.IDs != nil {
		w.concurrency = 1 // ids drawn in one order (Options.IDs)
	} else if w.concurrency <= 0 {
		w.concurrency = DefaultWebhookConcurrency
	}
	w.lease = opts.WebhookLease
	if sh, ok := st.(interface{ Shared() bool }); w.lease <= 0 && ok && sh.Shared() {
		w.lease = w.timeout + webhookLeaseMargin
	}
	return w
}

// webhookLeaseMargin is added to the delivery timeout to make the default lease: the time
// a claim and the record of its outcome may take besides the attempt itself.
const webhookLeaseMargin = 30 * time.Second

func (w *webhookCore) wake() {
	select {
	case w.wakeups <- struct{}{}:
	default:
	}
}

// WebhookWakeups receives a value (coalesced) after a commit that queued webhook work: a
// worker loop may call RunWebhooks then instead of waiting for its next tick.
func (s *Service) WebhookWakeups() <-chan struct{} { return s.core.webhooks.wakeups }

// RunWebhooks delivers, once, what is due in every company's webhooks: for each webhook
// whose queue entry is due, its events in order until one fails (then retried later) or
// none is left. Webhooks are served concurrently (Options.WebhookConcurrency), each attempt
// bounded by Options.WebhookTimeout, so a slow receiver holds back only its own webhook.
// RunDue calls it; without a WebhookSender it delivers only e-mail webhooks (the URL ones
// wait, queued, for a Service that has one). It returns the first store error; receivers'
// failures are recorded as attempts, not returned.
//
// A webhook another pass of this process is delivering to (a worker woken by a commit,
// say) is waited for, then served: when RunWebhooks returns, what was due when it started
// has been attempted, so AdvanceClock moves the clock on only after the deliveries due
// before it, stamped with their time.
//
// Several processes may run it on one shared store (Options.WebhookLease): a process
// claims a webhook's next event in a transaction that stores a lease on the webhook and
// moves its queue entry to the lease's end, so the other processes neither list it nor
// claim it until the outcome is recorded (which ends the lease) or the lease runs out.
// A process that dies mid-delivery leaves the lease to run out, and then another process
// delivers the event: at least once, and normally once.
func (s *Service) RunWebhooks(ctx context.Context) error {
	wc := s.core.webhooks
	fanErr := s.fanOut(ctx) // the events committed so far reach their webhooks' queue entries
	to := sortTime(s.now()) + "~"
	from := ""
	sem := make(chan struct{}, wc.concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		first = cmp.Or(first, err)
		mu.Unlock()
	}
	for {
		page, next, err := s.dueWebhooks(ctx, from, to)
		if err != nil {
			fail(err)
			break
		}
		if len(page) == 0 {
			break
		}
		from = next
		for _, e := range byCompanyInTurn(page) {
			key := webhookQueueID(e.Company, e.ID)
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() {
					<-sem
					wg.Done()
				}()
				done, ok := wc.take(ctx, key)
				if !ok {
					return // stopping
				}
				defer wc.release(key, done)
				co := &Service{core: s.core, company: e.Company}
				if err := co.deliverWebhook(ctx, e.ID); err != nil && err != errNoSender {
					s.core.log.Error("webhook delivery", "company", e.Company, "webhook", e.ID, "err", err)
					fail(err)
				}
			}()
		}
	}
	wg.Wait()
	return cmp.Or(fanErr, first)
}

// byCompanyInTurn reorders a page of due webhooks so that the companies take turns: the
// first of each company's, then the second of each, and so on, each company's in their
// order. A company with a hundred webhooks due then delays another's first delivery by
// one turn, not a hundred.
func byCompanyInTurn(page []webhookQueued) []webhookQueued {
	var companies []string
	of := map[string][]webhookQueued{}
	for _, e := range page {
		if _, ok := of[e.Company]; !ok {
			companies = append(companies, e.Company)
		}
		of[e.Company] = append(of[e.Company], e)
	}
	if len(companies) < 2 {
		return page
	}
	out := make([]webhookQueued, 0, len(page))
	for turn := 0; len(out) < len(page); turn++ {
		for _, c := range companies {
			if es := of[c]; turn < len(es) {
				out = append(out, es[turn])
			}
		}
	}
	return out
}

// dueWebhooks is a page of the webhook queue's entries due from from (a sort key; "" for
// the start) to to, and the from of the page after it.
func (s *Service) dueWebhooks(ctx context.Context, from, to string) (page []webhookQueued, next string, err error) {
	err = s.view(ctx, func(t *txn) error {
		var err error
		page, next, err = keysetPageOf[webhookQueued](t, collWebhookQueue, systemSpace,
			store.Query{Index: indexDue, From: from, To: to, Limit: webhookQueuePage, NoTotal: true})
		return err
	})
	return page, next, err
}

// take marks the webhook key as delivered to by the caller, after waiting for another
// pass of this process that is delivering to it, if any; ok is false when ctx ended first.
// A waiter holds no webhook, so waits never form a cycle.
func (w *webhookCore) take(ctx context.Context, key string) (done chan struct{}, ok bool) {
	for {
		w.mu.Lock()
		other, busy := w.busy[key]
		if !busy {
			done = make(chan struct{})
			w.busy[key] = done
			w.mu.Unlock()
			return done, true
		}
		w.mu.Unlock()
		if testHookWebhookWait != nil {
			testHookWebhookWait()
		}
		select {
		case <-other:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// testHookWebhookWait, when set (by tests only), is called as take or settle starts to wait.
var testHookWebhookWait func()

// settle waits until no pass of this process is delivering to a webhook, or ctx ends:
// AdvanceClock calls it before each move, so that deliveries in flight (a worker's, or
// one whose queue entry a lease moved ahead) happen at the time they were due.
func (w *webhookCore) settle(ctx context.Context) {
	for {
		var other chan struct{}
		w.mu.Lock()
		for _, ch := range w.busy {
			other = ch
			break
		}
		w.mu.Unlock()
		if other == nil {
			return
		}
		if testHookWebhookWait != nil {
			testHookWebhookWait()
		}
		select {
		case <-other:
		case <-ctx.Done():
			return
		}
	}
}

// release ends the caller's delivery to the webhook key (take).
func (w *webhookCore) release(key string, done chan struct{}) {
	w.mu.Lock()
	delete(w.busy, key)
	w.mu.Unlock()
	close(done)
}

// errNoSender is deliverWebhook's answer when the webhook has a URL and the Service no
// WebhookSender: nothing was sent, and the webhook stays queued for a Service that has one.
// It is not a failure; ServeWebhooks does not look again at once for it (it would spin).
var errNoSender = errors.New("no WebhookSender")

// deliverWebhook sends the webhook's events in order until one fails or none is left.
func (s *Service) deliverWebhook(ctx context.Context, id string) error {
	for range webhookPerPass {
		if err := ctx.Err(); err != nil {
			return nil
		}
		w, ev, ok, err := s.claimWebhookEvent(ctx, id)
		if err != nil || !ok {
			return err
		}
		start := time.Now()
		var res WebhookResponse
		var failure string
		if w.URL == "" {
			if err := s.mailWebhook(ctx, w.Webhook, ev); err != nil {
				failure = s.attemptFailure(w.ID, true, err)
			}
		} else {
			var err error
			res, err = s.sendWebhook(ctx, w.Webhook, webhookMessageID(w.ID, ev.Seq), ev.Data)
			if own := notSent(err); own != nil {
				if ctx.Err() != nil {
					return nil // stopping, as below
				}
				return own // not an attempt: the event goes when the lease runs out
			}
			switch {
			case err != nil:
				failure, res.Status = s.attemptFailure(w.ID, false, err), 0
			case res.Status < 200 || res.Status > 299:
				failure = fmt.Sprintf("HTTP %d", res.Status)
			}
		}
		took := time.Since(start)
		if ctx.Err() != nil {
			return nil // stopping: not recorded, so sent again by the next pass
		}
		delivered, err := s.recordWebhookAttempt(ctx, id, w.Lease, ev, res, failure, took)
		if err != nil || !delivered {
			return err
		}
	}
	return nil
}

// mailWebhook sends ev to the webhook's e-mail address through the Mailer, bounded by the
// per-attempt timeout.
func (s *Service) mailWebhook(ctx context.Context, w Webhook, ev Event) error {
	ctx, cancel := context.WithTimeout(ctx, s.core.webhooks.timeout)
	defer cancel()
	return s.core.webhooks.mailer.SendMail(ctx, MailMessage{To: w.Email, Subject: ev.Name, Body: ev.Data})
}

// webhookMessageID is the webhook-id header: the same on every attempt of one event to one
// webhook, so receivers dedupe by it.
func webhookMessageID(webhookID string, seq uint64) string {
	return "msg_" + webhookID + "_" + strconv.FormatUint(seq, 10)
}

// claimWebhookEvent finds the webhook's next event: the first after its cursor with its
// name. Events it passes over (other names) move the cursor. No event left (or the webhook
// gone, inactive or not due) takes the webhook off the queue and answers ok false. A
// webhook with a URL, claimed by a Service without a WebhookSender, is left as it is,
// unleased, with errNoSender.
func (s *Service) claimWebhookEvent(ctx context.Context, id string) (webhookRecord, Event, bool, error) {
	var rec webhookRecord
	var ev Event
	var ok bool
	lease := s.core.webhooks.lease
	var noSender bool
	err := s.update(ctx, func(t *txn) error {
		rec, ev, ok, noSender = webhookRecord{}, Event{}, false, false
		err := t.get(collWebhooks, id, "webhook", &rec)
		if exists, err := found(err); err != nil {
			return err
		} else if !exists {
			return t.dequeue(collWebhookQueue, webhookQueueID(t.company, id))
		}
		if !rec.IsActive {
			return t.unqueueWebhook(&rec)
		}
		if rec.Queued && rec.NextAt.After(t.now) || rec.LeasedUntil.After(t.now) {
			return nil // a retry later on, or another process is delivering
		}
		if noSender = rec.URL != "" && s.core.webhooks.sender == nil; noSender {
			// opened without a sender: it waits, queued and not leased, for a Service that
			// has one (a lease would keep the others off it until it ran out)
			return nil
		}
		p, err := t.tx.List(collEvents, t.company, store.Query{Index: indexAll, From: seqID(rec.Cursor + 1), Limit: webhookScan})
		if err != nil {
			return internal(err)
		}
		start := rec.Cursor
		for _, r := range p.Records {
			var e Event
			if err := decode(r, &e); err != nil {
				return err
			}
			if e.Name == rec.Event {
				ev, ok = e, true
				break
			}
			rec.Cursor = e.Seq
		}
		switch {
		case ok && lease > 0:
			rec.LeasedUntil, rec.Lease = t.now.Add(lease), t.newID()
			return t.queueWebhook(&rec, rec.LeasedUntil) // out of the other processes' sight
		case ok && rec.Cursor == start:
			return nil
		case ok || len(p.Records) == webhookScan:
			return t.putWebhook(&rec, false) // past the others; more to look at
		default:
			return t.unqueueWebhook(&rec) // nothing left: emit queues it again
		}
	})
	if err == nil && noSender {
		return rec, ev, false, errNoSender
	}
	if err == nil && !ok && rec.Queued && rec.IsActive && !rec.NextAt.After(s.now()) && !rec.LeasedUntil.After(s.now()) {
		// passed over a full scan of other events: look again
		return s.claimWebhookEvent(ctx, id)
	}
	return rec, ev, ok, err
}

// sendWebhook signs body for w and sends it, bounded by the per-attempt timeout. Signing
// reads the signing key from the store; when that fails, nothing is sent and the error is
// a *notSentError: the Service's failure, not the receiver's, which callers do not record
// as an attempt (a store that failed for a moment cost an event its retries, and with
// WebhookAttempts 1 the event itself).
func (s *Service) sendWebhook(ctx context.Context, w Webhook, msgID string, body []byte) (WebhookResponse, error) {
	if s.core.webhooks.sender == nil {
		return WebhookResponse{}, errors.New("no WebhookSender configured")
	}
	signer, err := s.webhookSigner(ctx)
	if err != nil {
		return WebhookResponse{}, &notSentError{err}
	}
	h, err := signer.Headers(webhook.Delivery{ID: msgID, At: s.signedAt(), Secret: w.HMACSecretKey,
		Authorization: w.Authorization, Body: body})
	if err != nil {
		return WebhookResponse{}, &notSentError{internal(err)}
	}
	ctx, cancel := context.WithTimeout(ctx, s.core.webhooks.timeout)
	defer cancel()
	return s.core.webhooks.sender.SendWebhook(ctx, WebhookRequest{URL: w.URL, Header: h, Body: body})
}

// notSentError is a delivery that failed before anything was sent (see sendWebhook).
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// notSent is the Service's own failure err wraps if sendWebhook failed before sending,
// else nil.
func notSent(err error) error {
	var ns *notSentError
	if errors.As(err, &ns) {
		return ns.err
	}
	return nil
}

// signedAt is the time a delivery's webhook-timestamp carries: the Service's time, except
// on an OffsetClock (the sandbox server's), where it is the time without the offset. A
// receiver checks the timestamp against its own clock (VerifyWebhook, the standardwebhooks
// packages: five minutes either way), which the sandbox clock's moves do not move; stamped
// with the moved time, every delivery after a move failed verification. The payload's
// times are the Service's, moved.
func (s *Service) signedAt() time.Time {
	if c, ok := s.core.clock.(interface{ wall() time.Time }); ok {
		return c.wall()
	}
	return s.now()
}

// newJSONEncoder is a JSON encoder that leaves <, > and & as they are.
func newJSONEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

package payments

import (
	"cmp"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	inFlight    int                  // Options.WebhookInFlight: events of one webhook in flight at once, at most
	onAttempt   func(WebhookAttempt) // Options.OnWebhookAttempt
	lease       time.Duration        // 0: one process owns the store, no leases

	mu      sync.Mutex
	busy    map[string]chan struct{} // webhooks a pass of this process is delivering to; closed when it is done
	serving int                      // ServeWebhooks workers running
	key     *rsa.PrivateKey
	given   *rsa.PrivateKey // Options.WebhookSigningKey: the key a store without one starts with
	signer  *webhook.Signer // signs with key; made with it
	wakeups chan struct{}
}

func newWebhookCore(st store.Store, opts Options) *webhookCore {
	w := &webhookCore{sender: opts.WebhookSender, attempts: opts.WebhookAttempts, timeout: opts.WebhookTimeout,
		concurrency: opts.WebhookConcurrency, busy: map[string]chan struct{}{}, wakeups: make(chan struct{}, 1), mailer: opts.Mailer,
		onAttempt: opts.OnWebhookAttempt, given: opts.WebhookSigningKey}
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
	w.inFlight = opts.WebhookInFlight
	if w.inFlight <= 0 && opts.IDs != nil {
		w.inFlight = 1 // attempts recorded, and their ids drawn, in one order
	} else if w.inFlight <= 0 {
		w.inFlight = DefaultWebhookInFlight
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
// whose queue entry is due, its due events, several at once (Options.WebhookInFlight), until
// none is left, or one failed (then retried later, and the later events wait for it).
// Webhooks are served concurrently (Options.WebhookConcurrency), each attempt bounded by
// Options.WebhookTimeout, so a slow receiver holds back only its own webhook.
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
// claims a webhook's next events in a transaction that stores a lease on the webhook and
// moves its queue entry to the lease's end, renewed by each step of its delivery, so the
// other processes neither list it nor claim it until the delivery ends (which ends the
// lease) or the lease runs out.
// A process that dies mid-delivery leaves the lease to run out, and then another process
// delivers the events it had claimed and not recorded: at least once, and normally once.
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

// deliverWebhook sends the webhook's due events until none is left, the pass's share
// (webhookPerPass) is sent or ctx ends, several at once: a window of events in flight that
// starts at one, grows by one with each delivery up to Options.WebhookInFlight, and falls
// back to one after a failure, so that a receiver that has been failing or idle is not
// sent a burst. Each send that ends is recorded by a later step (webhookStep), with the
// others that ended meanwhile, in one transaction that also claims the next events: the
// outcomes of several deliveries share one commit.
//
// A step runs beside the sends, one at a time: while its transaction waits for the writer
// and the disk, the run goes on starting the events claimed before it, so the sends do not
// wait for a commit. (Run in turn, a step began with every claimed event out, and the
// sends that ended during its commit were not replaced until it came back: the trace of
// BenchmarkWebhookDeliveryFloor showed 15 of 16 senders waiting for a job while the step's
// commit waited; BenchmarkWebhookDeliverySlowCommit shows what it costs when commits are
// slow.) A step starts once as many sends have ended as are still out, and at least half
// the window, or once fewer than a window's events wait to be sent and there is room to
// claim half a window more. Without leases (one process owns the store) a run claims
// ahead: up to claimAhead windows are claimed, and a claimed event waits in the run's
// queue for a send to end, so the next send starts at once. Claimed events are Open: a
// crash, or ctx ending, leaves them owed, sent by a later pass, the sends in flight
// stopping unrecorded. A step that began before a send failed claims events the failure
// would have held back: they are not sent (dropped, Open still), and wait behind the
// failed one.
func (s *Service) deliverWebhook(ctx context.Context, id string) error {
	wc := s.core.webhooks
	run := &webhookRun{flying: map[uint64]bool{}, window: 1}
	results := make(chan webhookSend, wc.inFlight*wc.claimAhead()) // never more claimed than that: sends never block
	// The sends run on senders that last the run, one started whenever more are out than
	// there are senders: a goroutine per send grew a new stack for every signature (the
	// RSA exponentiation's frames), 2% of a delivery's CPU in BenchmarkWebhookDeliveryFloor.
	jobs := make(chan webhookSend, wc.inFlight) // never more out than senders
	senders := 0
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(jobs)
	stepped := make(chan stepOutcome, 1) // the step running beside the sends, once it ends
	stepping := false
	defer func() {
		if stepping {
			<-stepped // its transaction ends before the run does
		}
	}()
	var ended, queue []webhookSend // sends that ended unrecorded; events claimed and waiting to be sent
	var hook Webhook               // as the last step read it
	sending := 0
	var own error    // the Service's own failure before a send: claim no more, and say so
	failed := false  // a send failed since the running step began
	drop := func() { // the queued events are not sent by this run
		for _, q := range queue {
			delete(run.flying, q.ev.Seq)
		}
		queue = nil
	}
	take := func(r webhookSend) {
		delete(run.flying, r.ev.Seq)
		sending--
		switch {
		case r.own != nil:
			own = cmp.Or(own, r.own)
			return // not an attempt: the event stays owed, due at once
		case r.failure == "":
			run.window = min(run.window+1, wc.inFlight)
		default:
			run.window, failed = 1, true
			drop() // the later events wait behind it, Open (claimWebhookEvents)
		}
		ended = append(ended, r)
	}
	stop, dry := false, false // claim nothing more; the last claim found fewer events than it had room for
	for {
		if ctx.Err() != nil {
			return nil // stopping: not recorded, so sent again by a later pass
		}
		if own != nil {
			drop()
		}
		for len(queue) > 0 && sending < run.window {
			if sending == senders {
				senders++
				wg.Go(func() {
					for j := range jobs {
						results <- s.sendEvent(ctx, j.hook, j.ev)
					}
				})
			}
			jobs <- webhookSend{ev: queue[0].ev, hook: hook}
			queue = queue[1:]
			sending++
		}
		room := 0
		if !stop && own == nil {
			room = min(run.window*wc.claimAhead()-len(run.flying), webhookPerPass-run.sent)
		}
		if !stepping {
			if len(run.flying) == 0 && len(ended) == 0 && (stop || own != nil || room <= 0 || dry) {
				return own // nothing out, nothing to record, nothing more to claim
			}
			if len(run.flying) == 0 || // nothing out: record the rest, claim, or end
				len(ended) > 0 && len(ended) >= max(sending, run.window/2) || // half the window has ended
				len(queue) < run.window && room >= max(1, run.window/2) && !dry { // fewer waiting than a window: claim
				stepping, failed = true, false
				sends, snap := ended, run.snapshot()
				ended = nil
				go func() {
					res, err := s.webhookStep(ctx, id, snap, sends, max(room, 0))
					stepped <- stepOutcome{res: res, err: err, room: room, held: snap.held, lease: snap.lease}
				}()
			}
		}
		select {
		case r := <-results:
			take(r)
			for more := true; more; { // what else ended meanwhile
				select {
				case r := <-results:
					take(r)
				default:
					more = false
				}
			}
		case o := <-stepped:
			stepping = false
			if o.err != nil {
				return o.err // what ended unrecorded is owed still: sent again
			}
			res := o.res
			run.held, run.lease = o.held, o.lease
			if res.stop {
				stop = true
				drop() // Open and owed: a later pass sends them
			}
			dry = len(res.claimed) < o.room && !res.more
			hook = res.hook
			run.sent += len(res.claimed)
			if failed || stop || own != nil { // claimed before the failure: they wait behind it, Open
				continue
			}
			for _, ev := range res.claimed {
				run.flying[ev.Seq] = true
				queue = append(queue, webhookSend{ev: ev})
			}
		case <-ctx.Done():
			return nil // stopping: not recorded, so sent again by a later pass
		}
	}
}

// stepOutcome is what a step running beside the sends came to (deliverWebhook): its
// result, the room it had to claim, and the run's hold on the webhook after it.
type stepOutcome struct {
	res   webhookStepResult
	err   error
	room  int
	held  bool
	lease string
}

// claimAhead is how many windows of events a run may hold claimed: 3, events claimed
// ahead waiting for a send to end, when one process owns the store and events go several
// at once; else 1. Three, not two: a step runs beside the sends, and while it waits for
// the writer (behind the signatures, on a busy machine) the sends that end take their
// successors from the queue; with two windows the queue ran dry before the step came
// back. With leases a queued event could start after the lease renewed by its claim ran
// out, so a run claims only what it sends at once.
func (w *webhookCore) claimAhead() int {
	if w.lease > 0 || w.inFlight <= 1 {
		return 1
	}
	return 3
}

// webhookRun is one pass's delivery to one webhook (deliverWebhook).
type webhookRun struct {
	held   bool            // its steps hold the webhook: they claimed its events (with leases, under lease)
	lease  string          // the lease they hold it under ("" without leases)
	flying map[uint64]bool // the events being sent, by seq
	window int             // how many may be in flight now
	sent   int             // events claimed so far
}

// snapshot is a copy of r for a step running beside the sends: the step reads the events
// in flight as they were when it began, and says how it holds the webhook after it.
func (r *webhookRun) snapshot() *webhookRun {
	return &webhookRun{held: r.held, lease: r.lease, flying: maps.Clone(r.flying), window: r.window, sent: r.sent}
}

// webhookSend is one send of an event and what came of it.
type webhookSend struct {
	ev      Event
	hook    Webhook // the webhook it is sent to, as the run's last step read it (a job for a sender)
	res     WebhookResponse
	failure string // "" when the receiver took it
	took    time.Duration
	own     error // the Service's failure before anything was sent (notSent): not an attempt
}

// sendEvent sends ev to the webhook w, by e-mail or HTTP, and says what came of it.
func (s *Service) sendEvent(ctx context.Context, w Webhook, ev Event) webhookSend {
	r := webhookSend{ev: ev}
	start := time.Now()
	if w.URL == "" {
		if err := s.mailWebhook(ctx, w, ev); err != nil {
			r.failure = s.attemptFailure(w.ID, true, err)
		}
	} else {
		res, err := s.sendWebhook(ctx, w, webhookMessageID(w.ID, ev.Seq), ev.Data)
		if own := notSent(err); own != nil {
			r.own = own
			return r
		}
		switch {
		case err != nil:
			r.failure, res.Status = s.attemptFailure(w.ID, false, err), 0
		case res.Status < 200 || res.Status > 299:
			r.failure = fmt.Sprintf("HTTP %d", res.Status)
		}
		r.res = res
	}
	r.took = time.Since(start)
	return r
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

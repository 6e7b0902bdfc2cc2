package payments

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/pixfoundry/payments/store"
)

// What delivery attempts leave behind: their records, the webhook moved on (each event
// delivered, retried later or given up, or the webhook disabled), and the webhookSent
// audit of the Pix each event carries, in one transaction for the attempts that ended
// together, which also claims the webhook's next events.

// webhookStepResult is what a step of a webhook's delivery did.
type webhookStepResult struct {
	hook     Webhook          // the webhook, to send the claimed events to
	claimed  []Event          // events to send now
	recorded []WebhookAttempt // the attempts it recorded, in the order of the sends given
	stop     bool             // claim nothing more: the webhook is gone, inactive, not due or another process's
	more     bool             // it passed over a full scan of other events: step again
}

// webhookStep is one transaction of a webhook's delivery (deliverWebhook): it records the
// outcome of each send in sends (of events the run claimed), then claims up to room more
// of the webhook's events, and leaves the webhook's queue entry and lease as the run
// goes on or ends. The run's events in flight (run.flying) are not claimed again.
//
// The webhook's delivery state (webhookRecord) is a window over its company's outbox:
// every event up to Cursor is handled; the events of its name in (Cursor, Scanned] not yet
// handled are Open, each with its failures and the time it is due (a retry later on, or
// now: claimed, sent or being sent, and not recorded). A claim takes the Open events due
// first, then new events after Scanned while fewer than Options.WebhookInFlight (three
// times that when the run claims ahead, webhookCore.claimAhead) are Open and
// none of them has failed: while one of a webhook's events waits for a retry, its later
// events wait too. A crash (kill -9) between a send and its record leaves the event Open
// and due, so it is sent again: at least once.
//
// With leases (a shared store), the claim that finds the webhook free takes a lease on
// it, and every later step of the run renews it while it has events in flight, so no
// other process claims the webhook's events meanwhile; the step that ends the run ends
// the lease. A run whose lease ran out and was taken by another process records its
// outcomes (of events still Open) and claims nothing more.
func (s *Service) webhookStep(ctx context.Context, id string, run *webhookRun, sends []webhookSend, room int) (webhookStepResult, error) {
	wc := s.core.webhooks
	var res webhookStepResult
	var lease string
	var held, noSender bool
	err := s.update(ctx, func(t *txn) error {
		res, lease, held, noSender = webhookStepResult{}, run.lease, false, false
		var rec webhookRecord
		if ok, err := found(t.get(collWebhooks, id, "webhook", &rec)); err != nil {
			return err
		} else if !ok {
			res.stop = true // deleted: nothing to record, nothing to send
			return t.dequeue(collWebhookQueue, webhookQueueID(t.company, id))
		}
		ours := run.held && (wc.lease <= 0 || rec.Lease == run.lease)
		switch {
		case run.held && !ours: // another process took the webhook once this run's lease ran out
			res.stop = true
			if err := t.settleSends(&rec, sends, &res); err != nil {
				return err
			}
			return t.putWebhook(&rec, false) // its lease and queue entry stay as they are
		case !run.held && !rec.IsActive:
			res.stop = true
			return t.unqueueWebhook(&rec)
		case !run.held && (rec.LeasedUntil.After(t.now) || rec.Queued && rec.NextAt.After(t.now)):
			res.stop = true // another process is delivering, or a retry later on
			return nil
		case !run.held && rec.URL != "" && wc.sender == nil:
			// opened without a sender: it waits, queued and not leased, for a Service that
			// has one (a lease would keep the others off it until it ran out)
			res.stop, noSender = true, true
			return nil
		}
		if err := t.repairScan(&rec); err != nil {
			return err
		}
		if err := t.settleSends(&rec, sends, &res); err != nil {
			return err
		}
		if rec.IsActive && room > 0 {
			if err := t.claimWebhookEvents(&rec, run, room, &res); err != nil {
				return err
			}
		}
		rec.Failures = 0 // kept per Open event
		rec.moveCursor()
		res.hook = rec.Webhook
		switch {
		case !rec.IsActive:
			res.stop = true
			rec.LeasedUntil, rec.Lease = time.Time{}, ""
			return t.unqueueWebhook(&rec)
		case len(run.flying) > 0 || len(res.claimed) > 0 || res.more: // the run goes on
			held = true
			if wc.lease > 0 {
				if !run.held {
					lease = t.newID()
				}
				rec.LeasedUntil, rec.Lease = t.now.Add(wc.lease), lease
				return t.queueWebhook(&rec, rec.LeasedUntil) // out of the other processes' sight
			}
			if !rec.Queued || rec.NextAt.After(t.now) {
				return t.queueWebhook(&rec, t.now) // due: a crash leaves its events to the next pass
			}
			return t.putWebhook(&rec, false)
		}
		rec.LeasedUntil, rec.Lease = time.Time{}, "" // the run ends, and its lease
		var next time.Time
		for _, o := range rec.Open {
			if next.IsZero() || o.NextAt.Before(next) {
				next = o.NextAt
			}
		}
		switch {
		case run.sent >= webhookPerPass && !rec.retrying():
			return t.queueWebhook(&rec, t.now) // its share of the pass sent: the next pass goes on
		case len(rec.Open) > 0:
			return t.queueWebhook(&rec, next)
		}
		return t.unqueueWebhook(&rec) // nothing owed: the next event's fan-out queues it again
	})
	if err != nil {
		return webhookStepResult{}, err
	}
	if noSender {
		return res, errNoSender
	}
	run.held, run.lease = held, lease
	if wc.onAttempt != nil {
		for _, a := range res.recorded {
			wc.onAttempt(a)
		}
	}
	return res, nil
}

// settleSends records the outcome of each send (see settleSend).
func (t *txn) settleSends(rec *webhookRecord, sends []webhookSend, res *webhookStepResult) error {
	for _, sd := range sends {
		a, err := t.settleSend(rec, sd)
		if err != nil {
			return err
		}
		if a != nil {
			res.recorded = append(res.recorded, *a)
		}
	}
	return nil
}

// settleSend records the outcome of sending the event sd.ev, if it is Open still (another
// process may have recorded it, after this run's lease ran out), and moves it on:
// delivered, retried later, given up, or the webhook disabled (410, the event Open still).
// sd.failure is empty when the receiver took it (a 2xx, or the Mailer accepted the e-mail).
func (t *txn) settleSend(rec *webhookRecord, sd webhookSend) (*WebhookAttempt, error) {
	i := slices.IndexFunc(rec.Open, func(o openEvent) bool { return o.Seq == sd.ev.Seq })
	if i < 0 {
		return nil, nil
	}
	o := &rec.Open[i]
	ev := sd.ev
	a := WebhookAttempt{WebhookID: rec.ID, Seq: ev.Seq, Event: ev.Name, Attempt: o.Failures + 1, Time: t.now, Status: sd.res.Status, Duration: sd.took, Error: sd.failure}
	switch {
	case a.Error == "":
		a.Outcome = "delivered"
	case sd.res.Status == http.StatusGone:
		a.Outcome = "disabled"
		rec.IsActive, rec.UpdatedAt, o.Failures = false, t.now, 0
	case a.Attempt >= t.svc.core.webhooks.attempts:
		a.Outcome = "gave_up"
	default:
		a.Outcome = "retry"
		o.Failures++
		o.NextAt = t.now.Add(webhookBackoff(o.Failures, sd.res.RetryAfter))
	}
	a.ID = t.newID()
	if err := t.insertAttempt(a); err != nil {
		return nil, err
	}
	switch a.Outcome {
	case "delivered", "gave_up":
		rec.Open = slices.Delete(rec.Open, i, i+1)
		sent := WebhookSent{Event: ev.Name, Status: WebhookSentSuccess, Time: t.now, IsRetry: a.Attempt > 1}
		if a.Outcome == "gave_up" {
			sent.Status = WebhookSentFailed
		}
		if err := t.auditWebhookSent(ev, sent); err != nil {
			return nil, err
		}
	}
	return &a, nil
}

// claimWebhookEvents claims up to room of rec's events for run: first its Open events
// that are due and not in flight, oldest first, then, while none of them has failed and
// fewer than the window allows are Open, new events after Scanned with the webhook's
// name. While one of the Open events has failed, the Open events that never failed wait
// behind it (events claimed ahead when it failed, or left Open by a crash): they are
// claimed once it is handled. A full scan of other events sets res.more.
func (t *txn) claimWebhookEvents(rec *webhookRecord, run *webhookRun, room int, res *webhookStepResult) error {
	waiting := rec.retrying()
	for _, o := range rec.Open {
		if room == 0 {
			return nil
		}
		if run.flying[o.Seq] || o.NextAt.After(t.now) || waiting && o.Failures == 0 {
			continue
		}
		var ev Event
		if err := t.get(collEvents, seqID(o.Seq), "event", &ev); err != nil {
			return err
		}
		res.claimed = append(res.claimed, ev)
		room--
	}
	limit := t.svc.core.webhooks.inFlight * t.svc.core.webhooks.claimAhead() // Open events at most
	if room == 0 || rec.retrying() || len(rec.Open) >= limit {
		return nil
	}
	failures := rec.Failures // a record stored before the window: the failures of the event after its cursor
	scanned := rec.scanFrom()
	p, err := t.tx.List(collEvents, t.company, store.Query{Index: indexAll, From: seqID(scanned + 1), Limit: webhookScan, NoTotal: true})
	if err != nil {
		return internal(err)
	}
	full := false
	for _, r := range p.Records {
		if room == 0 || len(rec.Open) >= limit {
			full = true
			break
		}
		if seq, name, ok := eventHead(r.Data); ok && string(name) != rec.Event {
			scanned = seq // another name: passed over without decoding its payload
			continue
		}
		var e Event
		if err := decode(r, &e); err != nil {
			return err
		}
		scanned = e.Seq
		if e.Name != rec.Event {
			continue
		}
		rec.Open = append(rec.Open, openEvent{Seq: e.Seq, Failures: failures, NextAt: t.now})
		failures = 0
		res.claimed = append(res.claimed, e)
		room--
	}
	rec.Scanned = scanned
	res.more = !full && len(p.Records) == webhookScan && len(res.claimed) == 0
	return nil
}

// repairScan mends a record an earlier version left with events lost: when a send failed,
// it gave the events claimed ahead of it back by moving Scanned back before them, while
// Open kept later events and Cursor moved to the first of those, past them, so they were
// never claimed again. Such a record has an Open event after Scanned; the events of its
// name between Scanned and the last Open event, not Open, become Open (never attempted,
// so they wait behind a failed one), and Scanned moves to that last Open event.
func (t *txn) repairScan(rec *webhookRecord) error {
	top := uint64(0)
	for _, o := range rec.Open {
		top = max(top, o.Seq)
	}
	if rec.Scanned == 0 || top <= rec.Scanned {
		return nil
	}
	for from := rec.Scanned + 1; from < top; {
		p, err := t.tx.List(collEvents, t.company, store.Query{Index: indexAll, From: seqID(from), To: seqID(top), Limit: webhookScan, NoTotal: true})
		if err != nil {
			return internal(err)
		}
		if len(p.Records) == 0 {
			break
		}
		for _, r := range p.Records {
			var e Event
			if err := decode(r, &e); err != nil {
				return err
			}
			from = e.Seq + 1
			if e.Name == rec.Event && !slices.ContainsFunc(rec.Open, func(o openEvent) bool { return o.Seq == e.Seq }) {
				rec.Open = append(rec.Open, openEvent{Seq: e.Seq, NextAt: t.now})
			}
		}
	}
	slices.SortFunc(rec.Open, func(a, b openEvent) int { return cmp.Compare(a.Seq, b.Seq) })
	rec.Scanned = top
	return nil
}

// eventHead reads the seq and name at the start of an event's stored form, as eventJSON
// writes it ({"seq":N,"event":"NAME",...), without reading its payload; ok is false when
// b does not start that way (a store that keeps JSON in its own form, or a name with
// escapes), and then the caller decodes the whole event.
func eventHead(b []byte) (seq uint64, name []byte, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"seq":`))
	if !ok {
		return 0, nil, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	seq, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	if err != nil {
		return 0, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest[n:], []byte(`,"event":"`)); !ok {
		return 0, nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return 0, nil, false
	}
	return seq, rest[:end], true
}

// webhookBackoff is the wait after the n-th failure of an event: 10 s × 2^(n-1), or the
// receiver's Retry-After when longer.
func webhookBackoff(n int, retryAfter time.Duration) time.Duration {
	d := webhookRetryBase << min(n-1, 20)
	return max(d, retryAfter)
}

// auditWebhookSent appends sent to the webhookSent audit of the Pix ev carries, when its
// row of the catalogue (eventSpec.pixOf) says it carries one, in t (appendWebhookSent).
func (t *txn) auditWebhookSent(ev Event, sent WebhookSent) error {
	spec, ok := t.svc.eventOf(ev.Name)
	if !ok || spec.pixOf == nil {
		return nil
	}
	e2e, err := spec.pixOf(ev.Data)
	if err != nil {
		return internal(err)
	}
	if e2e == "" {
		return nil
	}
	return t.appendWebhookSent(e2e, sent)
}

// attemptFailure is what a failed delivery's attempt records as its Error, which the
// company reads (ListWebhookAttempts): the class of failure only (webhookFailure), as the
// test call says it, since the error's own text can name internal hosts, addresses and
// resolvers, or the mail server. A failed e-mail (mail) that is not a timeout or the
// Service's own error says the e-mail could not be sent. The whole error goes to the
// Service's log.
func (s *Service) attemptFailure(webhookID string, mail bool, err error) string {
	s.core.log.Info("webhook delivery failed", "webhook", webhookID, "err", err)
	class := webhookFailure(err)
	if mail && class == failedConnection {
		return "the e-mail could not be sent"
	}
	return class
}

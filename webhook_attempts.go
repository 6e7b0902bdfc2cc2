package payments

import (
	"context"
	"net/http"
	"time"
)

// What a delivery attempt leaves behind: its record, the webhook moved on (delivered,
// retried later, given up, disabled), and the webhookSent audit of the Pix the event
// carries, all in one transaction.

// recordWebhookAttempt records the outcome of sending ev and moves the webhook on:
// delivered (the cursor passes it), retried later, given up, or the webhook disabled (410).
// failure is empty when the receiver took it (a 2xx, or the Mailer accepted the e-mail).
// lease is the claim's lease ("" without leases): the outcome ends the webhook's lease
// only if it is still that one. A lease that ran out and was claimed by another process
// stays with that process until its own outcome, so no process claims the next event
// while the other still delivers this one.
func (s *Service) recordWebhookAttempt(ctx context.Context, id, lease string, ev Event, res WebhookResponse, failure string, took time.Duration) (bool, error) {
	var delivered bool
	var recorded *WebhookAttempt
	err := s.update(ctx, func(t *txn) error {
		delivered, recorded = false, nil
		var rec webhookRecord
		if ok, err := found(t.get(collWebhooks, id, "webhook", &rec)); err != nil || !ok {
			return err // deleted meanwhile
		}
		ours := rec.Lease == lease
		if ours {
			rec.LeasedUntil, rec.Lease = time.Time{}, "" // the outcome ends this claim's lease
		}
		if rec.Cursor >= ev.Seq { // another process recorded it, after this claim's lease ran out
			if !ours || lease == "" {
				return nil
			}
			return t.queueWebhook(&rec, t.now) // free the webhook for its next event
		}
		a := WebhookAttempt{WebhookID: id, Seq: ev.Seq, Event: ev.Name, Attempt: rec.Failures + 1, Time: t.now, Status: res.Status, Duration: took, Error: failure}
		switch {
		case a.Error == "":
			a.Outcome, delivered = "delivered", true
			rec.Cursor, rec.Failures = ev.Seq, 0
		case res.Status == http.StatusGone:
			a.Outcome = "disabled"
			rec.IsActive, rec.UpdatedAt, rec.Failures = false, t.now, 0
		case a.Attempt >= s.core.webhooks.attempts:
			a.Outcome, delivered = "gave_up", true
			rec.Cursor, rec.Failures = ev.Seq, 0
		default:
			a.Outcome = "retry"
			rec.Failures++
		}
		a.ID = t.newID()
		if err := t.insertAttempt(a); err != nil {
			return err
		}
		recorded = &a
		switch a.Outcome {
		case "delivered", "gave_up":
			sent := WebhookSent{Event: ev.Name, Status: WebhookSentSuccess, Time: t.now, IsRetry: a.Attempt > 1}
			if a.Outcome == "gave_up" {
				sent.Status = WebhookSentFailed
			}
			if err := t.auditWebhookSent(ev, sent); err != nil {
				return err
			}
		}
		next := t.now
		switch a.Outcome {
		case "disabled":
			return t.unqueueWebhook(&rec)
		case "retry":
			next = t.now.Add(webhookBackoff(rec.Failures, res.RetryAfter))
		}
		if rec.LeasedUntil.After(next) {
			next = rec.LeasedUntil // another process's lease: out of sight until it ends
		}
		return t.queueWebhook(&rec, next)
	})
	if err == nil && recorded != nil && s.core.webhooks.onAttempt != nil {
		s.core.webhooks.onAttempt(*recorded)
	}
	return delivered, err
}

// webhookBackoff is the wait after the n-th failure of an event: 10 s × 2^(n-1), or the
// receiver's Retry-After when longer.
func webhookBackoff(n int, retryAfter time.Duration) time.Duration {
	d := webhookRetryBase << min(n-1, 20)
	return max(d, retryAfter)
}

// auditWebhookSent appends sent to the webhookSent audit of the Pix ev carries, when its
// row of the catalogue (eventSpec.pixOf) says it carries one, in t. It reads the
// transaction afresh, so a rerun of t appends once.
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
	x, err := t.transactionByEndToEnd(e2e)
	if ok, err := found(err); err != nil || !ok {
		return err
	}
	x.WebhookSent = append(x.WebhookSent, sent)
	return t.saveTransaction(x)
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

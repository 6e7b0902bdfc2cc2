package payments

import (
	"context"
	"fmt"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Manual redelivery: one event (ResendWebhookEvent) or a time range (ResendWebhookEvents),
// recorded as attempts beside the delivery pass's, without touching its cursor.

// ResendWebhookEvent sends the company's event seq to the webhook id once more, now,
// whatever happened to it before (delivered, given up, or sent before the webhook's last
// failure), and records the attempt (outcome "resent" or "resend_failed"). It changes
// neither the webhook's cursor nor its retries: it is the manual redelivery of the real
// API's UI. The event must be one the webhook subscribes to; it goes with its usual
// webhook-id, so a receiver that dedupes takes it once. A failure of the receiver is the
// attempt's (Attempt 0), not an error.
func (s *Service) ResendWebhookEvent(ctx context.Context, id string, seq uint64) (WebhookAttempt, error) {
	var rec webhookRecord
	var ev Event
	err := s.view(ctx, func(t *txn) error {
		if err := t.get(collWebhooks, id, "webhook", &rec); err != nil {
			return err
		}
		r, err := t.tx.Get(collEvents, t.company, seqID(seq))
		if err != nil {
			return storeErr(err, "event")
		}
		if err := decode(r, &ev); err != nil {
			return err
		}
		if ev.Name != rec.Event {
			return invalid("seq", "event %d is %s, not the webhook's %s", seq, ev.Name, rec.Event)
		}
		return nil
	})
	if err != nil {
		return WebhookAttempt{}, err
	}
	return s.resendWebhookEvent(ctx, rec.Webhook, ev)
}

// resendWebhookEvent sends ev to w now and records the attempt (and the transaction's
// webhookSent entry), as ResendWebhookEvent describes.
func (s *Service) resendWebhookEvent(ctx context.Context, w Webhook, ev Event) (WebhookAttempt, error) {
	start := time.Now()
	var failure string
	var res WebhookResponse
	if w.URL == "" {
		if err := s.mailWebhook(ctx, w, ev); err != nil {
			failure = s.attemptFailure(w.ID, true, err)
		}
	} else {
		var err error
		res, err = s.sendWebhook(ctx, w, webhookMessageID(w.ID, ev.Seq), ev.Data)
		if own := notSent(err); own != nil {
			return WebhookAttempt{}, own // nothing sent: no attempt to record
		}
		switch {
		case err != nil:
			failure, res.Status = s.attemptFailure(w.ID, false, err), 0
		case res.Status < 200 || res.Status > 299:
			failure = fmt.Sprintf("HTTP %d", res.Status)
		}
	}
	a := WebhookAttempt{WebhookID: w.ID, Seq: ev.Seq, Event: ev.Name, Status: res.Status, Duration: time.Since(start), Error: failure, Outcome: "resent"}
	if failure != "" {
		a.Outcome = "resend_failed"
	}
	err := s.update(ctx, func(t *txn) error {
		a.ID, a.Time = t.newID(), t.now
		if err := t.insertAttempt(a); err != nil {
			return err
		}
		sent := WebhookSent{Event: ev.Name, Status: WebhookSentSuccess, Time: t.now, IsRetry: true}
		if failure != "" {
			sent.Status = WebhookSentFailed
		}
		return t.auditWebhookSent(ev, sent)
	})
	return a, err
}

// MaxWebhookResend is how many events one ResendWebhookEvents call re-sends at most, so
// that a call over a long range returns in bounded time.
const MaxWebhookResend = 100

// ResendWebhookEventsParams choose the events ResendWebhookEvents re-sends.
type ResendWebhookEventsParams struct {
	From, To time.Time // the events' time in [From, To); both required
	// After continues a previous call that answered more: the Seq of the last attempt it
	// returned. Events up to it (in time and number order) are skipped.
	After uint64
}

// ResendWebhookEvents re-sends to the webhook id, now and one by one, the company's events
// of the webhook's name whose time is in [From, To), oldest first, each recorded as
// ResendWebhookEvent records it (outcome "resent" or "resend_failed", a webhookSent entry
// on the transaction the event carries). At most MaxWebhookResend go per call: more is
// true when the range holds others; call again with After set to the last attempt's Seq.
// It stops early, without error, when ctx is done. Events stored before this method
// existed are not indexed by time and are not found; ResendWebhookEvent sends them.
func (s *Service) ResendWebhookEvents(ctx context.Context, id string, p ResendWebhookEventsParams) (attempts []WebhookAttempt, more bool, err error) {
	switch {
	case p.From.IsZero():
		return nil, false, invalid("from", "from is required")
	case p.To.IsZero():
		return nil, false, invalid("to", "to is required")
	case !p.To.After(p.From):
		return nil, false, invalid("to", "to must be after from")
	}
	from, to, err := timeRange(p.From, p.To.Add(-time.Nanosecond), "from") // to is excluded
	if err != nil {
		return nil, false, err
	}
	var rec webhookRecord
	var evs []Event
	err = s.view(ctx, func(t *txn) error {
		if err := t.get(collWebhooks, id, "webhook", &rec); err != nil {
			return err
		}
		q := store.Query{Index: eventNameIndex(rec.Event), From: from, To: to, Limit: MaxWebhookResend + 1}
		if p.After > 0 {
			r, err := t.tx.Get(collEvents, t.company, seqID(p.After))
			if err != nil {
				return storeErr(err, "event")
			}
			var after Event
			if err := decode(r, &after); err != nil {
				return err
			}
			q.From = max(q.From, eventTimeSort(after.Time, after.Seq)+"\x00")
		}
		var err error
		evs, _, err = list[Event](t, collEvents, q, nil)
		if more = len(evs) > MaxWebhookResend; more {
			evs = evs[:MaxWebhookResend]
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	out := make([]WebhookAttempt, 0, len(evs))
	for _, ev := range evs {
		if ctx.Err() != nil {
			return out, true, nil
		}
		a, err := s.resendWebhookEvent(ctx, rec.Webhook, ev)
		if err != nil {
			return out, true, err
		}
		out = append(out, a)
	}
	return out, more, nil
}

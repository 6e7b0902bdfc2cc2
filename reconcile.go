package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/rail"
)

// ReconcileResult counts what a Reconcile pass found. Listed = Recorded + Known +
// Unmatched + Failed.
type ReconcileResult struct {
	// Listed is how many Pix the bank listed in the window.
	Listed int
	// Recorded is how many a company recorded in this pass: Pix whose webhook was lost.
	Recorded int
	// Known is how many were recorded (or kept unmatched) before: nothing changed.
	Known int
	// Unmatched is how many this pass kept unmatched: they routed to no company.
	Unmatched int
	// Failed is how many ReceiveBankPix refused (a Pix the bank reports with an invalid
	// field, or with the endToEndId of another Pix): each is logged, and left for an
	// operator; the pass goes on.
	Failed int
}

// Reconcile asks the bank for every Pix it received from from (included) to to (excluded;
// zero: no end), page after page, and routes each through ReceiveBankPix. Banks lose
// webhooks; their listing is the truth, and since ReceiveBankPix is idempotent by
// endToEndId, a Pix a webhook already delivered changes nothing (Known), and one it missed
// is recorded once (Recorded), however often the window is reconciled. Like ReceiveBankPix
// it works across companies: the company this Service acts for does not matter.
//
// The bank is Options.Rail; one that lists nothing (not a rail.Collector) is
// ENOTIMPLEMENTED. A listing that fails is EUNAVAILABLE (try again; what was recorded
// stays), a context that ends ECANCELED; either returns the counts so far with the error.
// Each Pix is one store transaction.
func (s *Service) Reconcile(ctx context.Context, from, to time.Time) (ReconcileResult, error) {
	var res ReconcileResult
	bank, ok := s.core.rail.(rail.Collector)
	if !ok {
		return res, &Error{Code: ENOTIMPLEMENTED, Message: "the bank (Options.Rail) lists no received Pix: it is not a rail.Collector"}
	}
	if !to.IsZero() && to.Before(from) {
		return res, invalid("to", "to must not be before from")
	}
	cursor := ""
	for {
		page, err := s.listReceived(ctx, bank, rail.ReceivedQuery{From: from, To: to, Cursor: cursor})
		if err != nil {
			return res, err
		}
		for _, p := range page.Pix {
			res.Listed++
			r, err := s.ReceiveBankPix(ctx, p)
			switch code := ErrorCode(err); {
			case err == nil && !r.New:
				res.Known++
			case err == nil && r.Unmatched != nil:
				res.Unmatched++
			case err == nil:
				res.Recorded++
			case code == EINVALID || code == ECONFLICT:
				res.Failed++
				s.core.log.Warn("reconcile: a Pix the bank listed is refused; it is left for an operator",
					"endToEndId", p.EndToEndID, "value", p.Value, "err", err)
			default:
				return res, err
			}
		}
		if page.Cursor == "" {
			return res, nil
		}
		cursor = page.Cursor
	}
}

// listReceived asks the bank for one page of received Pix, for at most the send timeout.
func (s *Service) listReceived(ctx context.Context, bank rail.Collector, q rail.ReceivedQuery) (rail.ReceivedPage, error) {
	callCtx, cancel := context.WithTimeout(ctx, s.core.sendTimeout)
	defer cancel()
	page, err := bank.ListReceived(callCtx, q)
	switch {
	case err == nil:
		return page, nil
	case ctx.Err() != nil:
		return rail.ReceivedPage{}, internal(ctx.Err()) // ECANCELED
	}
	if err := fromRail(err); ErrorCode(err) == EINVALID {
		return rail.ReceivedPage{}, err
	}
	return rail.ReceivedPage{}, unavailable("", err, "the bank did not list the Pix it received; try again")
}

package payments

import (
	"cmp"
	"context"

	"github.com/pixfoundry/payments/store"
)

// duePage is how many companies RunDue reads per transaction.
const duePage = 100

// RunDue does, once, the work the clock makes due in every company: it records the
// charges that have expired (ExpireCharges), and it advances every outgoing order that is
// due (refunds, cashback, payments, withdrawals: re-sent when a send failed or hung, asked
// about when the bank accepted it, recorded when it settled; see orders.go). Due orders
// are found through the order queue, by due time, without visiting the companies. A server calls it periodically (examples/server does, every -tick);
// tests call it after moving a ManualClock. The company s acts for does not matter.
//
// The companies are read from the system space a page at a time, and each company's work
// runs in its own transactions, so one slow or failing company holds no lock over the
// others. A failure in one company is logged and does not stop the rest; RunDue returns
// the first one. Running it again, or from two processes at once, is safe: both passes
// are idempotent.
func (s *Service) RunDue(ctx context.Context) error {
	var first error
	if _, err := s.runOrders(ctx); err != nil {
		s.core.log.Error("advancing outgoing orders", "err", err)
		first = err
	}
	for skip := 0; ; skip += duePage {
		var ids []string
		err := s.view(ctx, func(t *txn) error {
			page, err := t.tx.List(collCompanies, systemSpace, store.Query{Index: indexAll, Skip: skip, Limit: duePage})
			if err != nil {
				return internal(err)
			}
			for _, r := range page.Records {
				ids = append(ids, r.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return internal(err)
			}
			co := &Service{core: s.core, company: id}

			if _, err := co.ExpireCharges(ctx); err != nil {
				s.core.log.Error("expiring charges", "company", id, "err", err)
				first = cmp.Or(first, err)
			}
		}
		if len(ids) < duePage {
			break
		}
	}
	return first
}

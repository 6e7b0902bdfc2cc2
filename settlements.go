package payments

import (
	"context"
	"errors"
	"time"

	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
)

// A bank that confirms by webhook knows an order by its id (and, once settled, by the
// endToEndId of its Pix), not by the company that sent it. Every order therefore has a
// route in the system space, written with the order: its id leads to the company, and its
// endToEndId does too once the order is confirmed. Routes are never removed, so a late
// answer about a settled order still finds it.
const (
	collOrderRoutes     = "order_routes" // system space: one per order, by order id
	migrationOrderRoute = "order-routes-1"
)

// orderRoute is an order's route: its company.
type orderRoute struct {
	Company string `json:"company"`
}

func routeE2EKey(endToEndID string) string { return "endToEndId:" + endToEndID }

// routeOrder writes the route of a new order.
func (t *txn) routeOrder(o order) error {
	r, err := encode(o.ID, orderRoute{Company: t.company}, nil, nil)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Insert(collOrderRoutes, systemSpace, r), "order")
}

// routeSettled adds a confirmed order's endToEndId to its route.
func (t *txn) routeSettled(o order) error {
	if o.Status != OrderConfirmed || o.SettledEndToEndID == "" {
		return nil
	}
	r, err := encode(o.ID, orderRoute{Company: t.company}, []string{routeE2EKey(o.SettledEndToEndID)}, nil)
	if err != nil {
		return err
	}
	err = t.tx.Put(collOrderRoutes, systemSpace, r)
	if errors.Is(err, store.ErrNotFound) { // an order from before routes: the migration may not have reached it
		err = t.tx.Insert(collOrderRoutes, systemSpace, r)
	}
	if errors.Is(err, store.ErrConflict) {
		// Another order already settled with this endToEndId: the bank reused one. The
		// order settles all the same; a return naming the endToEndId goes to the first.
		t.svc.core.log.Error("two orders settled with one endToEndId", "company", t.company, "order", o.ID, "endToEndId", o.SettledEndToEndID)
		r.Keys = nil
		err = t.tx.Put(collOrderRoutes, systemSpace, r)
	}
	return storeErr(err, "order")
}

// orderCompany returns the Service of the company that sent the order id, or, with id
// empty, of the order confirmed with endToEndID; ENOTFOUND when no order has them.
func (s *Service) orderCompany(ctx context.Context, id, endToEndID string) (*Service, string, error) {
	var route orderRoute
	err := s.view(ctx, func(t *txn) error {
		var r store.Record
		var err error
		if id != "" {
			r, err = t.tx.Get(collOrderRoutes, systemSpace, id)
		} else {
			r, err = t.tx.GetByKey(collOrderRoutes, systemSpace, routeE2EKey(endToEndID))
		}
		if err != nil {
			return storeErr(err, "order")
		}
		id = r.ID
		return decode(r, &route)
	})
	if err != nil {
		return nil, "", err
	}
	return &Service{core: s.core, company: route.Company}, id, nil
}

// RecordSettlement records what the bank says of an outgoing order (a payment, refund or
// withdrawal, by its id: the id the Rail was given in PixOrder.ID), for banks that push
// settlements by webhook instead of, or besides, answering Status. It works across
// companies: the order's company is found from its id. A final settlement settles the
// order as an answer to Send or Status would, once (its money leaves, or returns, and the
// owner's events are written); a pending one marks the order accepted. Polling stays the
// fallback for pushes that never come.
//
// Telling again what was recorded changes nothing. A final settlement that contradicts
// the one recorded (CONFIRMED for an order recorded FAILED, say) is ECONFLICT on
// "status": the bank and the books disagree about money, which an operator must look at;
// it is logged as an error too. An unknown order is ENOTFOUND; a status that is not one of
// the three is EINVALID on "status".
func (s *Service) RecordSettlement(ctx context.Context, orderID string, st Settlement) error {
	if orderID == "" {
		return invalid("orderID", "orderID is required")
	}
	if st.Status != SettlementPending && !st.Status.Final() {
		return invalid("status", "status must be PENDING, CONFIRMED or FAILED, not %q", st.Status)
	}
	co, _, err := s.orderCompany(ctx, orderID, "")
	if err != nil {
		return err
	}
	if _, err := co.recordOrder(ctx, orderID, st, nil); err != nil {
		return err
	}
	var o order
	if err := co.view(ctx, func(t *txn) error {
		var err error
		o, err = t.orderByID(orderID)
		return err
	}); err != nil {
		return err
	}
	if st.Status.Final() && string(o.Status) != string(st.Status) {
		s.core.log.Error("the bank's settlement contradicts the one recorded", "company", co.company, "order", orderID,
			"recorded", o.Status, "bank", st.Status, "reason", st.Reason)
		return conflict("status", "order %s is recorded %s; the bank now says %s", orderID, o.Status, st.Status)
	}
	return nil
}

// StuckOrder is an outgoing order the bank has not answered for Options.MaxSendFailures
// calls in a row. It is still retried; listing it is for an operator to look at the bank.
type StuckOrder struct {
	Company string    `json:"company"`
	ID      string    `json:"id"`
	Kind    OrderKind `json:"kind"`
	Value   int64     `json:"value"` // centavos
	// Failures is how many calls failed in a row; LastError the last one's error.
	Failures   int       `json:"failures"`
	LastError  string    `json:"lastError"`
	StuckSince time.Time `json:"stuckSince"`
	// NextAttempt is when the order is tried again.
	NextAttempt time.Time `json:"nextAttempt"`
	CreatedAt   time.Time `json:"createdAt"`
}

// ListStuckOrders lists the stuck orders of every company, longest stuck first, with their
// total. It is an operator's view: it works across companies, whichever company this
// Service acts for.
func (s *Service) ListStuckOrders(ctx context.Context, p ListParams) ([]StuckOrder, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []StuckOrder
	var total int
	err = s.view(ctx, func(t *txn) error {
		out = nil
		page, err := t.tx.List(collOrderQueue, systemSpace, store.Query{Index: indexStuck, Skip: p.Skip, Limit: p.Limit})
		if err != nil {
			return internal(err)
		}
		total = page.Total
		for _, r := range page.Records {
			var q queueEntry
			if err := decode(r, &q); err != nil {
				return err
			}
			r, err := t.tx.Get(collOrders, q.Company, q.Order)
			if err != nil {
				return storeErr(err, "order")
			}
			var o order
			if err := decode(r, &o); err != nil {
				return err
			}
			if o.StuckSince == nil {
				continue // settled meanwhile
			}
			out = append(out, StuckOrder{Company: q.Company, ID: o.ID, Kind: o.Kind, Value: o.Value, Failures: o.Failures,
				LastError: o.LastError, StuckSince: *o.StuckSince, NextAttempt: o.NextAttempt, CreatedAt: o.CreatedAt})
		}
		return nil
	})
	if err != nil {
		return nil, PageInfo{}, err
	}
	return out, p.info(total), nil
}

// CountStuckOrders is how many orders of every company are stuck (see ListStuckOrders).
func (s *Service) CountStuckOrders(ctx context.Context) (int, error) {
	var n int
	err := s.view(ctx, func(t *txn) error {
		page, err := t.tx.List(collOrderQueue, systemSpace, store.Query{Index: indexStuck})
		n = page.Total
		return internal(err)
	})
	return n, err
}

// migrateOrderRoutes writes the route of every order from before routes, in every company,
// once per database.
func (s *Service) migrateOrderRoutes(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationOrderRoute, func(co *Service) error {
		for skip := 0; ; skip += duePage {
			var n int
			err := co.update(ctx, func(t *txn) error {
				page, err := t.tx.List(collOrders, t.company, store.Query{Index: indexAll, Skip: skip, Limit: duePage, NoTotal: true})
				if err != nil {
					return internal(err)
				}
				n = len(page.Records)
				for _, r := range page.Records {
					var o order
					if err := decode(r, &o); err != nil {
						return err
					}
					if _, err := t.tx.Get(collOrderRoutes, systemSpace, o.ID); err == nil {
						continue
					} else if ok, err := found(storeErr(err, "order")); err != nil || ok {
						return err
					}
					if err := t.routeOrder(o); err != nil {
						return err
					}
					if err := t.routeSettled(o); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil || n < duePage {
				return err
			}
		}
	})
}

// Sandbox reports whether this Service's bank is make-believe (its Rail says so, as
// rail/sandbox does): then no real centavo moves, whatever the records say.
func (s *Service) Sandbox() bool { return rail.IsSandbox(s.core.rail) }

// NewSandboxEndToEndID returns a new endToEndId of a Pix sent by the fictitious sandbox
// bank, in the network's format: "E", SandboxISPB, the Service's time as yyyyMMddHHmm in
// UTC and 11 letters and digits from the Service's id source; 32 characters. The sandbox
// pay route gives it to the Pix it simulates, so that with a ManualClock and a fixed
// Options.IDs its output is the same on every run.
func (s *Service) NewSandboxEndToEndID() string {
	return "E" + SandboxISPB + s.now().Format("200601021504") + s.core.ids.alphanumerics(11)
}

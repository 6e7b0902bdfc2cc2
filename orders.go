package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
)

// Every Pix the company sends out (a refund, cashback, a payment, an account or subaccount
// withdrawal) is one outgoing order, with one state machine:
//
//	hold    the creating (or approving) transaction records the order PENDING and moves its
//	        value (plus any fee) from the source's available book to its blocked book.
//	send    after that transaction commits, the order goes to the Rail, with a context that
//	        does not end with the caller's request (context.WithoutCancel) and at most
//	        SendTimeout long. The Rail is idempotent by the order's id, so sending again is safe.
//	settle  when the Rail answers CONFIRMED the held money leaves (blocked -> Pix network, a
//	        fee -> the fee book); FAILED releases it (blocked -> available). The order's
//	        owner (refund, payment, withdrawal) records the outcome and writes its events in
//	        the same transaction. An order settles once; later answers change nothing.
//
// An order that is not final always has a due time (NextAttempt) and an entry in the order
// queue, a collection of the system space ordered by due time. The creating call owns the
// first send for its lease (the send timeout and a margin); if it never records an answer
// (Send failed, hung, or the process died) the order falls due and the periodic pass
// (RunDue, runOrders) takes it: it claims it in a transaction (Attempts+1, a new lease),
// then calls the Rail again and records the answer.
//
// What the pass asks depends on what the bank said before. A refusal (rail.RefusedError)
// is definite: the order fails at once and its money returns. Any other error leaves the
// outcome unknown (the bank may have acted on a send whose answer was lost), so the order
// is marked Unsure and the next attempt asks Status first; Status answering
// rail.ErrUnknownOrder (the bank never got it) sends it again, which the Rail's idempotence
// by order id makes safe. An accepted order not yet settled is asked again after the Rail's
// poll interval (rail.Poller), or the bank pushes the outcome (RecordSettlement).
//
// Calls that fail are retried with a growing delay (orderBackoff), forever, but not
// silently: after Options.MaxSendFailures failures in a row the order is marked stuck
// (logged, counted by CountStuckOrders, listed by ListStuckOrders); any answer from the
// bank clears the mark, and a final one settles the order as usual. The pass pages through
// the queue by due time, so it reaches every due order of every company without scanning
// companies or orders that are not due.
const (
	collOrders     = "orders"
	collOrderQueue = "order_queue" // in systemSpace: one entry per pending order, by due time
	indexDue       = "due"
	indexStuck     = "stuck"   // order_queue entries of stuck orders, by when they got stuck
	indexPending   = "pending" // a company's orders not yet final, by creation
)

// DefaultSendTimeout bounds one call to the Rail (Send or Status) for an order.
const DefaultSendTimeout = 30 * time.Second

// DefaultMaxSendFailures is how many calls to the Rail about one order may fail in a row
// before the order is marked stuck: with orderBackoff's delays, about 40 minutes of a bank
// that does not answer.
const DefaultMaxSendFailures = 10

const (
	// orderLeaseMargin is added to the send timeout to make the lease: how long a claimed
	// send (or status call) owns an order before the pass may try again. Longer than the
	// call's timeout, so that two calls rarely overlap; when they do, the Rail's idempotence
	// and the order's single settlement keep it safe.
	orderLeaseMargin = 30 * time.Second
	// orderQueuePage is how many due orders the pass reads per transaction.
	orderQueuePage = 100
)

// orderLease is how long a claimed send owns its order: the send timeout and a margin.
func (s *Service) orderLease() time.Duration { return s.core.sendTimeout + orderLeaseMargin }

// orderBackoff is the wait after the n-th failed call in a row: 10 s doubling, at most
// 10 min.
func orderBackoff(n int) time.Duration {
	d := 10 * time.Second << min(max(n-1, 0), 6)
	return min(d, 10*time.Minute)
}

// OrderStatus is where an outgoing order stands.
type OrderStatus string

// Order statuses. PENDING (held; sent or to be sent) moves to CONFIRMED or FAILED once.
const (
	OrderPending   OrderStatus = "PENDING"
	OrderConfirmed OrderStatus = "CONFIRMED"
	OrderFailed    OrderStatus = "FAILED"
)

// order is an outgoing Pix as the Service keeps it. Its id is the id of its owner (the
// refund, payment or withdrawal), which is also the id the Rail is idempotent by.
type order struct {
	ID     string     `json:"id"`
	Kind   OrderKind  `json:"kind"`
	Source holdSource `json:"source"`
	Value  int64      `json:"value"`
	// Fee is taken to the fee book when the order is confirmed; it is held with Value.
	Fee        int64          `json:"fee,omitempty"`
	Key        string         `json:"key,omitempty"`
	KeyType    brcode.KeyType `json:"keyType,omitempty"`
	Account    *BankAccount   `json:"account,omitempty"`
	EndToEndID string         `json:"endToEndId,omitempty"` // a refund: the Pix it refunds
	Comment    string         `json:"comment,omitempty"`
	Status     OrderStatus    `json:"status"`
	// Accepted says the Rail has answered Send (with PENDING): the pass asks Status.
	Accepted bool `json:"accepted,omitempty"`
	// Unsure says a call failed without a refusal, so the bank may have acted: the pass
	// asks Status before sending again.
	Unsure      bool      `json:"unsure,omitempty"`
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"nextAttempt"`
	LastError   string    `json:"lastError,omitempty"`
	// Failures counts the calls to the Rail that failed in a row; StuckSince is set when
	// they reached the limit (Options.MaxSendFailures), until the bank answers.
	Failures   int        `json:"failures,omitempty"`
	StuckSince *time.Time `json:"stuckSince,omitempty"`
	// BankRef is the bank's id for the order, once it gave one; Detail its own words about
	// the outcome.
	BankRef string `json:"bankRef,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Returned is how much of a confirmed order the receiving side sent back
	// (payout_returns.go).
	Returned int64 `json:"returned,omitempty"`
	// The settlement, once final.
	SettledEndToEndID string    `json:"settledEndToEndId,omitempty"`
	Reason            string    `json:"reason,omitempty"`
	SentAt            time.Time `json:"sentAt"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

func (o order) pix() PixOrder {
	p := PixOrder{ID: o.ID, Kind: o.Kind, EndToEndID: o.EndToEndID, Key: o.Key, KeyType: o.KeyType,
		Value: o.Value, Comment: o.Comment, SentAt: o.SentAt, BankRef: o.BankRef}
	if o.Account != nil {
		a := *o.Account
		p.Account = &a
	}
	return p
}

func (o order) indexes() []store.Index {
	ix := []store.Index{byCreation(o.CreatedAt)}
	if o.Status == OrderPending {
		ix = append(ix, store.Index{Name: indexPending, Sort: sortTime(o.CreatedAt) + "|" + o.ID})
	}
	return ix
}

// queueEntry is an order's place in the order queue (system space).
type queueEntry struct {
	Company string `json:"company"`
	Order   string `json:"order"`
}

// queueIndexes are a pending order's entries in the queue's indexes: by due time, and by
// when it got stuck while it is.
func (o order) queueIndexes(company string) []store.Index {
	ix := []store.Index{{Name: indexDue, Sort: queueSort(o.NextAttempt, company, o.ID)}}
	if o.StuckSince != nil {
		ix = append(ix, store.Index{Name: indexStuck, Sort: queueSort(*o.StuckSince, company, o.ID)})
	}
	return ix
}

func queueID(company, orderID string) string { return company + "|" + orderID }

// queueSort orders the queue by due time; company and order make it unique, so that the
// pass can resume just after the last entry it read.
func queueSort(due time.Time, company, orderID string) string {
	return sortTime(due) + "|" + company + "|" + orderID
}

// createOrder records o PENDING, holds its value and fee on its source, puts it in the
// queue, and schedules its first send for after the commit. It fails with the hold's
// precondition error on "value" when the source's available balance is short; the caller
// words it. o carries ID, Kind, Source, Value, Fee and destination.
func (t *txn) createOrder(o order) error {
	o.Status, o.SentAt, o.CreatedAt, o.UpdatedAt = OrderPending, t.now, t.now, t.now
	o.Attempts, o.NextAttempt = 1, t.now.Add(t.svc.orderLease()) // this call owns the first send
	if _, err := t.holdOn(o.Source, o.Value+o.Fee, strings.ToLower(string(o.Kind))+".hold", o.ID); err != nil {
		return err
	}
	if err := t.saveOrder(o, true); err != nil {
		return err
	}
	if err := t.routeOrder(o); err != nil {
		return err
	}
	t.after(func(ctx context.Context) { t.svc.sendOrder(ctx, o) })
	return nil
}

// saveOrder writes the order and keeps its queue entry in step: present, at NextAttempt,
// while it is pending; gone once it is final.
func (t *txn) saveOrder(o order, insert bool) error {
	var err error
	if insert {
		err = t.insert(collOrders, o.ID, "order", o, nil, o.indexes())
	} else {
		err = t.put(collOrders, o.ID, "order", o, nil, o.indexes())
	}
	if err != nil {
		return err
	}
	qid := queueID(t.company, o.ID)
	if o.Status != OrderPending {
		return t.dequeue(collOrderQueue, qid)
	}
	// not insert: replaced, or inserted for an order adopted by migrateOrders, which had none
	return t.enqueue(collOrderQueue, qid, queueEntry{Company: t.company, Order: o.ID}, o.queueIndexes(t.company), insert)
}

func (t *txn) orderByID(id string) (order, error) {
	var o order
	err := t.get(collOrders, id, "order", &o)
	return o, err
}

// sendOrder calls the Rail about o (Send, or Status first when the bank accepted it or may
// have) with a context detached from ctx's cancellation and bounded by the send timeout,
// and records the answer. It reports whether the order reached a final status. Failures
// are logged: the order stays due, and the pass tries again.
func (s *Service) sendOrder(ctx context.Context, o order) bool {
	ctx = context.WithoutCancel(ctx) // the request may end; the order's send and record go on
	railCtx, cancel := context.WithTimeout(ctx, s.core.sendTimeout)
	defer cancel()
	var st Settlement
	var err error
	if o.Accepted || o.Unsure {
		st, err = s.core.rail.Status(railCtx, o.pix())
		if errors.Is(err, rail.ErrUnknownOrder) {
			if o.Accepted {
				s.core.log.Warn("the bank no longer knows an order it accepted; sending it again", "company", s.company, "order", o.ID)
			}
			st, err = s.core.rail.Send(railCtx, o.pix())
		}
	} else {
		st, err = s.core.rail.Send(railCtx, o.pix())
	}
	final, rerr := s.recordOrder(ctx, o.ID, st, err)
	if rerr != nil {
		s.core.log.Warn("order answer not recorded; the periodic pass will retry", "order", o.ID, "err", rerr)
	}
	if _, refused := rail.AsRefused(err); err != nil && !refused {
		s.core.log.Warn("order not sent; the periodic pass will retry", "order", o.ID, "kind", o.Kind, "err", err)
	}
	return final
}

// recordOrder records the Rail's answer about an order: a refusal fails it; a failure to
// reach the bank or a pending answer reschedules it; a final answer settles or releases
// its money and lets its owner record the outcome, once.
func (s *Service) recordOrder(ctx context.Context, id string, st Settlement, railErr error) (bool, error) {
	var final bool
	var stuck *order
	err := s.update(ctx, func(t *txn) error {
		final, stuck = false, nil
		o, err := t.orderByID(id)
		if err != nil || o.Status != OrderPending {
			return err // settled already: nothing to do
		}
		o.UpdatedAt = t.now
		st := st
		callErr := railErr
		if r, ok := rail.AsRefused(callErr); ok {
			callErr, st = nil, Settlement{Status: SettlementFailed, Reason: r.Reason, Detail: r.Detail, At: t.now}
		}
		switch {
		case callErr != nil:
			o.LastError = ErrorMessage(fromRail(callErr))
			if o.LastError == "internal error" {
				o.LastError = callErr.Error()
			}
			o.Unsure = true
			o.Failures++
			o.NextAttempt = t.now.Add(orderBackoff(o.Failures))
			if o.Failures >= t.svc.core.maxSendFailures && o.StuckSince == nil {
				at := t.now
				o.StuckSince = &at
				stuck = &o
			}
			return t.saveOrder(o, false)
		case st.Status == SettlementPending:
			o.Accepted, o.Unsure, o.LastError, o.Failures, o.StuckSince = true, false, "", 0, nil
			if st.BankRef != "" {
				o.BankRef = st.BankRef
			}
			o.NextAttempt = t.now.Add(t.svc.core.pollInterval)
			return t.saveOrder(o, false)
		case !st.Status.Final():
			return internal(fmt.Errorf("rail: order %s: unknown settlement status %q", id, st.Status))
		}
		final = true
		return t.settleOrder(o, st)
	})
	if err == nil && stuck != nil {
		s.core.log.Error("order stuck: the bank has not answered; still retrying", "company", s.company, "order", stuck.ID,
			"kind", stuck.Kind, "value", stuck.Value, "failures", stuck.Failures, "err", stuck.LastError)
	}
	return final, err
}

// settleOrder makes a pending order final with the Rail's settlement: its money leaves or
// returns, and its owner records the outcome and its events, in this transaction.
func (t *txn) settleOrder(o order, st Settlement) error {
	kind := strings.ToLower(string(o.Kind))
	if st.Status == SettlementConfirmed {
		to := []Posting{{Book: bookPixNetwork, Amount: o.Value}}
		if o.Fee > 0 {
			to = append(to, Posting{Book: bookFees, Amount: o.Fee})
		}
		if _, err := t.resolveHold(o.Source, kind+".settle", o.ID, to...); err != nil {
			return err
		}
		o.Status, o.SettledEndToEndID = OrderConfirmed, st.EndToEndID
	} else {
		if _, err := t.resolveHold(o.Source, kind+".release", o.ID, Posting{Book: o.Source.available(), Amount: o.Value + o.Fee}); err != nil {
			return err
		}
		o.Status, o.Reason = OrderFailed, st.Reason
		if o.Reason == "" {
			o.Reason = ReasonBankError
		}
		o.SettledEndToEndID = st.EndToEndID
	}
	if st.BankRef != "" {
		o.BankRef = st.BankRef
	}
	o.Detail = st.Detail
	o.LastError, o.Unsure, o.Failures, o.StuckSince = "", false, 0, nil
	if err := t.saveOrder(o, false); err != nil {
		return err
	}
	if err := t.routeSettled(o); err != nil {
		return err
	}
	settled, ok := orderOwners[o.Kind]
	if !ok {
		return internal(fmt.Errorf("order %s: unknown kind %q", o.ID, o.Kind))
	}
	return settled(t, o)
}

// orderOwners are, by kind, the nouns that make orders: each records the outcome of its
// order and writes its events in the transaction that settles it. A new kind of order is a
// row here and its owner's function in its own file.
var orderOwners = map[OrderKind]func(*txn, order) error{
	OrderRefund:     (*txn).refundSettled,     // refunds.go (cashback's too)
	OrderPayment:    (*txn).paymentSettled,    // payments_out.go
	OrderWithdrawal: (*txn).withdrawalSettled, // withdrawals.go
}

// claimOrder takes a due order for one more attempt: it bumps Attempts and moves its due
// time a lease ahead, so that no other pass takes it meanwhile. ok is false when the order
// is final (its stale queue entry is dropped) or not due.
func (s *Service) claimOrder(ctx context.Context, id string) (order, bool, error) {
	var o order
	var ok bool
	err := s.update(ctx, func(t *txn) error {
		o, ok = order{}, false
		var err error
		if o, err = t.orderByID(id); err != nil {
			if ErrorCode(err) == ENOTFOUND { // a queue entry without its order: drop it
				return t.dequeue(collOrderQueue, queueID(t.company, id))
			}
			return err
		}
		if o.Status != OrderPending {
			return t.saveOrder(o, false) // drops the queue entry
		}
		if o.NextAttempt.After(t.now) {
			return nil
		}
		o.Attempts++
		o.NextAttempt, o.UpdatedAt = t.now.Add(t.svc.orderLease()), t.now
		ok = true
		return t.saveOrder(o, false)
	})
	return o, ok, err
}

// advanceOrder claims the order id if it is due and calls the Rail about it; it reports
// whether the order became final.
func (s *Service) advanceOrder(ctx context.Context, id string) (bool, error) {
	o, ok, err := s.claimOrder(ctx, id)
	if err != nil || !ok {
		return false, err
	}
	return s.sendOrder(ctx, o), nil
}

// runOrders is the order part of the periodic pass: it pages through the order queue of
// every company, by due time, up to now, and advances each due order. It returns how many
// orders became final. A failure on one order is logged and does not stop the rest; the
// first is returned.
func (s *Service) runOrders(ctx context.Context) (int, error) {
	now := s.now()
	to := sortTime(now) + "~" // every entry due at or before now ('~' sorts after '|')
	from := ""
	n := 0
	var first error
	for {
		var page []queueEntry
		var next string
		err := s.view(ctx, func(t *txn) error {
			var err error
			page, next, err = keysetPageOf[queueEntry](t, collOrderQueue, systemSpace,
				store.Query{Index: indexDue, From: from, To: to, Limit: orderQueuePage, NoTotal: true})
			return err
		})
		if err != nil {
			return n, err
		}
		from = next
		for _, q := range page {
			if err := ctx.Err(); err != nil {
				return n, internal(err)
			}
			co := &Service{core: s.core, company: q.Company}
			final, err := co.advanceOrder(ctx, q.Order)
			if err != nil {
				s.core.log.Error("advancing order", "company", q.Company, "order", q.Order, "err", err)
				if first == nil {
					first = err
				}
				continue
			}
			if final {
				n++
			}
		}
		if len(page) < orderQueuePage {
			return n, first
		}
	}
}

// companyOrders advances every due pending order of this company that keep accepts, paging
// through the company's pending index; it returns how many became final.
func (s *Service) companyOrders(ctx context.Context, keep func(order) bool) (int, error) {
	from := ""
	n := 0
	for {
		var page []order
		var next string
		err := s.view(ctx, func(t *txn) error {
			var err error
			page, next, err = keysetPageOf[order](t, collOrders, t.company,
				store.Query{Index: indexPending, From: from, Limit: orderQueuePage, NoTotal: true})
			return err
		})
		if err != nil {
			return n, err
		}
		from = next
		for _, o := range page {
			if !keep(o) {
				continue
			}
			final, err := s.advanceOrder(ctx, o.ID)
			if err != nil {
				return n, err
			}
			if final {
				n++
			}
		}
		if len(page) < orderQueuePage {
			return n, nil
		}
	}
}

// migrateOrders gives every refund left IN_PROCESSING by a version without the order
// machine its order, in every company, once per database (see migrateOnce).
func (s *Service) migrateOrders(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationOrders1, func(co *Service) error {
		_, err := co.adoptRefunds(ctx)
		return err
	})
}

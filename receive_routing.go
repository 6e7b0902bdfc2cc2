package payments

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
)

// Receiving a Pix from the bank. A bank (a rail.Collector's listing, a PSP's webhook)
// reports a Pix by what the payer's code carried, a txid, and by the key it was sent to,
// never by company. ReceiveBankPix finds the company in the system space and records the
// Pix there as that company's ReceivePix would, in one store transaction:
//
//  1. an endToEndId a company already recorded goes to that record (collReceivedPix):
//     the same Pix is never recorded twice, in one company or in two;
//  2. one kept unmatched before is that record (unmatched_pix.go);
//  3. a txid of a charge goes to the company that issued it (collTxidRoutes), whatever
//     key the Pix names: the charge is what the payer paid;
//  4. otherwise the key goes to the company that holds it (the registry, pixkeys.go);
//  5. a Pix that finds no company is kept unmatched, for an operator to assign.
//
// A static QR code's identifier is chosen by its company and may repeat in others, so it
// routes nothing by itself: the key finds the company, and the company's ReceivePix finds
// the code.
const (
	// collTxidRoutes holds, in the system space, one record per charge txid: the company
	// whose charge it is. Written with the charge, kept when the charge is deleted (a late
	// Pix for it is credited to its company all the same, see ReceivePix).
	collTxidRoutes = "txid_routes"
	// collReceivedPix holds, in the system space, one record per endToEndId any company
	// recorded (receivePix writes it with the transaction): which company did.
	collReceivedPix = "received_pix"

	// migrationTxidRoutes1: charges from before the routes get theirs.
	migrationTxidRoutes1 = "txid-routes-1"
	// migrationReceivedPix1: received Pix from before the registry are recorded in it.
	migrationReceivedPix1 = "received-pix-1"
)

// companyRoute is a system-space record that leads to a company: a txid route or a
// received Pix.
type companyRoute struct {
	Company string `json:"company"`
}

// RoutedPix is where ReceiveBankPix put a Pix: in a company (CompanyID and its
// Transaction) or, when it found none, kept unmatched (Unmatched).
type RoutedPix struct {
	// CompanyID is the company that recorded the Pix; "" when it is unmatched.
	CompanyID string
	// Transaction is the company's record of the Pix; the zero Transaction when unmatched.
	Transaction Transaction
	// Unmatched is the record of a Pix that routed to no company, waiting for an operator
	// (AssignUnmatchedPix); nil when a company recorded it.
	Unmatched *UnmatchedPix
	// New says this call recorded the Pix (in a company, or unmatched). False means an
	// earlier call had, with this endToEndId, and nothing changed.
	New bool
}

// ReceiveBankPix records a Pix the bank received, finding the company it is for: by its
// txid, the company whose charge carries it; otherwise by the key it was sent to, the
// company that holds the key (Pix keys are unique across companies). There it is recorded
// exactly as that company's ReceivePix records it (the transaction, the ledger entry, the
// charge's completion, the events), with the key when it is that company's (so a Pix to
// an account's key lands there) and the company's own key otherwise. A
// Pix that finds no company is kept unmatched (ListUnmatchedPix, AssignUnmatchedPix):
// money is never dropped.
//
// It works across companies: the company this Service acts for does not matter, and any
// company's Service gives the same answer. It is for a bank connector and the
// reconciliation (Reconcile), never for a company's own caller: the answer names the
// company that got the Pix.
//
// It is idempotent by endToEndId, across companies: the same Pix again (a webhook and
// later the reconciliation) returns the first record, with New false, and changes nothing;
// the same endToEndId with another value is a conflict on "endToEndId". The look-ups and
// the recording are one store transaction, so a key moving to another company meanwhile
// cannot split a Pix between two.
func (s *Service) ReceiveBankPix(ctx context.Context, p rail.ReceivedPix) (RoutedPix, error) {
	var out RoutedPix
	err := s.update(ctx, func(t *txn) error {
		var err error
		out, err = t.receiveBankPix(p)
		return err
	})
	return result(out, err)
}

// bankPixParams is p as ReceivePix takes it, without a key (routing decides it).
func bankPixParams(p rail.ReceivedPix) ReceivePixParams {
	rp := ReceivePixParams{EndToEndID: p.EndToEndID, Value: p.Value, Time: p.At, TxID: p.TxID, InfoPagador: p.Message}
	if p.PayerName != "" || p.PayerTaxID != "" {
		rp.Payer = &Payer{Name: p.PayerName, TaxID: p.PayerTaxID}
	}
	return rp
}

func (t *txn) receiveBankPix(p rail.ReceivedPix) (RoutedPix, error) {
	rp := bankPixParams(p)
	e2e, err := cleanString("endToEndId", rp.EndToEndID, MaxEndToEndID)
	if err != nil {
		return RoutedPix{}, err
	}
	if e2e == "" {
		return RoutedPix{}, invalid("endToEndId", "endToEndId is required")
	}
	rp.EndToEndID = e2e
	if err := checkCentavos("value", rp.Value, false); err != nil {
		return RoutedPix{}, err
	}
	if company, ok, err := t.routeOf(collReceivedPix, e2e); err != nil {
		return RoutedPix{}, err
	} else if ok { // recorded before: receivePix returns that record, or refuses another value
		x, err := t.receiveIn(company, rp)
		return RoutedPix{CompanyID: company, Transaction: x}, err
	}
	if u, ok, err := t.unmatchedPix(e2e); err != nil {
		return RoutedPix{}, err
	} else if ok {
		if u.Value != rp.Value {
			return RoutedPix{}, conflict("endToEndId", "a different Pix with endToEndId %s was already received", e2e)
		}
		return RoutedPix{Unmatched: &u}, nil
	}
	txid, err := cleanString("txid", rp.TxID, 64)
	if err != nil {
		return RoutedPix{}, err
	}
	company, _, err := t.routeOf(collTxidRoutes, routeTxid(txid))
	if err != nil {
		return RoutedPix{}, err
	}
	key, owner := "", pixKeyOwner{}
	if k, _, err := parsePixKey("pixKey", p.Key, ""); err == nil { // a key that is no key is no one's
		key = k
		if owner, _, err = t.pixKeyOwnerOf(k); err != nil {
			return RoutedPix{}, err
		}
	}
	if company == "" {
		company = owner.Company
	}
	if company == "" {
		u, err := t.keepUnmatched(rp, p.Key)
		return RoutedPix{Unmatched: &u, New: true}, err
	}
	if owner.Company == company {
		rp.PixKey = key // the company's own key, or one of its accounts'
	}
	x, err := t.receiveIn(company, rp)
	return RoutedPix{CompanyID: company, Transaction: x, New: true}, err
}

// routeTxid is the txid a route is kept under for a Pix's txid: itself, or, for a charge's
// full transactionID (which a Pix may carry instead, see txidLookupKeys), the txid it
// implies.
func routeTxid(txid string) string {
	if len(txid) == 32 && txidImplied(txid) {
		return txid[:25]
	}
	return txid
}

// routeOf reads the company a system-space route of coll (collTxidRoutes,
// collReceivedPix) leads id to; ok is false when there is none.
func (t *txn) routeOf(coll, id string) (company string, ok bool, err error) {
	if id == "" || len(id) > MaxEndToEndID {
		return "", false, nil // no such route is ever written
	}
	r, err := t.tx.Get(coll, systemSpace, id)
	if ok, err := found(storeErr(err, "route")); err != nil || !ok {
		return "", false, err
	}
	var c companyRoute
	if err := decode(r, &c); err != nil {
		return "", false, err
	}
	return c.Company, true, nil
}

// receiveIn records p in company as its ReceivePix does, in t's transaction.
func (t *txn) receiveIn(company string, p ReceivePixParams) (Transaction, error) {
	var x Transaction
	err := t.asCompany(company, func(ct *txn) error {
		var err error
		x, err = ct.receivePix(p)
		return err
	})
	return x, err
}

// asCompany runs fn in t's store transaction acting for the company id, as a call of that
// company's Service would: its work after the commit (an order's send, a webhook's wake)
// runs as that company's, with t's.
func (t *txn) asCompany(id string, fn func(*txn) error) error {
	ct := &txn{svc: &Service{core: t.svc.core, company: id}, tx: t.tx, company: id, now: t.now}
	err := fn(ct)
	t.afterCommit = append(t.afterCommit, ct.afterCommit...)
	return err
}

// addTxidRoute records that the txid of a new charge is the transaction's company's, so
// that a bank's Pix carrying it finds the company (ReceiveBankPix). createCharge calls it
// with the charge. Two charges never share a txid (ids.go): one already routed is a bug,
// and the charge is not created.
func (t *txn) addTxidRoute(txid string) error {
	r, err := encode(txid, companyRoute{Company: t.company}, nil, nil)
	if err != nil {
		return err
	}
	err = t.tx.Insert(collTxidRoutes, systemSpace, r)
	if errors.Is(err, store.ErrConflict) {
		return internal(fmt.Errorf("txid %s of a new charge routes to another charge already", txid))
	}
	return storeErr(err, "txid route")
}

// registerReceivedPix records that the transaction's company recorded the Pix e2e;
// receivePix calls it with each new Pix. One another company recorded is a conflict on
// "endToEndId".
func (t *txn) registerReceivedPix(e2e string) error {
	r, err := encode(e2e, companyRoute{Company: t.company}, nil, nil)
	if err != nil {
		return err
	}
	err = t.tx.Insert(collReceivedPix, systemSpace, r)
	if errors.Is(err, store.ErrConflict) {
		return conflict("endToEndId", "a Pix with endToEndId %s was already received by another company", e2e)
	}
	return storeErr(err, "received Pix")
}

// migrateTxidRoutes gives every charge of every company made before the routes existed
// its route, once per database (see migrateOnce). Charges deleted before then have no
// record left to list: a late Pix for one routes by its key.
func (s *Service) migrateTxidRoutes(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationTxidRoutes1, func(co *Service) error {
		return eachBatch(ctx, co, collCharges, indexAll, func(t *txn, _ string, c *Charge) error {
			return t.backfillRoute(collTxidRoutes, c.txid(), "charge txid")
		})
	})
}

// migrateReceivedPix records in collReceivedPix, once per database (see migrateOnce), the
// Pix every company received before it existed.
func (s *Service) migrateReceivedPix(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationReceivedPix1, func(co *Service) error {
		return eachBatch(ctx, co, collTransactions, indexAll, func(t *txn, _ string, x *Transaction) error {
			if x.Type != TransactionPayment || x.EndToEndID == "" {
				return nil
			}
			return t.backfillRoute(collReceivedPix, x.EndToEndID, "endToEndId")
		})
	})
}

// backfillRoute writes the route of id in coll to the transaction's company unless there
// is one: the company's own is left as it is, another company's (older data with one id
// in two companies; companies are migrated in creation order, so the first keeps it) is
// left too, with a warning naming what (a "charge txid", an "endToEndId").
func (t *txn) backfillRoute(coll, id, what string) error {
	company, ok, err := t.routeOf(coll, id)
	switch {
	case err != nil:
		return err
	case ok && company != t.company:
		mine := t.company
		t.after(func(context.Context) {
			t.svc.core.log.Warn("one "+what+" in two companies: the first keeps it", "id", id, "company", mine, "holder", company)
		})
		return nil
	case ok || id == "" || len(id) > MaxEndToEndID:
		return nil
	}
	r, err := encode(id, companyRoute{Company: t.company}, nil, nil)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Insert(coll, systemSpace, r), "route")
}

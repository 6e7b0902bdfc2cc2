package payments

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"runtime"
	"sync"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Work before the transaction. The store runs write transactions one after another (on
// bolt, one group-commit writer for every caller), so what a transaction function computes
// is the throughput limit. A charge's BR Code, record encoding and event payload do not
// need the transaction: they depend on the parameters, the time, the ids and a few records
// (the company, its default account and books). CreateCharge and the due pass therefore
// build them first, from a read snapshot (or, for CreateCharge, the records the company's
// last preparation read: prepare_reads.go), on the caller's goroutine; the transaction then
// reads those records again and uses the prepared work only where what it read, or
// computed, equals what the work was done from, and does it again otherwise. The result
// is the same as doing everything inside, so the transaction stays a pure function of
// what it reads, however often the store runs it.

// chargePrep is a charge prepared before its transaction, from one snapshot or read set.
type chargePrep struct {
	params  CreateChargeParams // what it was built from (without ids and prep)
	ids     *chargeIDs
	now     time.Time // the time it was built at, the transaction's
	company []byte    // the company record the charge was built from
	charge  Charge    // built (buildCharge), without a linked customer

	stored  Charge // as stored, with its customer
	data    []byte // stored, encoded
	keys    []string
	indexes []store.Index
	link    store.Record // its paymentlinks record (chargeLinkRecord)

	owner   eventCompany // the company and account the event shows
	account Account
	event   *encodedEvent // its CHARGE_CREATED, of stored as presented at now

	// reads are the records it was prepared from, nil if they are not known (readsUnchanged).
	reads readSet
}

// prepareCharge builds p's charge from the records it reads, at now, with p's ids, and, unless
// a customer is still to be linked (p.Customer), its record and event payload. It returns
// nil when there is nothing to prepare (invalid parameters, a subaccount or splits to
// check, a store error): the transaction then does all the work.
//
// It prepares from the records the company's last preparation read, if it has them and
// they answer every read (prepare_reads.go), and otherwise from a read transaction, whose
// reads it then keeps for the next.
func (s *Service) prepareCharge(ctx context.Context, now time.Time, p CreateChargeParams) *chargePrep {
	if set := s.core.reads.get(s.company); set != nil {
		tx := &replayTx{set: set}
		prep := (&txn{svc: s, tx: tx, company: s.company, now: now}).prepareCharge(p)
		if !tx.missed {
			if prep != nil {
				prep.reads = set
			}
			return prep
		}
	}
	var prep *chargePrep
	rec := &recordTx{set: make(readSet)}
	_ = s.core.store.View(ctx, func(tx store.Tx) error {
		rec.Tx = tx
		prep = (&txn{svc: s, tx: rec, company: s.company, now: now}).prepareCharge(p)
		return nil
	})
	if prep != nil && prep.event != nil && !rec.spoiled {
		s.core.reads.put(s.company, rec.set)
		prep.reads = rec.set
	}
	return prep
}

func (t *txn) prepareCharge(p CreateChargeParams) *chargePrep {
	if p.ids == nil || p.Subaccount != "" || len(p.Splits) > 0 {
		return nil // splits and subaccounts are checked in the transaction; rare
	}
	corr, err := cleanCorrelationID("correlationID", p.CorrelationID, true)
	if err != nil {
		return nil
	}
	r, err := t.tx.Get(collCompanies, systemSpace, t.company)
	if err != nil {
		return nil
	}
	prep := &chargePrep{ids: p.ids, now: t.now, company: r.Data}
	if err = t.buildCharge(&prep.charge, corr, &p); err != nil {
		return nil
	}
	prep.params = p.bare()
	if p.Customer != nil {
		return prep // linking may create the customer: done in the transaction
	}
	t.encodePrepared(prep, p.customer)
	return prep
}

// encodePrepared encodes prep's charge, linked to customer if not nil, as stored, and its
// CHARGE_CREATED, into prep (see chargePrep), leaving prep.data nil if it could not.
//
// It is prepareCharge's second half, and the charges are built in prep and ev, on the
// heap: a Charge is 656 bytes, and with its copies on the stack, in one function, a create
// outgrew the caller's first stack, and grew it again at every call after the collector
// shrank it (BenchmarkCreateChargeCallers).
func (t *txn) encodePrepared(prep *chargePrep, customer *Customer) {
	prep.stored = prep.charge
	c := &prep.stored
	if customer != nil {
		cust := *customer
		c.Customer = &cust
	}
	prep.data = appendChargeRecord(make([]byte, 0, 2048), c) // marshal, with no copy of *c; a charge's record is about 0.8 KB
	var err error
	if prep.link, err = t.chargeLinkRecord(c); err != nil {
		prep.data = nil
		return
	}
	prep.keys, prep.indexes = c.keys(), c.indexes()
	co, acct, err := t.eventOwner()
	if err != nil || c.Subscription != "" {
		return // a subscription's payload carries it, read in the transaction (emitCharge)
	}
	ev := &chargeEvent{Charge: *c, Company: co.eventRef(), Account: acct}
	t.present(&ev.Charge)
	e, err := encodeEventOf(t.svc.EventName(EventChargeCreated), t.now, ev)
	if err != nil {
		return
	}
	prep.event, prep.owner, prep.account = &e, *ev.Company, *acct
}

// bare is p without what is prepared for it.
func (p CreateChargeParams) bare() CreateChargeParams {
	p.ids, p.prep = nil, nil
	return p
}

// prepKey names a prepared charge: its company and correlationID.
type prepKey struct{ company, correlationID string }

// prepareDue prepares, at now, the charges the due entries of page will generate (every
// started period of each subscription, as the snapshot shows it), on every core: a share
// of the page per goroutine, each in one read transaction.
func (s *Service) prepareDue(ctx context.Context, now time.Time, page []dueEntry) map[prepKey]*chargePrep {
	workers := min(runtime.GOMAXPROCS(0), len(page))
	if s.core.seeded {
		workers = 1 // the charges draw their ids in page order (Options.IDs)
	}
	parts := make([]map[prepKey]*chargePrep, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			out := make(map[prepKey]*chargePrep)
			_ = s.core.store.View(ctx, func(tx store.Tx) error {
				for i := w; i < len(page); i += workers {
					if e := page[i]; e.Kind == dueSubscription {
						co := &Service{core: s.core, company: e.Company}
						(&txn{svc: co, tx: tx, company: e.Company, now: now}).prepareSubscription(e.ID, out)
					}
				}
				return nil
			})
			parts[w] = out
		})
	}
	wg.Wait()
	all := parts[0]
	for _, m := range parts[1:] {
		maps.Copy(all, m)
	}
	return all
}

// prepareSubscription prepares the charges of the started periods of the subscription id
// into out.
func (t *txn) prepareSubscription(id string, out map[prepKey]*chargePrep) {
	r, err := t.subscriptionByID(id)
	if err != nil || r.Status != SubscriptionActive || r.NextChargeDate == nil || r.Mandate != nil { // Pix Automático's generate installments, not charges
		return
	}
	for k := r.Periods; r.InstallmentCount == 0 || k < r.InstallmentCount; k++ {
		start := r.periodStart(k)
		if start.After(t.now) {
			return
		}
		p := r.periodCharge(start)
		p.ids = t.svc.core.ids.chargeIDs(t.now)
		if pr := t.prepareCharge(p); pr != nil {
			out[prepKey{t.company, p.CorrelationID}] = pr
		}
	}
}

// preparedCharge is p's prepared charge if the company it was built from is the company
// as the transaction reads it; asRead says every record it was prepared from is as read
// (readsUnchanged), which its event needs no other check for (emitChargeCreated).
func (t *txn) preparedCharge(p CreateChargeParams) (c Charge, ok, asRead bool) {
	pr := p.prep
	if pr == nil || !pr.now.Equal(t.now) || pr.ids != p.ids || !reflect.DeepEqual(p.bare(), pr.params) {
		return Charge{}, false, false
	}
	if t.readsUnchanged(pr) {
		return pr.charge, true, true
	}
	r, err := t.tx.Get(collCompanies, systemSpace, t.company)
	if err != nil || !bytes.Equal(r.Data, pr.company) {
		t.svc.core.reads.forget(t.company) // prepared from a company since changed
		return Charge{}, false, false
	}
	return pr.charge, true, false
}

// readsUnchanged reports whether every record pr was prepared from (its company, its
// default account and the account's books, as read) is stored as it was read, when the
// store can tell without decoding them (store.DataComparer): the charge and its event are
// then what this transaction would build, and createCharge takes them as they are, with no
// record decoded. Reading and decoding the company twice and the account and its books
// once per create, to compare what they make, was about 3% of the in-process create's CPU
// (BenchmarkCreateChargeCallers), in the writer's goroutine, which every create waits for.
//
// When a record differs, or the store cannot tell, preparedCharge and emitChargeCreated
// compare what the records make, and a company's kept reads that differ are forgotten, so
// that the next charge is prepared from a fresh read.
func (t *txn) readsUnchanged(pr *chargePrep) bool {
	dc, ok := t.tx.(store.DataComparer)
	if !ok || pr.reads == nil {
		return false
	}
	for k, res := range pr.reads {
		if !dc.Unchanged(k.collection, k.company, k.id, k.byKey, res.found, res.r.Data) {
			t.svc.core.reads.forget(t.company)
			return false
		}
	}
	return true
}

// insertCharge stores a new charge c and its paymentlinks record (see collPaymentLinks),
// with pr's encodings, keys and index entries if pr is not nil: c is then pr.stored
// (createCharge).
func (t *txn) insertCharge(c Charge, pr *chargePrep) error {
	var link store.Record
	if pr == nil {
		if err := t.insert(collCharges, c.ID, "charge", chargeRecord{&c}, c.keys(), c.indexes()); err != nil {
			return err
		}
		var err error
		if link, err = t.chargeLinkRecord(&c); err != nil {
			return err
		}
	} else {
		r := store.Record{ID: c.ID, Data: pr.data, Keys: pr.keys, Indexes: pr.indexes}
		if err := storeErr(t.tx.Insert(collCharges, t.company, r), "charge"); err != nil {
			return err
		}
		link = pr.link
	}
	return storeErr(t.tx.Insert(collPaymentLinks, systemSpace, link), "payment link")
}

// emitChargeCreated emits c's CHARGE_CREATED: pr's event if pr is not nil (see insertCharge)
// and every record it was prepared from is as read (asRead, from preparedCharge: nothing a
// create writes in between changes them) or the company and account are as they were
// prepared; else as emitCharge does.
func (t *txn) emitChargeCreated(c Charge, pr *chargePrep, asRead bool) error {
	if pr == nil || pr.event == nil {
		return t.emitCharge(EventChargeCreated, c)
	}
	if asRead {
		return t.emitEncoded(*pr.event)
	}
	co, acct, err := t.eventOwner()
	if err != nil {
		return err
	}
	ref := co.eventRef()
	if *ref != pr.owner || *acct != pr.account {
		t.svc.core.reads.forget(t.company) // prepared from an account since changed (its balance)
		return t.emit(EventChargeCreated, &chargeEvent{Charge: c, Company: ref, Account: acct})
	}
	return t.emitEncoded(*pr.event)
}

package payments

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

// A transaction's webhook audit (Transaction.WebhookSent) and the hasWebhook filter live
// beside it, in a small record of its own with the transaction's record id
// (transactionWebhooks), written with the transaction and again each time a webhook's
// delivery of an event carrying it ends. The transaction itself is not written again:
// before, each delivery rewrote the whole Pix (about 1.4 KB, with its charge) and moved
// its hasWebhook index entries, the charge's own among them (BenchmarkWebhookDeliveryFloor
// wrote 18 KB of pages per delivery with that, 11.7 KB with this; 6.7 KB with no audit).
const collTransactionWebhooks = "transactionWebhooks"

// transactionWebhooks is one transaction's webhook audit, with what its index entries
// need of the transaction: the hasWebhook filter alone, with type, with the static QR
// code, and with both, in the transaction's time order. A charge's or a withdrawal's
// transactions are few (a Pix and its refunds), so ListTransactions filters them by
// hasWebhook itself, with no index entry per charge.
type transactionWebhooks struct {
	ID        string          `json:"-"` // the transaction's record id, as read
	Sent      []WebhookSent   `json:"sent,omitempty"`
	Time      time.Time       `json:"time"`
	Type      TransactionType `json:"type"`
	PixQrCode string          `json:"pixQrCode,omitempty"` // the static QR code's identifier
}

func newTransactionWebhooks(x Transaction) transactionWebhooks {
	w := transactionWebhooks{Time: x.Time, Type: x.Type}
	if x.PixQrCode != nil {
		w.PixQrCode = x.PixQrCode.Identifier
	}
	return w
}

func (w transactionWebhooks) indexes() []store.Index {
	at := sortTime(w.Time)
	hw := "hasWebhook:" + strconv.FormatBool(len(w.Sent) > 0)
	typ := "type:" + string(w.Type)
	ix := []store.Index{{Name: hw, Sort: at}, {Name: typ + "|" + hw, Sort: at}}
	if w.PixQrCode != "" {
		q := "pixQrCode:" + w.PixQrCode
		ix = append(ix, store.Index{Name: q + "|" + hw, Sort: at}, store.Index{Name: q + "|" + typ + "|" + hw, Sort: at})
	}
	return ix
}

// insertTransaction stores the new transaction x and its (empty) webhook audit.
func (t *txn) insertTransaction(x Transaction) error {
	x.WebhookSent = nil
	if err := t.insert(collTransactions, x.ID, "transaction", x, x.keys(), x.indexes()); err != nil {
		return err
	}
	w := newTransactionWebhooks(x)
	return t.insert(collTransactionWebhooks, x.ID, "transaction", w, nil, w.indexes())
}

// withWebhookSent sets x.WebhookSent to x's webhook audit.
func (t *txn) withWebhookSent(x *Transaction) error {
	var w transactionWebhooks
	ok, err := found(t.get(collTransactionWebhooks, x.ID, "transaction", &w))
	if err != nil {
		return err
	}
	if ok {
		x.WebhookSent = w.Sent
	}
	return nil
}

// appendWebhookSent adds sent to the webhook audit of the transaction with endToEndId
// e2e, if there is one. It reads the audit afresh, so a rerun of t appends once, and it
// reads the transaction only to make its audit record if it has none (one stored by an
// older process that shares the store).
func (t *txn) appendWebhookSent(e2e string, sent WebhookSent) error {
	key := "endToEndId:" + e2e
	var id string
	var err error
	if kr, ok := t.tx.(store.KeyResolver); ok { // the transaction's id alone: its record is not read
		id, err = kr.IDByKey(collTransactions, t.company, key)
	} else {
		var r store.Record
		r, err = t.tx.GetByKey(collTransactions, t.company, key)
		id = r.ID
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return storeErr(err, "transaction")
	}
	var w transactionWebhooks
	if ok, err := found(t.get(collTransactionWebhooks, id, "transaction", &w)); err != nil {
		return err
	} else if !ok { // a transaction stored before its audit had a record of its own
		r, err := t.tx.Get(collTransactions, t.company, id)
		if err != nil {
			return storeErr(err, "transaction")
		}
		var x Transaction
		if err := decode(r, &x); err != nil {
			return internal(err)
		}
		if w, err = t.splitWebhookSent(id, &x); err != nil {
			return err
		}
	}
	w.Sent = append(w.Sent, sent)
	return t.put(collTransactionWebhooks, id, "transaction", w, nil, w.indexes())
}

// splitWebhookSent gives the transaction x (record id id) the layout of this version: its
// webhook audit in its transactionWebhooks record, made if missing, with the entries x
// carries itself (as versions before it stored them) added in time order, and x saved
// without them and without hasWebhook index entries. It returns the audit record.
func (t *txn) splitWebhookSent(id string, x *Transaction) (transactionWebhooks, error) {
	x.ID = id
	var w transactionWebhooks
	ok, err := found(t.get(collTransactionWebhooks, id, "transaction", &w))
	if err != nil {
		return w, err
	}
	if !ok {
		w = newTransactionWebhooks(*x)
	}
	if len(x.WebhookSent) > 0 {
		w.Sent = append(w.Sent, x.WebhookSent...)
		slices.SortStableFunc(w.Sent, func(a, b WebhookSent) int { return a.Time.Compare(b.Time) })
	}
	switch {
	case !ok:
		err = t.insert(collTransactionWebhooks, id, "transaction", w, nil, w.indexes())
	case len(x.WebhookSent) > 0:
		err = t.put(collTransactionWebhooks, id, "transaction", w, nil, w.indexes())
	}
	if err != nil {
		return w, err
	}
	return w, t.saveTransaction(*x)
}

// migrateTransactionWebhooks gives every transaction of every company its
// transactionWebhooks record, once per database (see migrateOnce and splitWebhookSent).
func (s *Service) migrateTransactionWebhooks(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationTransactionWebhooks, func(co *Service) error {
		return eachBatch(ctx, co, collTransactions, indexAll, func(t *txn, id string, x *Transaction) error {
			_, err := t.splitWebhookSent(id, x)
			return err
		})
	})
}

// listByWebhook lists, for ListTransactions, the transactions of the index (indexAll, a
// type's, a static QR code's, or a QR code's and type's) with (has) or without a webhook
// audit entry, through their transactionWebhooks records.
func (t *txn) listByWebhook(index string, has bool, q store.Query) ([]Transaction, int, error) {
	name := "hasWebhook:" + strconv.FormatBool(has)
	if index != indexAll {
		name = index + "|" + name
	}
	q.Index = name
	ws, total, err := list(t, collTransactionWebhooks, q, func(w *transactionWebhooks, id string) { w.ID = id })
	if err != nil {
		return nil, 0, err
	}
	out := make([]Transaction, 0, len(ws))
	for _, w := range ws {
		var x Transaction
		if err := t.get(collTransactions, w.ID, "transaction", &x); err != nil {
			return nil, 0, err
		}
		x.ID, x.WebhookSent = w.ID, w.Sent
		out = append(out, x)
	}
	return out, total, nil
}

// filterByWebhook lists, for ListTransactions, the transactions of a charge's or a
// withdrawal's index with (has) or without a webhook audit entry: it reads them all in
// q's range and order (a charge has a Pix and its refunds) and pages what it keeps.
func (t *txn) filterByWebhook(index string, has bool, q store.Query) ([]Transaction, int, error) {
	return filterList(t, collTransactions, q, func(x *Transaction, id string) { x.ID = id }, func(x *Transaction) (bool, error) {
		if err := t.withWebhookSent(x); err != nil {
			return false, err
		}
		return len(x.WebhookSent) > 0 == has, nil
	})
}

// isSmallIndex says whether ListTransactions filters the index's transactions by
// hasWebhook itself (filterByWebhook): a charge's or a withdrawal's, alone or with a type.
func isSmallIndex(index string) bool {
	return strings.HasPrefix(index, "charge:") || strings.HasPrefix(index, "withdrawal:")
}

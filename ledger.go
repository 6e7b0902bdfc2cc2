package payments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

// The ledger is double entry, per company. Money lives in books (ledger accounts); every
// movement is one journal entry whose postings sum to zero, written in the same store
// transaction as the state change it belongs to. A book's balance is the sum of the
// amounts posted to it; the stored balance is a cache of that sum, and Audit re-derives it.
//
// Sign convention: a posting's Amount is added to its book's balance. Positive means money
// arrives in the book (a credit), negative means it leaves (a debit). Company books
// (accounts, subaccounts) hold positive balances and may never go below zero; the system
// books are the other side of the company's money:
//
//	system:pix-network  the outside Pix network. A Pix received debits it (it goes
//	                    negative) and credits the company; money sent out credits it back.
//	                    Its balance is minus what the outside world has put in, net.
//	system:fees         the platform's fee income from this company (positive).
//	system:cashback     cashback owed or paid to this company's customers.
//
// Every company has its own system books, so no book is shared by two companies and the
// sum of all of one company's books is always zero.
const (
	collBooks   = "books"
	collJournal = "journal"
	collHolds   = "holds"

	bookPixNetwork = "system:pix-network"
	bookFees       = "system:fees"
	bookCashback   = "system:cashback"

	indexOpen = "open" // holds not yet fully settled or released
)

// systemBooks are the books post creates on first use.
var systemBooks = map[string]bool{bookPixNetwork: true, bookFees: true, bookCashback: true}

// accountBook is the available part of a company account.
func accountBook(accountID string) string { return "account:" + accountID }

// blockedBook is the held part of a company account: money reserved by hold and not yet
// settled or released.
func blockedBook(accountID string) string { return "account:" + accountID + ":blocked" }

func isBlockedBook(id string) bool {
	return (strings.HasPrefix(id, "account:") || strings.HasPrefix(id, "subaccount:")) && strings.HasSuffix(id, ":blocked")
}

// subaccountBook is a subaccount's balance: what it can spend.
func subaccountBook(pixKey string) string { return "subaccount:" + pixKey }

// subaccountBlockedBook is the held part of a subaccount: money reserved by a withdrawal
// the bank has not settled. It is created on the subaccount's first hold. (A Pix key never
// contains ':', so no subaccount book ends in ":blocked" by accident.)
func subaccountBlockedBook(pixKey string) string { return "subaccount:" + pixKey + ":blocked" }

// bookIndex lists the entries that post to one book: its statement.
func bookIndex(bookID string) string { return "book:" + bookID }

// Entry is one journal entry: a movement of money between books. Its postings sum to zero.
// Entries are never changed or deleted; a mistake is undone by another entry.
type Entry struct {
	// ID is the entry's sequence number in its company's journal, zero-padded to 20 digits
	// so that ids sort in the order they were taken.
	ID string `json:"id"`
	// Time is when the operation that wrote the entry happened.
	Time time.Time `json:"time"`
	// Kind says what the movement is, e.g. "pix.received", "fee", "refund.hold",
	// "refund.settle", "refund.release", "transfer".
	Kind string `json:"kind"`
	// Ref is the id of the record the entry belongs to (a transaction, refund, transfer...).
	Ref string `json:"ref,omitempty"`
	// Postings are the amounts applied to each book; they sum to zero.
	Postings []Posting `json:"postings"`
}

// Posting is one line of an entry: Amount centavos added to the balance of Book
// (positive: money arrives in the book; negative: money leaves it).
type Posting struct {
	// Book is the id of the book, e.g. "account:<accountID>" or "system:pix-network".
	Book string `json:"book"`
	// Amount is in centavos, never zero.
	Amount int64 `json:"amount"`
}

// book is a ledger account. Balance is the sum of every amount posted to it.
type book struct {
	ID          string `json:"id"`
	Balance     int64  `json:"balance"`
	NoOverdraft bool   `json:"noOverdraft,omitempty"` // the balance may never be negative

	isNew bool
}

// Books are listed in id order; the sort value is the id, so it is unique (see scanIndex).
func (b *book) record() (store.Record, error) {
	return encode(b.ID, b, nil, []store.Index{{Name: indexAll, Sort: b.ID}})
}

// createBook stores a new empty book.
func (t *txn) createBook(id string, noOverdraft bool) error {
	b := &book{ID: id, NoOverdraft: noOverdraft}
	r, err := b.record()
	if err != nil {
		return err
	}
	if err := t.tx.Insert(collBooks, t.company, r); err != nil {
		return internal(fmt.Errorf("ledger: create book %s: %w", id, err))
	}
	return nil
}

// loadBook reads a book for update. System books are created on first use; every other
// book must exist, so a missing one is a bug in the caller.
func (t *txn) loadBook(id string) (*book, error) {
	r, err := t.tx.Get(collBooks, t.company, id)
	switch {
	case err == nil:
		b, err := decodeMemoized[book](&t.svc.core.memo, collBooks, t.company, r)
		return &b, err
	case errors.Is(err, store.ErrNotFound) && systemBooks[id]:
		return &book{ID: id, isNew: true}, nil
	case errors.Is(err, store.ErrNotFound):
		return nil, internal(fmt.Errorf("ledger: book %s does not exist", id))
	default:
		return nil, internal(err)
	}
}

// bookBalance is the stored balance of a book that must exist.
func (t *txn) bookBalance(id string) (int64, error) {
	b, err := t.loadBook(id)
	if err != nil {
		return 0, err
	}
	return b.Balance, nil
}

// post writes one journal entry and applies its postings to their books, in the caller's
// transaction. The postings must sum to zero, have non-zero amounts and name existing
// books (or system books, created on first use): anything else is a bug in the caller and
// an internal error. If a NoOverdraft book would end below zero, post returns a
// precondition error on field "value" ("insufficient balance"); if a book's balance would
// pass the int64 range, a precondition error on "value" too, never a wrapped balance.
//
// post checks everything before it writes anything, so on a non-internal error nothing was
// written and the caller may carry on in the same transaction.
func (t *txn) post(kind, ref string, postings ...Posting) (Entry, error) {
	if kind == "" || len(postings) < 2 {
		return Entry{}, internal(fmt.Errorf("ledger: entry %q (ref %q) needs a kind and at least two postings", kind, ref))
	}
	var sum int64
	for _, p := range postings {
		if p.Book == "" || p.Amount == 0 {
			return Entry{}, internal(fmt.Errorf("ledger: entry %s (ref %q) has an empty posting %+v", kind, ref, p))
		}
		var ok bool
		if sum, ok = addAmount(sum, p.Amount); !ok {
			return Entry{}, internal(fmt.Errorf("ledger: entry %s (ref %q) overflows", kind, ref))
		}
	}
	if sum != 0 {
		return Entry{}, internal(fmt.Errorf("ledger: entry %s (ref %q) does not balance: postings sum to %d", kind, ref, sum))
	}

	books := make(map[string]*book, len(postings))
	var order []string // distinct books in posting order
	for _, p := range postings {
		b := books[p.Book]
		if b == nil {
			var err error
			if b, err = t.loadBook(p.Book); err != nil {
				return Entry{}, err
			}
			books[p.Book] = b
			order = append(order, p.Book)
		}
		var ok bool
		if b.Balance, ok = addAmount(b.Balance, p.Amount); !ok {
			return Entry{}, precondition("value", "value is too large: a balance would pass the largest amount the ledger holds")
		}
	}
	for _, id := range order {
		if b := books[id]; b.NoOverdraft && b.Balance < 0 {
			return Entry{}, precondition("value", "insufficient balance")
		}
	}

	for _, id := range order {
		b := books[id]
		r, err := b.record()
		if err != nil {
			return Entry{}, err
		}
		if b.isNew {
			err = t.tx.Insert(collBooks, t.company, r)
		} else {
			err = t.tx.Put(collBooks, t.company, r)
		}
		if err != nil {
			return Entry{}, internal(fmt.Errorf("ledger: write book %s: %w", id, err))
		}
	}
	n, err := t.tx.Next(collJournal, t.company, "entry")
	if err != nil {
		return Entry{}, internal(err)
	}
	e := Entry{ID: fmt.Sprintf("%020d", n), Time: t.now, Kind: kind, Ref: ref, Postings: slices.Clone(postings)}
	sort := sortTime(e.Time) + e.ID // unique, so that scanIndex can resume after it
	indexes := make([]store.Index, 0, len(order)+1)
	indexes = append(indexes, store.Index{Name: indexAll, Sort: sort})
	for _, id := range order {
		indexes = append(indexes, store.Index{Name: bookIndex(id), Sort: sort})
	}
	r, err := encode(e.ID, e, nil, indexes)
	if err != nil {
		return Entry{}, err
	}
	if err := t.tx.Insert(collJournal, t.company, r); err != nil {
		return Entry{}, internal(fmt.Errorf("ledger: write entry %s: %w", e.ID, err))
	}
	return e, nil
}

// addAmount returns a+b and false if it overflows.
func addAmount(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// hold is a reservation of part of an account's (or a subaccount's) balance (TigerBeetle's
// pending transfer): hold moves money from the available book to the blocked book, and
// settleHold, releaseHold or resolveHold resolve it, in parts or at once, never for more
// than remains. The blocked book's balance is always the sum of the Remaining of its
// source's open holds.
type hold struct {
	Ref       string `json:"ref"`
	AccountID string `json:"accountId,omitempty"`
	// Subaccount is the Pix key of the subaccount the hold is on, when it is on one
	// instead of an account.
	Subaccount string    `json:"subaccount,omitempty"`
	Kind       string    `json:"kind"`
	Value      int64     `json:"value"`
	Remaining  int64     `json:"remaining"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// Open holds are listed by ref (unique, see scanIndex); resolved ones are in no index.
func (h hold) indexes() []store.Index {
	if h.Remaining == 0 {
		return nil
	}
	return []store.Index{{Name: indexOpen, Sort: h.Ref}}
}

// holdSource is where held money comes from: a company account (AccountID) or a
// subaccount (Subaccount, its canonical Pix key); exactly one is set.
type holdSource struct {
	AccountID  string `json:"accountId,omitempty"`
	Subaccount string `json:"subaccount,omitempty"`
}

func accountSource(id string) holdSource     { return holdSource{AccountID: id} }
func subaccountSource(key string) holdSource { return holdSource{Subaccount: key} }

// available is the book the source spends from; blocked the book its holds sit in.
func (s holdSource) available() string {
	if s.Subaccount != "" {
		return subaccountBook(s.Subaccount)
	}
	return accountBook(s.AccountID)
}

func (s holdSource) blocked() string {
	if s.Subaccount != "" {
		return subaccountBlockedBook(s.Subaccount)
	}
	return blockedBook(s.AccountID)
}

func (h hold) source() holdSource {
	return holdSource{AccountID: h.AccountID, Subaccount: h.Subaccount}
}

// hold reserves value of the account's available balance under ref (the id of the refund,
// payment or withdrawal it is for): available -> blocked. It fails with a precondition
// error on "value" when the available balance is short. A ref holds once.
func (t *txn) hold(accountID string, value int64, kind, ref string) (Entry, error) {
	return t.holdOn(accountSource(accountID), value, kind, ref)
}

// holdOn is hold on any source: an account or a subaccount (whose blocked book it creates
// on first use).
func (t *txn) holdOn(src holdSource, value int64, kind, ref string) (Entry, error) {
	if value <= 0 {
		return Entry{}, invalid("value", "value must be positive")
	}
	if ref == "" {
		return Entry{}, internal(fmt.Errorf("ledger: hold %s without a ref", kind))
	}
	if src.Subaccount != "" {
		if _, err := t.subaccount("pixKey", src.Subaccount); err != nil {
			return Entry{}, err
		}
		_, err := t.tx.Get(collBooks, t.company, src.blocked())
		if errors.Is(err, store.ErrNotFound) {
			err = t.createBook(src.blocked(), true)
		}
		if err != nil {
			return Entry{}, internal(err)
		}
	} else if _, err := t.account(src.AccountID); err != nil {
		return Entry{}, err
	}
	if _, err := t.tx.Get(collHolds, t.company, ref); err == nil {
		return Entry{}, internal(fmt.Errorf("ledger: hold %s already exists", ref))
	}
	e, err := t.post(kind, ref,
		Posting{Book: src.available(), Amount: -value},
		Posting{Book: src.blocked(), Amount: value})
	if err != nil {
		return Entry{}, err
	}
	h := hold{Ref: ref, AccountID: src.AccountID, Subaccount: src.Subaccount, Kind: kind, Value: value, Remaining: value, CreatedAt: t.now, UpdatedAt: t.now}
	return e, t.insert(collHolds, ref, "hold", h, nil, h.indexes())
}

// settleHold pays out value of the hold ref: the money leaves the company for the Pix
// network (blocked -> system:pix-network). The rest of the hold, if any, stays blocked.
func (t *txn) settleHold(accountID string, value int64, kind, ref string) (Entry, error) {
	return t.resolveHold(accountSource(accountID), kind, ref, Posting{Book: bookPixNetwork, Amount: value})
}

// releaseHold gives value of the hold ref back to the account (blocked -> available), as
// when a refund or payment fails.
func (t *txn) releaseHold(accountID string, value int64, kind, ref string) (Entry, error) {
	src := accountSource(accountID)
	return t.resolveHold(src, kind, ref, Posting{Book: src.available(), Amount: value})
}

// resolveHold takes the sum of the postings' amounts out of the hold ref on src (its
// blocked book) and posts them, in one entry: to the Pix network when money leaves, back to
// the available book when it returns, to the fee book for a fee. Each amount must be
// positive and together they may not exceed what remains of the hold.
func (t *txn) resolveHold(src holdSource, kind, ref string, to ...Posting) (Entry, error) {
	var value int64
	for _, p := range to {
		if p.Amount <= 0 {
			return Entry{}, invalid("value", "value must be positive")
		}
		value += p.Amount
	}
	var h hold
	if err := t.get(collHolds, ref, "hold", &h); err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return Entry{}, internal(fmt.Errorf("ledger: no hold %s", ref))
		}
		return Entry{}, err
	}
	if h.source() != src {
		return Entry{}, internal(fmt.Errorf("ledger: hold %s is on %+v, not %+v", ref, h.source(), src))
	}
	if value > h.Remaining {
		return Entry{}, precondition("value", "only %d of the hold remains", h.Remaining)
	}
	postings := append([]Posting{{Book: src.blocked(), Amount: -value}}, to...)
	e, err := t.post(kind, ref, postings...)
	if err != nil {
		return Entry{}, err
	}
	h.Remaining -= value
	h.UpdatedAt = t.now
	return e, t.put(collHolds, ref, "hold", h, nil, h.indexes())
}

// AuditReport is what Audit found.
type AuditReport struct {
	// Entries is the number of journal entries read.
	Entries int
	// Books is the number of books read.
	Books int
	// Problems describes every disagreement found; empty when the ledger is sound.
	Problems []string
}

// OK reports whether the audit found no problem.
func (r AuditReport) OK() bool { return len(r.Problems) == 0 }

// Audit checks the company's ledger in one read transaction. It re-derives every book's
// balance by summing the journal and reports: any entry whose postings do not sum to zero,
// any book whose stored balance differs from the journal's, a book posted to but missing,
// a NoOverdraft book below zero, a blocked book that differs from the sum of its (sub)account's
// open holds, and the sum of all books if it is not zero. Its cost grows with the size of
// the journal; it is a check to run in tests and from time to time, not on every call.
func (s *Service) Audit(ctx context.Context) (AuditReport, error) {
	var rep AuditReport
	err := s.view(ctx, func(t *txn) error {
		rep = AuditReport{}
		problem := func(format string, args ...any) {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		}
		derived := map[string]int64{}
		err := t.scanIndex(collJournal, indexAll, func(r store.Record) error {
			var e Entry
			if err := decode(r, &e); err != nil {
				return err
			}
			rep.Entries++
			var sum int64
			for _, p := range e.Postings {
				sum += p.Amount
				derived[p.Book] += p.Amount
			}
			if sum != 0 {
				problem("entry %s (%s %s) does not balance: postings sum to %d", e.ID, e.Kind, e.Ref, sum)
			}
			return nil
		})
		if err != nil {
			return err
		}
		held := map[string]int64{} // blocked book -> sum of open holds
		err = t.scanIndex(collHolds, indexOpen, func(r store.Record) error {
			var h hold
			if err := decode(r, &h); err != nil {
				return err
			}
			held[h.source().blocked()] += h.Remaining
			return nil
		})
		if err != nil {
			return err
		}
		var total int64
		err = t.scanIndex(collBooks, indexAll, func(r store.Record) error {
			var b book
			if err := decode(r, &b); err != nil {
				return err
			}
			rep.Books++
			total += b.Balance
			if want := derived[b.ID]; b.Balance != want {
				problem("book %s: stored balance %d, journal says %d", b.ID, b.Balance, want)
			}
			delete(derived, b.ID)
			if b.NoOverdraft && b.Balance < 0 {
				problem("book %s: balance %d below zero", b.ID, b.Balance)
			}
			if isBlockedBook(b.ID) && b.Balance != held[b.ID] {
				problem("book %s: balance %d, open holds %d", b.ID, b.Balance, held[b.ID])
			}
			delete(held, b.ID)
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range sortedBooks(derived) {
			problem("book %s: in the journal (balance %d) but not stored", id, derived[id])
		}
		for _, id := range sortedBooks(held) {
			problem("book %s: open holds of %d but no book", id, held[id])
		}
		if total != 0 {
			problem("books sum to %d, not zero", total)
		}
		return nil
	})
	return rep, err
}

func sortedBooks(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// scanPage is how many records scanIndex reads per List.
const scanPage = 500

// scanIndex calls fn for every record of an index, in order, a page at a time. Each page starts
// just after the last record's sort value, so a page costs its own size and not the records
// before it; the index's sort values must therefore be unique.
func (t *txn) scanIndex(collection, index string, fn func(store.Record) error) error {
	for from := ""; ; {
		recs, next, err := keysetPage(t, collection, t.company, store.Query{Index: index, From: from, Limit: scanPage, NoTotal: true})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(recs) < scanPage {
			return nil
		}
		from = next
	}
}

// sortIn is the record's sort value in the named index.
func sortIn(r store.Record, index string) (string, bool) {
	for _, ix := range r.Indexes {
		if ix.Name == index {
			return ix.Sort, true
		}
	}
	return "", false
}

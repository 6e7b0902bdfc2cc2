package payments

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/pixfoundry/payments/store"
)

// A statement is the movements of one book of the ledger, newest first, each with the
// book's balance right after it: an account's statement is its available book, a
// subaccount's its book.
//
// It shows what can be spent, as the real API's subaccount statement does: a withdrawal is
// a WITHDRAWAL line when it starts and a WITHDRAWAL_REVERSAL line when it fails. So money
// reserved for an outgoing Pix (a refund, payment or withdrawal: a hold) is a DEBIT line
// when it is reserved, and a CREDIT line if the bank refuses it and it comes back; the
// bank's confirmation moves nothing of what can be spent and is no line. The balance after
// the newest line is therefore the account's Balance.Available (a subaccount's Balance),
// and the balance after each line is the balance after the line before it plus its signed
// value.
//
// Running balances are derived, not stored: the page and what it is derived from are read
// in one read transaction, and a line's balance is either the current balance less the
// movements after it, or the sum of the movements before it, whichever side of the page
// holds fewer entries (see statement). So a page costs its own lines and at most half the
// book's entries, never its whole history; the newest and the oldest pages are the
// cheapest. The balances are derived in the order the lines are shown, so they add up line
// by line even where two concurrent movements were written in another order than their
// times say.

// StatementLineType says which way a statement line moved money.
type StatementLineType string

// Statement line types.
const (
	StatementCredit StatementLineType = "CREDIT" // money arrived in the book
	StatementDebit  StatementLineType = "DEBIT"  // money left it
)

// StatementOperation says what moved a subaccount's money, as the real API's subaccount
// statement names it (operationType). Subaccount withdrawals carry no fee here, so the real
// API's WITHDRAWAL_FEE and WITHDRAWAL_FEE_REVERSAL never occur.
type StatementOperation string

// Statement operations.
const (
	OperationCredit             StatementOperation = "CREDIT"              // money received
	OperationDebit              StatementOperation = "DEBIT"               // money sent
	OperationTransferCredit     StatementOperation = "TRANSFER_CREDIT"     // from another subaccount
	OperationTransferDebit      StatementOperation = "TRANSFER_DEBIT"      // to another subaccount
	OperationWithdrawal         StatementOperation = "WITHDRAWAL"          // a withdrawal started
	OperationWithdrawalReversal StatementOperation = "WITHDRAWAL_REVERSAL" // a withdrawal failed or came back
)

// StatementLine is one movement of a statement.
type StatementLine struct {
	// ID is the journal entry's id: unique in the company, growing with the order entries
	// were written in.
	ID string `json:"id"`
	// Time is when the movement happened.
	Time time.Time `json:"time"`
	// Description says what the movement was, in a few words.
	Description string `json:"description"`
	// Value is the centavos moved, never negative: Type says which way.
	Value int64 `json:"value"`
	// Type is CREDIT (money arrived) or DEBIT (money left).
	Type StatementLineType `json:"type"`
	// Balance is the book's balance in centavos right after this movement.
	Balance int64 `json:"balance"`
	// OperationType says what moved the money, in the subaccount statement's terms.
	OperationType StatementOperation `json:"operationType"`
	// TransactionID is the id of what moved the money: a received Pix's globalID (which
	// GetTransaction takes), the id of a refund, payment, withdrawal, transfer or
	// subaccount debit or credit, or the endToEndId of a Pix sent that came back.
	TransactionID string `json:"transactionId"`
	// Kind is the ledger's name of the movement (Entry.Kind), e.g. "pix.received".
	Kind string `json:"kind"`
}

// StatementFilter selects a page of a statement: the movements from Start to End, both
// included (zero: no bound), newest first.
type StatementFilter struct {
	Start, End time.Time
	ListParams
}

// Statement returns a page of the statement of the company's account accountID ("" is the
// default account, the one the real API's company statement shows): the movements of its
// available balance, newest first, each with the balance after it (see StatementLine). An
// unknown account is not found; End before Start is invalid on "end".
func (s *Service) Statement(ctx context.Context, accountID string, f StatementFilter) ([]StatementLine, PageInfo, error) {
	p, err := f.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []StatementLine
	var total int
	err = s.view(ctx, func(t *txn) error {
		var a Account
		var err error
		if accountID == "" {
			a, err = t.defaultAccount()
		} else {
			a, err = t.account(accountID)
		}
		if err != nil {
			return err
		}
		out, total, err = t.statement(accountBook(a.AccountID), a.Balance.Available, f, p, false)
		return err
	})
	return out, p.info(total), err
}

// SubaccountStatement returns a page of the statement of the subaccount with the Pix key:
// its movements, newest first, each with the balance after it and its OperationType. An
// unknown key is not found ("Subaccount not found: <key>"); End before Start is invalid on
// "end".
func (s *Service) SubaccountStatement(ctx context.Context, pixKey string, f StatementFilter) ([]StatementLine, PageInfo, error) {
	key, _, err := parsePixKey("pixKey", pixKey, "")
	if err != nil {
		return nil, PageInfo{}, err
	}
	p, err := f.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []StatementLine
	var total int
	err = s.view(ctx, func(t *txn) error {
		sa, err := t.subaccount("pixKey", key)
		if err != nil {
			return err
		}
		out, total, err = t.statement(subaccountBook(key), sa.Balance, f, p, true)
		return err
	})
	return out, p.info(total), err
}

func (f StatementFilter) check() (ListParams, error) {
	p, err := f.ListParams.check()
	if err != nil {
		return p, err
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) {
		return p, invalid("end", "end must not be before start")
	}
	return p, nil
}

// statement reads page p of the statement of book, whose balance now is balance, in the
// caller's read transaction, and the number of lines f matches.
//
// A line's balance is derived from the lines on one side of the page: from the newest, as
// the current balance less the movements after it (the entries after f.End and the first
// p.Skip lines of the range), or from the oldest, as the sum of the movements before it
// (books open empty). The side with fewer entries is read; counting them walks index keys
// only. Both give the same balances, as the book's balance is the sum of its entries (see
// Audit).
func (t *txn) statement(book string, balance int64, f StatementFilter, p ListParams, sub bool) ([]StatementLine, int, error) {
	from, to, err := timeRange(f.Start, f.End, "start")
	if err != nil {
		return nil, 0, err
	}
	total, err := t.countBook(book, from, to)
	if err != nil {
		return nil, 0, err
	}
	n := min(p.Limit, max(total-p.Skip, 0)) // lines on the page
	if n == 0 {
		return []StatementLine{}, total, nil
	}
	above, below := 0, 0 // entries after the range and before it
	if from != "" || to != "" {
		all, err := t.countBook(book, "", "")
		if err != nil {
			return nil, 0, err
		}
		if to != "" {
			if above, err = t.countBook(book, to, ""); err != nil {
				return nil, 0, err
			}
		}
		below = all - total - above
	}
	var out []StatementLine
	if below+total-p.Skip-n < above+p.Skip {
		out, err = t.statementFromOldest(book, from, to, p, sub)
	} else {
		out, err = t.statementFromNewest(book, balance, from, to, p, sub)
	}
	return out, total, err
}

// countBook is the number of entries of book's index with a sort value from from to to
// (from included, to not; "": no bound).
func (t *txn) countBook(book, from, to string) (int, error) {
	page, err := t.tx.List(collJournal, t.company, store.Query{Index: bookIndex(book), From: from, To: to})
	if err != nil {
		return 0, internal(err)
	}
	return page.Total, nil
}

// statementFromNewest reads the page from the newest entry down: the entries after the
// range (from, to) and the first p.Skip lines of it are summed, the next p.Limit kept.
func (t *txn) statementFromNewest(book string, balance int64, from, to string, p ListParams, sub bool) ([]StatementLine, error) {
	after := int64(0) // the sum of the movements newer than the next line
	if to != "" {
		err := t.walkBook(book, to, "", true, scanPage, func(r store.Record) (bool, error) {
			amount, err := entryAmount(r, book)
			after += amount
			return true, err
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]StatementLine, 0, p.Limit)
	pos := 0 // lines of the range passed
	err := t.walkBook(book, from, to, true, min(p.Skip+p.Limit, scanPage), func(r store.Record) (bool, error) {
		var amount int64
		if pos >= p.Skip {
			var e Entry
			if err := decode(r, &e); err != nil {
				return false, err
			}
			amount = bookAmount(e.Postings, book)
			out = append(out, statementLine(e, amount, balance-after, sub))
		} else {
			var err error
			if amount, err = entryAmount(r, book); err != nil {
				return false, err
			}
		}
		after += amount
		pos++
		return pos < p.Skip+p.Limit, nil
	})
	return out, err
}

// statementFromOldest reads the page of the range (from, to) as the store pages it, then
// sums every entry older than its oldest line: the balance before it.
func (t *txn) statementFromOldest(book, from, to string, p ListParams, sub bool) ([]StatementLine, error) {
	index := bookIndex(book)
	page, err := t.tx.List(collJournal, t.company, store.Query{Index: index, Desc: true, From: from, To: to,
		Skip: p.Skip, Limit: p.Limit, NoTotal: true})
	if err != nil {
		return nil, internal(err)
	}
	if len(page.Records) == 0 {
		return []StatementLine{}, nil
	}
	oldest, ok := sortIn(page.Records[len(page.Records)-1], index)
	if !ok {
		return nil, internal(fmt.Errorf("journal entry %s is not in index %s", page.Records[len(page.Records)-1].ID, index))
	}
	before := int64(0)
	err = t.walkBook(book, "", oldest, false, scanPage, func(r store.Record) (bool, error) {
		amount, err := entryAmount(r, book)
		before += amount
		return true, err
	})
	if err != nil {
		return nil, err
	}
	out := make([]StatementLine, len(page.Records))
	for i := len(page.Records) - 1; i >= 0; i-- {
		var e Entry
		if err := decode(page.Records[i], &e); err != nil {
			return nil, err
		}
		amount := bookAmount(e.Postings, book)
		before += amount
		out[i] = statementLine(e, amount, before, sub)
	}
	return out, nil
}

// entryAmount is what the journal entry r moved of book, read without the rest of the
// entry.
func entryAmount(r store.Record, book string) (int64, error) {
	var e struct {
		Postings []Posting `json:"postings"`
	}
	if err := decode(r, &e); err != nil {
		return 0, err
	}
	return bookAmount(e.Postings, book), nil
}

// bookAmount is what postings move of book.
func bookAmount(postings []Posting, book string) int64 {
	amount := int64(0)
	for _, ps := range postings {
		if ps.Book == book {
			amount += ps.Amount
		}
	}
	return amount
}

// walkBook calls fn with the entries of book's index whose sort value is from from to to
// (from included, to not; "": no bound), newest first when desc, reading chunk entries per
// List, until fn returns false or an error.
func (t *txn) walkBook(book, from, to string, desc bool, chunk int, fn func(r store.Record) (bool, error)) error {
	index := bookIndex(book)
	for {
		page, err := t.tx.List(collJournal, t.company, store.Query{Index: index, Desc: desc, From: from, To: to, Limit: chunk, NoTotal: true})
		if err != nil {
			return internal(err)
		}
		for _, r := range page.Records {
			sort, ok := sortIn(r, index)
			if !ok {
				return internal(fmt.Errorf("journal entry %s is not in index %s", r.ID, index))
			}
			if desc {
				to = sort // the next List reads the entries below this one
			} else {
				from = sort + "\x00" // and above it
			}
			if more, err := fn(r); err != nil || !more {
				return err
			}
		}
		if len(page.Records) < chunk {
			return nil
		}
	}
}

// statementLine is the line of entry e, which moved amount centavos of the book, leaving
// it at balance. sub says the book is a subaccount's.
func statementLine(e Entry, amount, balance int64, sub bool) StatementLine {
	l := StatementLine{ID: e.ID, Time: e.Time, Value: amount, Type: StatementCredit, Balance: balance,
		OperationType: OperationCredit, TransactionID: e.Ref, Kind: e.Kind}
	if amount < 0 {
		l.Value, l.Type, l.OperationType = -amount, StatementDebit, OperationDebit
	}
	if e.Kind == "pix.received" { // the Pix's transaction, by the globalID GetTransaction takes
		l.TransactionID = base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + e.Ref))
	}
	kinds := accountStatementKinds
	if sub {
		kinds = subaccountStatementKinds
	}
	d, ok := kinds[e.Kind]
	desc, op := d.credit, d.creditOp
	if l.Type == StatementDebit {
		desc, op = d.debit, d.debitOp
	}
	l.Description = desc
	if !ok || desc == "" {
		l.Description = e.Kind // a kind statements do not word yet: its ledger name
	}
	if op != "" {
		l.OperationType = op
	}
	return l
}

// statementKind words the lines of one kind of ledger entry: its description when it
// credits and when it debits the book, and its operation when it is not plain CREDIT or
// DEBIT.
type statementKind struct {
	credit, debit     string
	creditOp, debitOp StatementOperation
}

// accountStatementKinds are the ledger's entry kinds that move an account's available
// balance, as its statement words them.
var accountStatementKinds = map[string]statementKind{
	"pix.received":       {credit: "Pix received"},
	"refund.hold":        {debit: "Refund sent"},
	"refund.release":     {credit: "Refund not accomplished: value returned"},
	"payment.hold":       {debit: "Payment sent"},
	"payment.release":    {credit: "Payment not accomplished: value returned"},
	"withdrawal.hold":    {debit: "Withdrawal", debitOp: OperationWithdrawal},
	"withdrawal.release": {credit: "Withdrawal not accomplished: value returned", creditOp: OperationWithdrawalReversal},
	"payout.return":      {credit: "Pix sent returned by the receiver"},
	"account.transfer":   {credit: "Transfer from another account", debit: "Transfer to another account"},
	"subaccount.credit":  {debit: "Credit to a subaccount"},
	"subaccount.debit":   {credit: "Debit from a subaccount"},
	"dispute.hold":       {debit: "Blocked by a dispute (MED)"},
	"dispute.release":    {credit: "Released by a dispute (MED)"},
}

// subaccountStatementKinds are the ledger's entry kinds that move a subaccount's balance,
// as its statement words them. Only withdrawals send a subaccount's money out, so a Pix
// sent that comes back is a withdrawal's reversal.
var subaccountStatementKinds = map[string]statementKind{
	"pix.received":       {credit: "Pix received"},
	"withdrawal.hold":    {debit: "Withdrawal", debitOp: OperationWithdrawal},
	"withdrawal.release": {credit: "Withdrawal not accomplished: value returned", creditOp: OperationWithdrawalReversal},
	"payout.return":      {credit: "Withdrawal returned by the receiver", creditOp: OperationWithdrawalReversal},
	"transfer": {credit: "Transfer from another subaccount", debit: "Transfer to another subaccount",
		creditOp: OperationTransferCredit, debitOp: OperationTransferDebit},
	"subaccount.credit": {credit: "Credit from the company account"},
	"subaccount.debit":  {debit: "Debit to the company account"},
}

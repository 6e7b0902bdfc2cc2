package payments

import (
	"context"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const (
	collSubaccounts         = "subaccounts"
	collSubaccountTransfers = "subaccount_transfers"
)

// Subaccount is a balance inside the company, addressed by a Pix key (of the seller,
// driver, branch... it belongs to). Its money is part of the company's, kept apart. The
// key is the owner's, at their own bank (withdrawals go to it): it is not a key the company
// receives at, so another company may have a subaccount with the same key (a seller on two
// marketplaces), and it is not in the Pix key registry (pixkeys.go).
type Subaccount struct {
	Name   string `json:"name"`
	PixKey string `json:"pixKey"`
	// Balance is in centavos; it comes from the subaccount's book and is never negative.
	Balance   int64     `json:"balance"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// CreateSubaccountParams create a subaccount. PixKey is any valid Pix key (its type is
// detected, its canonical form kept); Name is required, at most 200 characters.
type CreateSubaccountParams struct {
	PixKey string
	Name   string
}

// CreateSubaccountTransferParams move money from one subaccount to another. The key types
// are CPF, CNPJ, EMAIL, PHONE or RANDOM (EVP); when empty, the type is detected from the key.
// CorrelationID, when given, makes the transfer idempotent: a retry with the same
// correlationID returns the first transfer and moves nothing.
type CreateSubaccountTransferParams struct {
	Value          int64
	FromPixKey     string
	FromPixKeyType string
	ToPixKey       string
	ToPixKeyType   string
	CorrelationID  string
}

// SubaccountTransferParams is the former name of CreateSubaccountTransferParams.
//
// Deprecated: use CreateSubaccountTransferParams.
type SubaccountTransferParams = CreateSubaccountTransferParams

// SubaccountTransfer is a transfer between subaccounts, with both subaccounts as they were
// right after it.
type SubaccountTransfer struct {
	ID            string     `json:"-"`
	Value         int64      `json:"value"`
	CorrelationID string     `json:"correlationID"`
	Origin        Subaccount `json:"originSubaccount"`
	Destination   Subaccount `json:"destinationSubaccount"`
	CreatedAt     time.Time  `json:"createdAt"`
}

// CreateSubaccount creates a subaccount, or returns the existing one with the same Pix key
// unchanged; created says which. A key of one of the company's accounts (the company's own
// key included) is a conflict on "pixKey". A key whose subaccount was deleted makes a new
// subaccount over the same books (see DeleteSubaccount).
func (s *Service) CreateSubaccount(ctx context.Context, p CreateSubaccountParams) (sa Subaccount, created bool, err error) {
	key, _, err := parsePixKey("pixKey", p.PixKey, "")
	if err != nil {
		return Subaccount{}, false, err
	}
	name, err := cleanString("name", p.Name, 200)
	if err != nil {
		return Subaccount{}, false, err
	}
	if name == "" {
		return Subaccount{}, false, invalid("name", "name is required")
	}
	err = s.update(ctx, func(t *txn) error {
		sa, created = Subaccount{}, false // afresh on every run: the store may run this function again
		var err error
		sa, err = t.subaccount("pixKey", key)
		if ok, err := found(err); err != nil || ok {
			return err
		}
		if err := t.pixKeyFree("pixKey", key, false); err != nil {
			return err // an account's key: a key names one place the company's money is
		}
		sa = Subaccount{Name: name, PixKey: key, CreatedAt: t.now, UpdatedAt: t.now}
		if err := t.insert(collSubaccounts, key, "subaccount", sa, nil, []store.Index{byCreationThen(t.now, t.newID())}); err != nil {
			return err
		}
		created = true
		// A key deleted before (DeleteSubaccount) has its books still: the new subaccount
		// takes them, with what came back to them meanwhile.
		if ok, err := t.bookExists(subaccountBook(key)); err != nil || ok {
			if err == nil {
				sa.Balance, err = t.bookBalance(subaccountBook(key))
			}
			return err
		}
		return t.createBook(subaccountBook(key), true)
	})
	return sa, created, err
}

// GetSubaccount returns the subaccount with the Pix key.
func (s *Service) GetSubaccount(ctx context.Context, pixKey string) (Subaccount, error) {
	key, _, err := parsePixKey("pixKey", pixKey, "")
	if err != nil {
		return Subaccount{}, err
	}
	var sa Subaccount
	err = s.view(ctx, func(t *txn) error {
		var err error
		sa, err = t.subaccount("pixKey", key)
		return err
	})
	return sa, err
}

// ListSubaccounts returns the company's subaccounts, newest first.
func (s *Service) ListSubaccounts(ctx context.Context, p ListParams) ([]Subaccount, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Subaccount
	var total int
	err = s.view(ctx, func(t *txn) error {
		if out, total, err = list[Subaccount](t, collSubaccounts, p.query(indexAll), nil); err != nil {
			return err
		}
		for i := range out {
			if out[i].Balance, err = t.bookBalance(subaccountBook(out[i].PixKey)); err != nil {
				return err
			}
		}
		return nil
	})
	return out, p.info(total), err
}

// subaccount reads the subaccount with the canonical key and its balance. Not found names
// field, the input that gave the key.
func (t *txn) subaccount(field, key string) (Subaccount, error) {
	var sa Subaccount
	if err := t.get(collSubaccounts, key, "subaccount", &sa); err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return Subaccount{}, &Error{Code: ENOTFOUND, Field: field, Message: "Subaccount not found: " + key}
		}
		return Subaccount{}, err
	}
	var err error
	sa.Balance, err = t.bookBalance(subaccountBook(key))
	return sa, err
}

// TransferBetweenSubaccounts moves Value centavos from one subaccount to another of the
// company. Both must exist and differ, and the origin must have the balance. With a
// correlationID already used, it returns that first transfer and moves nothing; if the
// retry asks for a different transfer, that is a conflict on correlationID.
func (s *Service) TransferBetweenSubaccounts(ctx context.Context, p CreateSubaccountTransferParams) (SubaccountTransfer, error) {
	from, to, cid, err := s.transferEnds("subaccount", p.Value, p.FromPixKey, p.FromPixKeyType, p.ToPixKey, p.ToPixKeyType, p.CorrelationID)
	if err != nil {
		return SubaccountTransfer{}, err
	}
	var tr SubaccountTransfer
	err = s.update(ctx, func(t *txn) error {
		done, ok, err := replay(t, collSubaccountTransfers, "transfer", cid, func(tr *SubaccountTransfer, id string) { tr.ID = id },
			func(tr SubaccountTransfer) bool {
				return tr.Value == p.Value && tr.Origin.PixKey == from && tr.Destination.PixKey == to
			},
			"a different transfer with correlationID %q already exists", cid)
		if err != nil || ok {
			tr = done // a retry: nothing moves again
			return err
		}
		tr = SubaccountTransfer{ID: t.newID(), Value: p.Value, CorrelationID: cid, CreatedAt: t.now}
		if tr.Origin, err = t.subaccount("fromPixKey", from); err != nil {
			return err
		}
		if tr.Destination, err = t.subaccount("toPixKey", to); err != nil {
			return err
		}
		if tr.Origin.Balance < p.Value {
			return precondition("value", "subaccount %s does not have enough balance for this transfer", from)
		}
		_, err = t.post("transfer", tr.ID,
			Posting{Book: subaccountBook(from), Amount: -p.Value},
			Posting{Book: subaccountBook(to), Amount: p.Value})
		if err != nil {
			return err
		}
		tr.Origin.Balance -= p.Value // as post left them, in this transaction
		tr.Destination.Balance += p.Value
		return t.insert(collSubaccountTransfers, tr.ID, "transfer", tr,
			[]string{correlationKey(cid)}, []store.Index{byCreation(t.now)})
	})
	return result(tr, err)
}

// mustHaveSubaccount refuses a key (canonical) that names no subaccount of the company:
// a charge's subaccount or split must exist when the charge is created, so that its
// payment goes where the charge says.
func (t *txn) mustHaveSubaccount(field, key string) error {
	ok, err := t.subaccountExists(key)
	if err != nil {
		return err
	}
	if !ok {
		return invalid(field, "%s names no subaccount: create the subaccount %s first", field, key)
	}
	return nil
}

// subaccountExists reports whether the company has a subaccount with the canonical key
// now: one deleted (DeleteSubaccount) has its books still, but no record.
func (t *txn) subaccountExists(key string) (bool, error) {
	_, err := t.tx.Get(collSubaccounts, t.company, key)
	return found(storeErr(err, "subaccount"))
}

// msgSubaccountWithBalance is the official document's refusal of a subaccount's deletion.
const msgSubaccountWithBalance = "Only subaccount without balance can be removed"

// DeleteSubaccount deletes the subaccount with the Pix key, and returns it as it was.
//
// The official document deletes "a Sub Account if it has no remaining balance": one with
// money, available or blocked by a withdrawal the bank has not settled, is refused with
// EPRECONDITION on "balance" (the document's "Only subaccount without balance can be
// removed"), and nothing changes. The company first takes the money out (DebitSubaccount
// to its account, TransferBetweenSubaccounts, WithdrawFromSubaccount) or waits for the
// withdrawal to settle or fail; money is never moved for it, nor left behind. An unknown
// key is ENOTFOUND ("Subaccount not found: <key>"), and so is a second delete of the same
// key: the subaccount is gone, as GetSubaccount says from then on.
//
// The subaccount leaves ListSubaccounts and every operation that names it (transfers,
// debits, credits, withdrawals, and new charges or splits). A charge created for it before
// and paid after gives its part to the company account instead (chargeCredits). Its books
// stay in the ledger, as every book does: a withdrawal of it that the payee's bank returns
// after the deletion is credited to them, and creating the subaccount again with the same
// key (CreateSubaccount) shows that money.
func (s *Service) DeleteSubaccount(ctx context.Context, pixKey string) (Subaccount, error) {
	key, _, err := parsePixKey("pixKey", pixKey, "")
	if err != nil {
		return Subaccount{}, err
	}
	var sa Subaccount
	err = s.update(ctx, func(t *txn) error {
		var err error
		if sa, err = t.subaccount("pixKey", key); err != nil {
			return err
		}
		var blocked int64
		if ok, err := t.bookExists(subaccountBlockedBook(key)); err != nil {
			return err
		} else if ok { // made on the subaccount's first withdrawal
			if blocked, err = t.bookBalance(subaccountBlockedBook(key)); err != nil {
				return err
			}
		}
		if sa.Balance != 0 || blocked != 0 {
			return precondition("balance", "%s: its balance is R$ %s, and R$ %s is blocked by withdrawals the bank has not settled; move the money out first",
				msgSubaccountWithBalance, formatReais(sa.Balance), formatReais(blocked))
		}
		return storeErr(t.tx.Delete(collSubaccounts, t.company, key), "subaccount")
	})
	return result(sa, err)
}

// collSubaccountMoves holds the debits and credits between subaccounts and the company
// account.
const collSubaccountMoves = "subaccount_moves"

// SubaccountMoveKind says which way a SubaccountMove went.
type SubaccountMoveKind string

// Subaccount move kinds.
const (
	SubaccountDebit  SubaccountMoveKind = "DEBIT"  // subaccount -> company account
	SubaccountCredit SubaccountMoveKind = "CREDIT" // company account -> subaccount
)

// SubaccountMoveParams debit or credit a subaccount: Value centavos (1 to
// MaxChargeValue) move between the subaccount with PixKey and the company's default
// account. Description is optional, at most MaxComment characters.
//
// The reference gives these operations no idempotency key, so without CorrelationID each
// call moves money, as in the real API. CorrelationID (our extension) makes the call
// idempotent: the same correlationID again, for the same operation, subaccount and value,
// returns the first move and moves nothing; for anything else it is a conflict on
// correlationID. Debits and credits share one space of correlationIDs.
type SubaccountMoveParams struct {
	PixKey        string
	Value         int64
	Description   string
	CorrelationID string
}

// SubaccountMove is a debit or credit of a subaccount, with the subaccount as the move
// left it.
type SubaccountMove struct {
	ID            string             `json:"-"`
	Kind          SubaccountMoveKind `json:"kind"`
	Value         int64              `json:"value"`
	Description   string             `json:"description"`
	CorrelationID string             `json:"correlationID,omitempty"`
	// AccountID is the company account on the other side: the default account.
	AccountID  string     `json:"accountId"`
	Subaccount Subaccount `json:"subaccount"`
	CreatedAt  time.Time  `json:"createdAt"`
}

// DebitSubaccount moves value from the subaccount to the company's default account, in
// one transaction with one balanced ledger entry. A subaccount with no balance is refused
// ("Transfer just work with subaccount with balance"), and so is a value above its
// balance ("Account does not have enough balance to complete the operation"), both
// EPRECONDITION on "value"; an unknown key is ENOTFOUND ("Subaccount not found: <key>").
// See SubaccountMoveParams for idempotency.
func (s *Service) DebitSubaccount(ctx context.Context, p SubaccountMoveParams) (SubaccountMove, error) {
	return s.moveSubaccount(ctx, SubaccountDebit, p)
}

// CreditSubaccount moves value from the company's default account to the subaccount, in
// one transaction with one balanced ledger entry. A value above the account's available
// balance is refused ("Account does not have enough balance to complete the operation",
// EPRECONDITION on "value"). See DebitSubaccount.
func (s *Service) CreditSubaccount(ctx context.Context, p SubaccountMoveParams) (SubaccountMove, error) {
	return s.moveSubaccount(ctx, SubaccountCredit, p)
}

func (s *Service) moveSubaccount(ctx context.Context, kind SubaccountMoveKind, p SubaccountMoveParams) (SubaccountMove, error) {
	key, _, err := parsePixKey("pixKey", p.PixKey, "")
	if err != nil {
		return SubaccountMove{}, err
	}
	if p.Value <= 0 {
		return SubaccountMove{}, invalid("value", "Value must be positive") // the real API's text
	}
	if err := checkCentavos("value", p.Value, false); err != nil {
		return SubaccountMove{}, err
	}
	desc, err := cleanString("description", p.Description, MaxComment)
	if err != nil {
		return SubaccountMove{}, err
	}
	cid, err := cleanCorrelationID("correlationID", p.CorrelationID, false)
	if err != nil {
		return SubaccountMove{}, err
	}
	var m SubaccountMove
	err = s.update(ctx, func(t *txn) error {
		done, ok, err := replay(t, collSubaccountMoves, "subaccount move", cid, func(m *SubaccountMove, id string) { m.ID = id },
			func(m SubaccountMove) bool {
				return m.Kind == kind && m.Subaccount.PixKey == key && m.Value == p.Value && m.Description == desc
			},
			"a different subaccount debit or credit with correlationID %q already exists", cid)
		if err != nil || ok { // without a correlationID, never ok: each call moves money
			m = done
			return err
		}
		sa, err := t.subaccount("pixKey", key)
		if err != nil {
			return err
		}
		acct, err := t.defaultAccount()
		if err != nil {
			return err
		}
		from, to := subaccountBook(key), accountBook(acct.AccountID)
		switch {
		case kind == SubaccountDebit && sa.Balance == 0:
			return precondition("value", "Transfer just work with subaccount with balance") // the real API's text
		case kind == SubaccountDebit && sa.Balance < p.Value,
			kind == SubaccountCredit && acct.Balance.Available < p.Value:
			return precondition("value", "Account does not have enough balance to complete the operation")
		case kind == SubaccountCredit:
			from, to = to, from
		}
		m = SubaccountMove{ID: t.newID(), Kind: kind, Value: p.Value, Description: desc, CorrelationID: cid,
			AccountID: acct.AccountID, Subaccount: sa, CreatedAt: t.now}
		if _, err := t.post("subaccount."+strings.ToLower(string(kind)), m.ID,
			Posting{Book: from, Amount: -p.Value}, Posting{Book: to, Amount: p.Value}); err != nil {
			return err
		}
		if kind == SubaccountDebit { // as post left it, in this transaction
			m.Subaccount.Balance -= p.Value
		} else {
			m.Subaccount.Balance += p.Value
		}
		var keys []string
		if cid != "" {
			keys = []string{correlationKey(cid)}
		}
		return t.insert(collSubaccountMoves, m.ID, "subaccount move", m, keys, []store.Index{byCreation(t.now)})
	})
	return result(m, err)
}

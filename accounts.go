package payments

import (
	"context"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const (
	collAccounts = "accounts"
	keyDefault   = "isDefault" // the unique key of a company's default account
)

// Account is a company's account at the platform: where the money its charges receive
// lands, and where refunds and payments are paid from. Every company has one default
// account, created with the company; CreateAccount adds others.
//
// Each account has its own Pix key, unique among the company's accounts and subaccounts:
// the default account's is the company's Pix key (read from the company, so that
// UpdateCompany moves it), another account's is the one it was created with.
// TransferBetweenAccounts names accounts by these keys, and a Pix received at an account's
// key that names no charge or QR code lands in that account (see ReceivePixParams.PixKey).
// No two companies hold one key (pixkeys.go).
type Account struct {
	AccountID string `json:"accountId"`
	IsDefault bool   `json:"isDefault"`
	PixKey    string `json:"pixKey"`
	// Name is the label given to CreateAccount, "" for the default account.
	Name      string    `json:"accountName,omitempty"`
	Balance   Balance   `json:"balance"`
	CreatedAt time.Time `json:"createdAt"`
	// ClosedAt is when CloseAccount closed the account; nil while it is open.
	ClosedAt *time.Time `json:"closedAt,omitempty"`
}

// Balance is an account's money in centavos. Blocked is the part reserved for refunds and
// payments sent to the bank and not yet settled; Available = Total - Blocked is what can be
// spent.
type Balance struct {
	Total     int64 `json:"total"`
	Blocked   int64 `json:"blocked"`
	Available int64 `json:"available"`
}

// forCompany is the same transaction acting for another company: used when one company's
// operation creates another's records (a partner registering a company).
func (t *txn) forCompany(id string) *txn {
	other := *t
	other.company = id
	return &other
}

// createDefaultAccount gives a new company its default account and the account's books.
func (t *txn) createDefaultAccount(c Company) error {
	ct := t.forCompany(c.ID)
	a := Account{AccountID: t.newID(), IsDefault: true, CreatedAt: t.now}
	if err := ct.insert(collAccounts, a.AccountID, "account", a, []string{keyDefault}, []store.Index{byCreation(a.CreatedAt)}); err != nil {
		return err
	}
	if err := ct.createBook(accountBook(a.AccountID), true); err != nil {
		return err
	}
	return ct.createBook(blockedBook(a.AccountID), true)
}

// account reads an account with its balance. The default account's PixKey is left empty
// (it is the company's: fillPixKey sets it), so that the money paths that only need the
// balance do not read the company too.
func (t *txn) account(id string) (Account, error) {
	var a Account
	if id == "" {
		return Account{}, notFound("Account not found")
	}
	if err := t.get(collAccounts, id, "account", &a); err != nil {
		return Account{}, err
	}
	return a, t.fillBalance(&a)
}

// defaultAccount reads the company's default account with its balance; PixKey as for
// account.
func (t *txn) defaultAccount() (Account, error) {
	r, err := t.tx.GetByKey(collAccounts, t.company, keyDefault)
	if err != nil {
		return Account{}, storeErr(err, "account")
	}
	a, err := decodeMemoized[Account](&t.svc.core.memo, collAccounts, t.company, r)
	if err != nil {
		return Account{}, err
	}
	return a, t.fillBalance(&a)
}

// fillBalance sets a.Balance from the account's books.
func (t *txn) fillBalance(a *Account) error {
	avail, err := t.bookBalance(accountBook(a.AccountID))
	if err != nil {
		return err
	}
	blocked, err := t.bookBalance(blockedBook(a.AccountID))
	if err != nil {
		return err
	}
	a.Balance = Balance{Total: avail + blocked, Blocked: blocked, Available: avail}
	return nil
}

// GetAccount returns the company's account with id, a closed one too (ClosedAt set, see
// CloseAccount).
func (s *Service) GetAccount(ctx context.Context, id string) (Account, error) {
	var a Account
	err := s.view(ctx, func(t *txn) error {
		var err error
		if a, err = t.account(id); err != nil {
			return err
		}
		return t.fillPixKey(&a)
	})
	return a, err
}

// DefaultAccount returns the company's default account.
func (s *Service) DefaultAccount(ctx context.Context) (Account, error) {
	var a Account
	err := s.view(ctx, func(t *txn) error {
		var err error
		if a, err = t.defaultAccount(); err != nil {
			return err
		}
		return t.fillPixKey(&a)
	})
	return a, err
}

// ListAccounts returns the company's open accounts, newest first.
func (s *Service) ListAccounts(ctx context.Context, p ListParams) ([]Account, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Account
	var total int
	err = s.view(ctx, func(t *txn) error {
		if out, total, err = list[Account](t, collAccounts, p.query(indexAll), nil); err != nil {
			return err
		}
		for i := range out {
			if err := t.fillPixKey(&out[i]); err != nil {
				return err
			}
			if err := t.fillBalance(&out[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, p.info(total), err
}

// accountKey is the unique key of the account whose Pix key is key (canonical). The
// default account has none: its key is the company's.
func accountKey(key string) string { return "pixKey:" + key }

// fillPixKey sets the default account's Pix key, the company's; another account's is
// stored with it.
func (t *txn) fillPixKey(a *Account) error {
	if !a.IsDefault {
		return nil
	}
	co, err := t.loadCompany()
	if err != nil {
		return err
	}
	a.PixKey = co.PixKey
	return nil
}

// CreateAccountParams create another account of the company. PixKey, when given, is any
// valid Pix key not yet used by an account or subaccount of the company, nor by another
// company (its type is detected, its canonical form kept); when empty a random (EVP) key
// is made. Name is an optional label of at most 200 characters.
type CreateAccountParams struct {
	PixKey string
	Name   string
}

// CreateAccount creates another account of the company, with its own Pix key and empty
// balance (the real API's "duplicate account"). It is not idempotent: each call without
// a key makes a new account, and a key already in use, in the company or by another
// company, is a conflict on "pixKey".
func (s *Service) CreateAccount(ctx context.Context, p CreateAccountParams) (Account, error) {
	var key string
	if strings.TrimSpace(p.PixKey) != "" {
		var err error
		if key, _, err = parsePixKey("pixKey", p.PixKey, ""); err != nil {
			return Account{}, err
		}
	}
	name, err := cleanString("name", p.Name, 200)
	if err != nil {
		return Account{}, err
	}
	var a Account
	err = s.update(ctx, func(t *txn) error {
		a = Account{} // afresh on every run: the store may run this function again
		k := key
		if k == "" {
			k = t.svc.core.ids.uuid()
		}
		if err := t.pixKeyFree("pixKey", k, true); err != nil {
			return err
		}
		a = Account{AccountID: t.newID(), PixKey: k, Name: name, CreatedAt: t.now}
		if err := t.claimPixKey("pixKey", k, pixKeyOwner{Kind: keyOfAccount, AccountID: a.AccountID}); err != nil {
			return err // another company's key (pixkeys.go)
		}
		if err := t.insert(collAccounts, a.AccountID, "account", a, []string{accountKey(k)}, []store.Index{byCreation(t.now)}); err != nil {
			return err
		}
		if err := t.createBook(accountBook(a.AccountID), true); err != nil {
			return err
		}
		return t.createBook(blockedBook(a.AccountID), true)
	})
	return a, err
}

// accountByKey reads the account of the company co (the transaction's) whose Pix key is
// key (canonical) with its balance. An unknown key is not found, naming field, the input
// that gave it.
func (t *txn) accountByKey(co Company, field, key string) (Account, error) {
	if key == co.PixKey {
		a, err := t.defaultAccount()
		a.PixKey = key
		return a, err
	}
	var a Account
	_, err := t.getByKey(collAccounts, accountKey(key), "account", &a)
	if ErrorCode(err) == ENOTFOUND {
		return Account{}, &Error{Code: ENOTFOUND, Field: field, Message: "Account not found for " + field + " " + key}
	}
	if err != nil {
		return Account{}, err
	}
	return a, t.fillBalance(&a)
}

// pixKeyFree refuses key (canonical) if an account of the company has it (the default
// account's is the company's) or, when subaccounts is set, a subaccount: a conflict on
// field, so that a key names one place the company's money is.
func (t *txn) pixKeyFree(field, key string, subaccounts bool) error {
	co, err := t.loadCompany()
	if err != nil {
		return err
	}
	if key == co.PixKey {
		return conflict(field, "%s %s is the Pix key of the company's default account", field, key)
	}
	if _, err := t.tx.GetByKey(collAccounts, t.company, accountKey(key)); err == nil {
		return conflict(field, "%s %s is the Pix key of another account of the company", field, key)
	} else if ok, err := found(storeErr(err, "account")); err != nil || ok {
		return err
	}
	if !subaccounts {
		return nil
	}
	_, err = t.tx.Get(collSubaccounts, t.company, key)
	if ok, err := found(storeErr(err, "subaccount")); err != nil {
		return err
	} else if ok {
		return conflict(field, "%s %s is the Pix key of a subaccount of the company", field, key)
	}
	return nil
}

// Messages of the official document for closing an account.
const (
	msgAccountClosed      = "Account already closed"
	msgAccountWithBalance = "Account with balance cannot be deleted"
)

// CloseAccount closes an account of the company other than its default, and returns it
// as closed.
//
// The official document says that an account with balance cannot be closed: one whose
// total balance is not zero, money available or blocked by a withdrawal, refund or payment
// the bank has not settled, is refused with EPRECONDITION on "balance", and nothing
// changes. The company first moves the money out (TransferBetweenAccounts,
// WithdrawFromAccount) or waits for its orders to settle or fail; money is never moved
// for it, nor left behind. The default account is refused (EPRECONDITION on "accountId"):
// the company's charges are paid into it. An account closed before is refused with the
// document's "Account already closed" (EPRECONDITION on "accountId"), so a retry that
// lost the first answer learns that the account is closed; an unknown id is ENOTFOUND.
//
// In the same transaction the account's Pix key is released: from then on a Pix sent to
// it is no longer the company's (ReceivePix refuses the key, and ReceiveBankPix keeps a
// bank's Pix to it unmatched, for an operator), and the key is free for a new account or
// for another company. A closed account leaves ListAccounts and cannot be named by its
// key (TransferBetweenAccounts); GetAccount still reads it, with ClosedAt set, and its
// books stay in the ledger. The one money that can still reach it is a withdrawal it sent
// before closing that the payee's bank returns: it lands in the closed account, which
// shows it, and WithdrawFromAccount takes it out.
func (s *Service) CloseAccount(ctx context.Context, id string) (Account, error) {
	var a Account
	err := s.update(ctx, func(t *txn) error {
		var err error
		if a, err = t.account(id); err != nil {
			return err
		}
		switch {
		case a.ClosedAt != nil:
			return precondition("accountId", msgAccountClosed)
		case a.IsDefault:
			return precondition("accountId", "The default account cannot be closed: the company's charges are paid into it")
		case a.Balance.Total != 0:
			return precondition("balance", "%s: its balance is R$ %s (R$ %s of it blocked by orders the bank has not settled); move the money out first",
				msgAccountWithBalance, formatReais(a.Balance.Total), formatReais(a.Balance.Blocked))
		}
		if err := t.releasePixKey(a.PixKey); err != nil {
			return err
		}
		closed := t.now
		a.ClosedAt = &closed
		stored := a
		stored.Balance = Balance{} // computed from the books on every read
		// No unique key (the Pix key no longer names it) and no index (it no longer lists).
		return t.put(collAccounts, a.AccountID, "account", stored, nil, nil)
	})
	return result(a, err)
}

package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

const (
	collAccounts = "accounts"
	keyDefault   = "isDefault" // the unique key of a company's default account
)

// Account is a company's account at the platform: where the money its charges receive
// lands, and where refunds and payments are paid from. Every company has one default
// account, created with the company.
type Account struct {
	AccountID string    `json:"accountId"`
	IsDefault bool      `json:"isDefault"`
	Balance   Balance   `json:"balance"`
	CreatedAt time.Time `json:"createdAt"`
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

// account reads an account with its balance.
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

// defaultAccount reads the company's default account with its balance.
func (t *txn) defaultAccount() (Account, error) {
	var a Account
	if _, err := t.getByKey(collAccounts, keyDefault, "account", &a); err != nil {
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

// GetAccount returns the company's account with id.
func (s *Service) GetAccount(ctx context.Context, id string) (Account, error) {
	var a Account
	err := s.view(ctx, func(t *txn) error {
		var err error
		a, err = t.account(id)
		return err
	})
	return a, err
}

// DefaultAccount returns the company's default account.
func (s *Service) DefaultAccount(ctx context.Context) (Account, error) {
	var a Account
	err := s.view(ctx, func(t *txn) error {
		var err error
		a, err = t.defaultAccount()
		return err
	})
	return a, err
}

// ListAccounts returns the company's accounts, newest first.
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
			if err := t.fillBalance(&out[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, p.info(total), err
}

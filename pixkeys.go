package payments

import (
	"context"
	"errors"

	"github.com/pixfoundry/payments/store"
)

// The Pix key registry: one record per Pix key of every company, in the system space, so
// that a key names one place money goes on the whole platform, not only in one company.
// A bank reports a Pix by the key it was sent to, not by company; the registry is how
// ReceiveBankPix finds the company, and why two companies can never hold one key.
//
// The registry holds the keys a company receives at: its own (the default account's) and
// its other accounts'. A subaccount's key is not one: it is its owner's key at their own
// bank, where its withdrawals go, and two companies may share it.
//
// A key is claimed in the transaction that gives it to its owner (a company's creation,
// UpdateCompany's new key, CreateAccount, CreatePixKey) and released in the one that
// takes it away (UpdateCompany's old key, DeletePixKey), so the registry and the
// companies' records never disagree. A key another company holds is refused: a conflict on the field that
// gave it, and nothing is written.
const (
	collPixKeys = "pix_keys" // system space: one record per canonical Pix key, by the key

	// migrationPixKeys1: the keys of companies and accounts from before the registry are
	// recorded in it.
	migrationPixKeys1 = "pix-keys-1"
)

// What a registered Pix key belongs to in its company.
const (
	keyOfCompany = "company" // the company's own key: its default account's
	keyOfAccount = "account" // another account's (AccountID says which)
	// keyOfRegistered is a key the company registered besides its default
	// (pixkeys_company.go): its default account's too.
	keyOfRegistered = "registered"
)

// pixKeyOwner is the registry record of one Pix key: the company that holds it and what
// holds it there.
type pixKeyOwner struct {
	Company string `json:"company"`
	Kind    string `json:"kind"` // keyOfCompany, keyOfAccount or keyOfRegistered
	// AccountID is the account whose key it is, for keyOfAccount.
	AccountID string `json:"accountId,omitempty"`
}

// pixKeyOwnerOf reads the registry record of the canonical key; ok is false when no
// company holds it.
func (t *txn) pixKeyOwnerOf(key string) (o pixKeyOwner, ok bool, err error) {
	r, err := t.tx.Get(collPixKeys, systemSpace, key)
	if ok, err := found(storeErr(err, "Pix key")); err != nil || !ok {
		return pixKeyOwner{}, false, err
	}
	if err := decode(r, &o); err != nil {
		return pixKeyOwner{}, false, err
	}
	return o, true, nil
}

// claimPixKey records that the canonical key belongs to o (of the transaction's company)
// from now on. A key another company holds is a conflict on field; so is one the company
// holds already (the company's own checks, pixKeyFree, say where).
func (t *txn) claimPixKey(field, key string, o pixKeyOwner) error {
	o.Company = t.company
	prev, ok, err := t.pixKeyOwnerOf(key)
	switch {
	case err != nil:
		return err
	case ok && prev.Company != t.company:
		return conflict(field, "Pix key %s belongs to another company", key)
	case ok:
		return conflict(field, "Pix key %s is already a key of the company", key)
	}
	r, err := encode(key, o, nil, nil)
	if err != nil {
		return err
	}
	err = t.tx.Insert(collPixKeys, systemSpace, r)
	if errors.Is(err, store.ErrConflict) { // not there when read: a store that does not hold misses
		return conflict(field, "Pix key %s belongs to another company", key)
	}
	return storeErr(err, "Pix key")
}

// setPixKeyKind records that the canonical key, which the transaction's company holds, is
// now of kind (SetDefaultPixKey swaps keyOfCompany and keyOfRegistered).
func (t *txn) setPixKeyKind(key, kind string) error {
	r, err := encode(key, pixKeyOwner{Company: t.company, Kind: kind}, nil, nil)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Put(collPixKeys, systemSpace, r), "Pix key")
}

// releasePixKey removes the canonical key from the registry if the transaction's company
// holds it: the company no longer receives at it, and another company may claim it.
func (t *txn) releasePixKey(key string) error {
	o, ok, err := t.pixKeyOwnerOf(key)
	if err != nil || !ok || o.Company != t.company {
		return err
	}
	return storeErr(t.tx.Delete(collPixKeys, systemSpace, key), "Pix key")
}

// migratePixKeys records in the registry, once per database (see migrateOnce), the Pix
// keys of every company and account made before it existed. Companies are
// taken in creation order, so when older data has one key in two companies the first
// company created keeps it; the other is logged (a warning) and left without it in the
// registry: its records are not changed, and a Pix to that key routes to the first.
func (s *Service) migratePixKeys(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationPixKeys1, func(co *Service) error {
		err := co.update(ctx, func(t *txn) error {
			c, err := t.loadCompany()
			if err != nil {
				return err
			}
			return t.backfillPixKey(c.PixKey, pixKeyOwner{Kind: keyOfCompany})
		})
		if err != nil {
			return err
		}
		return eachBatch(ctx, co, collAccounts, indexAll, func(t *txn, id string, a *Account) error {
			if a.IsDefault {
				return nil // its key is the company's
			}
			return t.backfillPixKey(a.PixKey, pixKeyOwner{Kind: keyOfAccount, AccountID: id})
		})
	})
}

// backfillPixKey records the canonical key as o's (of the transaction's company) unless the
// registry has it already: the company's own (a run before, or a company created since)
// is left as it is, another company's is left to it with a warning in the log.
func (t *txn) backfillPixKey(key string, o pixKeyOwner) error {
	if key == "" {
		return nil
	}
	prev, ok, err := t.pixKeyOwnerOf(key)
	switch {
	case err != nil:
		return err
	case ok && prev.Company != t.company:
		company, holder := t.company, prev.Company
		t.after(func(context.Context) {
			t.svc.core.log.Warn("Pix key held by two companies: the first keeps it, Pix to it are routed there",
				"key", key, "company", company, "holder", holder)
		})
		return nil
	case ok:
		return nil
	}
	o.Company = t.company
	r, err := encode(key, o, nil, nil)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Insert(collPixKeys, systemSpace, r), "Pix key")
}

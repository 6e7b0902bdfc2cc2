package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

const (
	collSubaccounts         = "subaccounts"
	collSubaccountTransfers = "subaccount_transfers"
)

// Subaccount is a balance inside the company, addressed by a Pix key (of the seller,
// driver, branch... it belongs to). Its money is part of the company's, kept apart.
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

// SubaccountTransferParams move money from one subaccount to another. The key types are
// CPF, CNPJ, EMAIL, PHONE or RANDOM (EVP); when empty, the type is detected from the key.
// CorrelationID, when given, makes the transfer idempotent: a retry with the same
// correlationID returns the first transfer and moves nothing.
type SubaccountTransferParams struct {
	Value          int64
	FromPixKey     string
	FromPixKeyType string
	ToPixKey       string
	ToPixKeyType   string
	CorrelationID  string
}

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
// unchanged; created says which.
func (s *Service) CreateSubaccount(ctx context.Context, p CreateSubaccountParams) (Subaccount, bool, error) {
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
	var sa Subaccount
	var created bool
	err = s.update(ctx, func(t *txn) error {
		sa, created = Subaccount{}, false // afresh on every run: the store may run this function again
		var err error
		sa, err = t.subaccount("pixKey", key)
		if ok, err := found(err); err != nil || ok {
			return err
		}
		sa = Subaccount{Name: name, PixKey: key, CreatedAt: t.now, UpdatedAt: t.now}
		if err := t.insert(collSubaccounts, key, "subaccount", sa, nil, []store.Index{byCreation(t.now)}); err != nil {
			return err
		}
		created = true
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
func (s *Service) TransferBetweenSubaccounts(ctx context.Context, p SubaccountTransferParams) (SubaccountTransfer, error) {
	if err := checkCentavos("value", p.Value, false); err != nil {
		return SubaccountTransfer{}, err
	}
	from, _, err := parsePixKey("fromPixKey", p.FromPixKey, p.FromPixKeyType)
	if err != nil {
		return SubaccountTransfer{}, err
	}
	to, _, err := parsePixKey("toPixKey", p.ToPixKey, p.ToPixKeyType)
	if err != nil {
		return SubaccountTransfer{}, err
	}
	if from == to {
		return SubaccountTransfer{}, invalid("toPixKey", "toPixKey must differ from fromPixKey")
	}
	cid, err := cleanCorrelationID("correlationID", p.CorrelationID, false)
	if err != nil {
		return SubaccountTransfer{}, err
	}
	if cid == "" {
		cid = s.core.ids.uuid()
	}
	var tr SubaccountTransfer
	err = s.update(ctx, func(t *txn) error {
		tr = SubaccountTransfer{} // afresh on every run: the store may run this function again
		id, err := t.getByKey(collSubaccountTransfers, "correlationID:"+cid, "transfer", &tr)
		if ok, err := found(err); err != nil {
			return err
		} else if ok {
			tr.ID = id
			if tr.Value != p.Value || tr.Origin.PixKey != from || tr.Destination.PixKey != to {
				return conflict("correlationID", "a different transfer with correlationID %q already exists", cid)
			}
			return nil
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
			[]string{"correlationID:" + cid}, []store.Index{byCreation(t.now)})
	})
	return tr, err
}

// mustHaveSubaccount refuses a key (canonical) that names no subaccount of the company:
// a charge's subaccount or split must exist when the charge is created, so that its
// payment goes where the charge says.
func (t *txn) mustHaveSubaccount(field, key string) error {
	_, err := t.tx.Get(collSubaccounts, t.company, key)
	ok, err := found(storeErr(err, "subaccount"))
	if err != nil {
		return err
	}
	if !ok {
		return invalid(field, "%s names no subaccount: create the subaccount %s first", field, key)
	}
	return nil
}

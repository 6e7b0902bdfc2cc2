package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collTransfers = "transfers"

// CreateTransferParams move money between two accounts of the company, named by their Pix
// keys (see Account). The key types are optional (CPF, CNPJ, EMAIL, PHONE or RANDOM); when
// given, a key must be of that type, and when empty the type is detected from the key.
// CorrelationID, when given, makes the transfer idempotent; when empty one is made.
type CreateTransferParams struct {
	Value          int64
	FromPixKey     string
	FromPixKeyType string
	ToPixKey       string
	ToPixKeyType   string
	CorrelationID  string
}

// Transfer is a move of money between two accounts of the company. It does not go
// through the bank, so it is not a Pix transaction: it is kept in a collection of its own
// (GetTransfer), not in ListTransactions.
type Transfer struct {
	ID            string    `json:"-"`
	Value         int64     `json:"value"`
	Time          time.Time `json:"time"`
	CorrelationID string    `json:"correlationID"`
	FromPixKey    string    `json:"fromPixKey"`
	ToPixKey      string    `json:"toPixKey"`
	FromAccountID string    `json:"fromAccountId"`
	ToAccountID   string    `json:"toAccountId"`
}

// TransferBetweenAccounts moves Value centavos from the available balance of the
// company's account with FromPixKey to its account with ToPixKey: one balanced ledger
// entry, in one transaction. It fails, moving nothing, on a value that is not 1 to
// MaxChargeValue (EINVALID), a malformed key or one not of its given type (EINVALID), a
// key that names no account of the company (ENOTFOUND, naming fromPixKey or toPixKey), the
// same account on both sides (EINVALID on toPixKey), and a value above the origin's
// available balance (EPRECONDITION on value).
//
// With a correlationID already used, it returns that first transfer and moves nothing; if
// the retry asks for a different transfer (value or keys), that is a conflict on
// correlationID. A refused transfer does not use up its correlationID.
func (s *Service) TransferBetweenAccounts(ctx context.Context, p CreateTransferParams) (Transfer, error) {
	from, to, cid, err := s.transferEnds("account", p.Value, p.FromPixKey, p.FromPixKeyType, p.ToPixKey, p.ToPixKeyType, p.CorrelationID)
	if err != nil {
		return Transfer{}, err
	}
	var tr Transfer
	err = s.update(ctx, func(t *txn) error {
		done, ok, err := replay(t, collTransfers, "transfer", cid, func(tr *Transfer, id string) { tr.ID = id },
			func(tr Transfer) bool { return tr.Value == p.Value && tr.FromPixKey == from && tr.ToPixKey == to },
			"a different transfer with correlationID %q already exists", cid)
		if err != nil || ok {
			tr = done // a retry: nothing moves again
			return err
		}
		co, err := t.loadCompany()
		if err != nil {
			return err
		}
		src, err := t.accountByKey(co, "fromPixKey", from)
		if err != nil {
			return err
		}
		dst, err := t.accountByKey(co, "toPixKey", to)
		if err != nil {
			return err
		}
		if src.AccountID == dst.AccountID { // cannot happen while keys are unique; never move money in a circle
			return invalid("toPixKey", "toPixKey must name another account than fromPixKey")
		}
		if src.Balance.Available < p.Value {
			return precondition("value", "Account does not have enough balance to complete the operation")
		}
		tr = Transfer{ID: t.newID(), Value: p.Value, Time: t.now, CorrelationID: cid,
			FromPixKey: from, ToPixKey: to, FromAccountID: src.AccountID, ToAccountID: dst.AccountID}
		if _, err := t.post("account.transfer", tr.ID,
			Posting{Book: accountBook(src.AccountID), Amount: -p.Value},
			Posting{Book: accountBook(dst.AccountID), Amount: p.Value}); err != nil {
			return err
		}
		return t.insert(collTransfers, tr.ID, "transfer", tr, []string{correlationKey(cid)}, []store.Index{byCreation(t.now)})
	})
	return result(tr, err)
}

// GetTransfer returns the transfer between accounts with the correlationID.
func (s *Service) GetTransfer(ctx context.Context, correlationID string) (Transfer, error) {
	var tr Transfer
	err := s.view(ctx, func(t *txn) error {
		id, err := t.getByKey(collTransfers, correlationKey(correlationID), "transfer", &tr)
		tr.ID = id
		return err
	})
	return tr, err
}

// transferEnds checks what a transfer between two of the company's books (accounts, or
// subaccounts: noun) takes: a value in centavos, two different Pix keys (of the given
// types, or detected when empty) and an optional correlationID, a new one from the id
// source when empty. It returns the canonical keys and the correlationID.
func (s *Service) transferEnds(noun string, value int64, fromKey, fromType, toKey, toType, correlationID string) (from, to, cid string, err error) {
	if err := checkCentavos("value", value, false); err != nil {
		return "", "", "", err
	}
	if from, _, err = parsePixKey("fromPixKey", fromKey, fromType); err != nil {
		return "", "", "", err
	}
	if to, _, err = parsePixKey("toPixKey", toKey, toType); err != nil {
		return "", "", "", err
	}
	if from == to {
		return "", "", "", invalid("toPixKey", "toPixKey must name another %s than fromPixKey", noun)
	}
	if cid, err = cleanCorrelationID("correlationID", correlationID, false); err != nil {
		return "", "", "", err
	}
	if cid == "" {
		cid = s.core.ids.uuid()
	}
	return from, to, cid, nil
}

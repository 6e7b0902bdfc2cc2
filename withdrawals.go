package payments

import (
	"context"
	"encoding/base64"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collWithdrawals = "withdrawals"

// WithdrawalPolicy is the fee on an account withdrawal: a withdrawal of less than MinFree
// centavos pays Fee centavos; from MinFree up it is free.
type WithdrawalPolicy struct {
	MinFree int64 `json:"minFree"`
	Fee     int64 `json:"fee"`
}

// DefaultWithdrawalPolicy charges R$ 1,00 on account withdrawals below R$ 500,00.
func DefaultWithdrawalPolicy() WithdrawalPolicy { return WithdrawalPolicy{MinFree: 50000, Fee: 100} }

// FeeFor is the fee on a withdrawal of value.
func (p WithdrawalPolicy) FeeFor(value int64) int64 {
	if value < p.MinFree {
		return p.Fee
	}
	return 0
}

func (c Company) withdrawals() WithdrawalPolicy {
	if c.WithdrawalPolicy != nil {
		return *c.WithdrawalPolicy
	}
	return DefaultWithdrawalPolicy()
}

// WithdrawalStatus is where a withdrawal stands.
type WithdrawalStatus string

// Withdrawal statuses: CREATED (held and sent) moves to CONFIRMED or FAILED (the money,
// fee included, returned) once, when the bank settles.
const (
	WithdrawalCreated   WithdrawalStatus = "CREATED"
	WithdrawalConfirmed WithdrawalStatus = "CONFIRMED"
	WithdrawalFailed    WithdrawalStatus = "FAILED"
)

// Withdrawal takes money out to the owner's own Pix key: a company account's to the
// company's key, a subaccount's to the subaccount's key. It is an outgoing order (see
// orders.go): the value, and the fee, are held when it is created and leave when the bank
// confirms. Each withdrawal is also a WITHDRAW transaction, found by the transaction list's
// withdrawal filter under the withdrawal's id or its endToEndId.
type Withdrawal struct {
	ID string `json:"id"`
	// AccountID is the account withdrawn from; Subaccount the subaccount's Pix key instead.
	AccountID  string `json:"accountId,omitempty"`
	Subaccount string `json:"subaccount,omitempty"`
	Value      int64  `json:"value"`
	// Fee is taken with the value when the withdrawal is confirmed (account withdrawals
	// below the policy's MinFree); a failed withdrawal returns it.
	Fee              int64            `json:"fee"`
	Status           WithdrawalStatus `json:"status"`
	CorrelationID    string           `json:"correlationID"`
	DestinationAlias string           `json:"destinationAlias"`
	Comment          string           `json:"comment"`
	EndToEndID       string           `json:"endToEndId"`
	Reason           string           `json:"reason,omitempty"`
	TransactionID    string           `json:"transactionID"` // of its WITHDRAW transaction
	CreatedAt        time.Time        `json:"createdAt"`
	UpdatedAt        time.Time        `json:"updatedAt"`
}

// WithdrawInfo is the withdraw object of a WITHDRAW transaction.
type WithdrawInfo struct {
	ID          string    `json:"withdrawalId"`
	Value       int64     `json:"value"`
	Time        time.Time `json:"time"`
	InfoPagador string    `json:"infoPagador"`
	EndToEndID  string    `json:"endToEndId"`
	CreatedAt   time.Time `json:"createdAt"`
}

// AccountWithdrawal is the result of WithdrawFromAccount: the withdrawal, the account's
// balance and the WITHDRAW transaction, as they stand when the call returns.
type AccountWithdrawal struct {
	Withdrawal  Withdrawal
	Account     Account
	Transaction Transaction
}

// WithdrawOptions are the optional parts of a withdrawal.
type WithdrawOptions struct {
	// CorrelationID makes a withdrawal safe to retry: a second call with the correlationID
	// of a withdrawal made before, from the same account or subaccount and for the same
	// value, returns that withdrawal as it stands and moves nothing; with another source
	// or value it is a conflict (ECONFLICT) that moves nothing. A retry of a subaccount
	// withdrawal with value 0 (the whole balance) matches the first whatever its value.
	// Empty, each call is a new withdrawal with a correlationID made for it.
	CorrelationID string
}

// withdrawCorrelation is the cleaned correlationID of opts, "" when there is none.
func withdrawCorrelation(opts []WithdrawOptions) (string, error) {
	if len(opts) == 0 {
		return "", nil
	}
	return cleanCorrelationID("correlationID", opts[0].CorrelationID, false)
}

// WithdrawFromAccount withdraws value centavos from the company account accountID to the
// company's Pix key. A value below the policy's MinFree also pays its Fee (see
// WithdrawalPolicy); value and fee must fit in the available balance, or it is an
// EPRECONDITION *Error on "value" that moves nothing. The value and fee are held in the transaction that records the
// withdrawal CREATED and its WITHDRAW transaction; then the Rail sends it (a context that
// does not end with ctx) and the result is read again, so the endToEndId is there when the
// bank answered at once. Each call is a new withdrawal, unless opts gives the
// correlationID of one made before (see WithdrawOptions).
func (s *Service) WithdrawFromAccount(ctx context.Context, accountID string, value int64, opts ...WithdrawOptions) (AccountWithdrawal, error) {
	if err := checkCentavos("value", value, false); err != nil {
		return AccountWithdrawal{}, err
	}
	corr, err := withdrawCorrelation(opts)
	if err != nil {
		return AccountWithdrawal{}, err
	}
	var w Withdrawal
	err = s.update(ctx, func(t *txn) error {
		acct, err := t.account(accountID)
		if err != nil {
			return err
		}
		if done, ok, err := t.withdrawalRetried(corr, func(d Withdrawal) bool { return d.AccountID == acct.AccountID && d.Value == value }); err != nil || ok {
			w = done
			return err
		}
		co, err := t.loadCompany()
		if err != nil {
			return err
		}
		fee := co.withdrawals().FeeFor(value)
		if acct.Balance.Available < value+fee {
			return precondition("value", "not enough available balance to withdraw %s (fee %s)", formatReais(value), formatReais(fee))
		}
		w, err = t.createWithdrawal(Withdrawal{AccountID: acct.AccountID, Value: value, Fee: fee, CorrelationID: corr,
			DestinationAlias: co.PixKey, Comment: "Saque"}, accountSource(acct.AccountID))
		return err
	})
	if err != nil {
		return AccountWithdrawal{}, err
	}
	var out AccountWithdrawal
	err = s.view(ctx, func(t *txn) error {
		var err error
		if out.Withdrawal, err = t.withdrawal(w.ID); err != nil {
			return err
		}
		if out.Account, err = t.account(accountID); err != nil {
			return err
		}
		if err := t.fillPixKey(&out.Account); err != nil {
			return err
		}
		out.Transaction, err = t.findTransaction(w.TransactionID)
		return err
	})
	return out, err
}

// WithdrawFromSubaccount withdraws value centavos (0: the whole balance) from the
// subaccount with the Pix key to that same key, through the Rail, without a fee. A
// subaccount without balance, or a value above its balance, is an EPRECONDITION *Error on
// "value" that moves nothing.
// The value is held on the subaccount (its blocked book) until the bank settles. It
// returns the withdrawal as created (CREATED). Each call is a new withdrawal, unless opts
// gives the correlationID of one made before (see WithdrawOptions): that one is returned
// as it stands.
func (s *Service) WithdrawFromSubaccount(ctx context.Context, pixKey string, value int64, opts ...WithdrawOptions) (Withdrawal, error) {
	key, _, err := parsePixKey("pixKey", pixKey, "")
	if err != nil {
		return Withdrawal{}, err
	}
	if err := checkCentavos("value", value, true); err != nil {
		return Withdrawal{}, err
	}
	corr, err := withdrawCorrelation(opts)
	if err != nil {
		return Withdrawal{}, err
	}
	var w Withdrawal
	err = s.update(ctx, func(t *txn) error {
		sa, err := t.subaccount("pixKey", key)
		if err != nil {
			return err
		}
		if done, ok, err := t.withdrawalRetried(corr, func(d Withdrawal) bool { return d.Subaccount == key && (value == 0 || d.Value == value) }); err != nil || ok {
			w = done
			return err
		}
		v := value
		switch {
		case sa.Balance <= 0:
			return precondition("value", "subaccount %s has no balance to withdraw", key)
		case v == 0:
			v = sa.Balance
		case v > sa.Balance:
			return precondition("value", "subaccount %s does not have enough balance to withdraw %s", key, formatReais(v))
		}
		w, err = t.createWithdrawal(Withdrawal{Subaccount: key, Value: v, DestinationAlias: key, CorrelationID: corr,
			Comment: cutRunes("Saque da subconta "+sa.Name, MaxComment)}, subaccountSource(key)) // a name may be longer than a comment
		return err
	})
	return w, err
}

// withdrawalRetried finds the withdrawal with the correlationID corr, if corr is given:
// ok says there is one, and it is the one asked for again (same); a withdrawal under corr
// that is not the same is a conflict.
func (t *txn) withdrawalRetried(corr string, same func(Withdrawal) bool) (Withdrawal, bool, error) {
	return replay(t, collWithdrawals, "withdrawal", corr, nil, same,
		"a withdrawal with correlationID %q already exists, from another account or of another value", corr)
}

// createWithdrawal records a withdrawal CREATED, its WITHDRAW transaction and its order
// (which holds value and fee on src). w's correlationID, when it has one, is unique among
// the company's withdrawals; otherwise one is made.
func (t *txn) createWithdrawal(w Withdrawal, src holdSource) (Withdrawal, error) {
	w.ID, w.Status, w.CreatedAt, w.UpdatedAt = t.newID(), WithdrawalCreated, t.now, t.now
	if w.CorrelationID == "" {
		w.CorrelationID = t.svc.core.ids.uuid()
	}
	w.TransactionID = t.svc.core.ids.hex32()
	o := order{ID: w.ID, Kind: OrderWithdrawal, Source: src, Value: w.Value, Fee: w.Fee,
		Key: w.DestinationAlias, Comment: w.Comment}
	if err := t.createOrder(o); err != nil {
		return Withdrawal{}, err
	}
	x := Transaction{ID: t.newID(), Type: TransactionWithdraw, Status: string(WithdrawalCreated), Value: w.Value, Fee: w.Fee,
		Time: t.now, TransactionID: w.TransactionID, InfoPagador: w.Comment, PixKey: w.DestinationAlias,
		Withdraw:  &WithdrawInfo{ID: w.ID, Value: w.Value, Time: t.now, InfoPagador: w.Comment, CreatedAt: t.now},
		CreatedAt: t.now}
	x.GlobalID = base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + x.ID))
	if err := t.insertTransaction(x); err != nil {
		return Withdrawal{}, err
	}
	return w, t.insert(collWithdrawals, w.ID, "withdrawal", w, w.keys(), []store.Index{byCreation(w.CreatedAt)})
}

// keys are a withdrawal's unique keys: its correlationID.
func (w Withdrawal) keys() []string { return []string{correlationKey(w.CorrelationID)} }

func (t *txn) withdrawal(id string) (Withdrawal, error) {
	var w Withdrawal
	err := t.get(collWithdrawals, id, "withdrawal", &w)
	return w, err
}

// withdrawalSettled records the final outcome of a withdrawal's order on the withdrawal
// and its WITHDRAW transaction (CONFIRMED with the endToEndId, or FAILED).
func (t *txn) withdrawalSettled(o order) error {
	w, err := t.withdrawal(o.ID)
	if err != nil || w.Status != WithdrawalCreated {
		return err
	}
	w.Status, w.EndToEndID, w.UpdatedAt = WithdrawalConfirmed, o.SettledEndToEndID, t.now
	if o.Status == OrderFailed {
		w.Status, w.Reason = WithdrawalFailed, o.Reason
	}
	if err := t.put(collWithdrawals, w.ID, "withdrawal", w, w.keys(), []store.Index{byCreation(w.CreatedAt)}); err != nil {
		return err
	}
	x, err := t.findTransaction(w.TransactionID)
	if err != nil {
		return err
	}
	x.Status, x.EndToEndID = string(w.Status), w.EndToEndID
	x.Withdraw.EndToEndID = w.EndToEndID
	return t.saveTransaction(x)
}

package httpadapter

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
)

// accountWithdrawBody is the body of POST /account/{accountId}/withdraw ({value}) and of
// the Node SDK's POST /account/{accountId} ({accountId, value}).
type accountWithdrawBody struct {
	AccountID     string   `json:"accountId"`
	Value         centavos `json:"value"`
	CorrelationID string   `json:"correlationID"` // ours, optional: see withdrawCorrelationID
}

// IdempotencyKeyHeader may carry the correlationID of a request that moves money and
// whose body may leave it out (a withdrawal, a transfer, a subaccount's transfer, debit
// or credit): see idempotencyID.
const IdempotencyKeyHeader = "Idempotency-Key"

// idempotencyID is the correlationID that makes a money-moving request safe to retry: the
// body's correlationID or the Idempotency-Key header, which must agree when both are sent.
// A retry with the same correlationID answers what the first request did and moves
// nothing. Without either, each request moves money again: the real API makes every
// withdrawal a new one and takes an optional correlationID for transfers, so a client
// retrying after a lost reply could not tell its retry from the first.
func idempotencyID(r *http.Request, body string) (string, error) {
	header := r.Header.Get(IdempotencyKeyHeader)
	if header != "" && body != "" && header != body {
		return "", invalid("correlationID", "correlationID in the body differs from the Idempotency-Key header")
	}
	return cmp.Or(body, header), nil
}

// withdrawCorrelationID is idempotencyID as a withdrawal's options.
func withdrawCorrelationID(r *http.Request, body string) (payments.WithdrawOptions, error) {
	id, err := idempotencyID(r, body)
	return payments.WithdrawOptions{CorrelationID: id}, err
}

// withdrawTransaction is the transaction of an account withdrawal reply.
type withdrawTransaction struct {
	EndToEndID    string    `json:"endToEndId"`
	Value         int64     `json:"value"`
	Fee           int64     `json:"fee"`
	Status        string    `json:"status"`
	TransactionID string    `json:"transactionID"`
	WithdrawalID  string    `json:"withdrawalId"`
	Time          time.Time `json:"time"`
}

// accountWithdrawal is {account, transaction}: the Node SDK's whole reply, and the spec's
// reply under "withdraw".
type accountWithdrawal struct {
	Account     payments.Account    `json:"account"`
	Transaction withdrawTransaction `json:"transaction"`
}

// accountWithdrawReply is the spec's reply: {withdraw: {account, transaction}}.
type accountWithdrawReply struct {
	Withdraw accountWithdrawal `json:"withdraw"`
}

// handleAccountWithdraw: POST /account/{accountId}/withdraw {value, correlationID?} → 200 {withdraw:
// {account, transaction}}; with sdkShape (the Node SDK's POST /account/{accountId} with
// {accountId, value}) → 200 {account, transaction}. The value goes to the company's Pix
// key; below the minimum free amount it also pays the withdrawal fee. An unknown account
// is 404 "Account not found", as the account lookups are; not enough balance a 400.
func handleAccountWithdraw(log *slog.Logger, sdkShape bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[accountWithdrawBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		id := r.PathValue("accountId")
		if body.AccountID != "" && body.AccountID != id {
			writeError(w, r, log, invalid("accountId", "accountId in the body differs from the path"))
			return
		}
		opts, err := withdrawCorrelationID(r, body.CorrelationID)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		res, err := company(r).WithdrawFromAccount(r.Context(), id, int64(body.Value), opts)
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		wd := res.Withdrawal
		out := accountWithdrawal{Account: res.Account, Transaction: withdrawTransaction{EndToEndID: wd.EndToEndID, Value: wd.Value,
			Fee: wd.Fee, Status: string(wd.Status), TransactionID: wd.TransactionID, WithdrawalID: wd.ID, Time: wd.CreatedAt}}
		if sdkShape {
			encode(w, http.StatusOK, out)
			return
		}
		encode(w, http.StatusOK, accountWithdrawReply{Withdraw: out})
	})
}

// subaccountWithdrawBody is the body of POST /subaccount/{id}/withdraw; the body, or its
// value, may be left out to withdraw the whole balance.
type subaccountWithdrawBody struct {
	Value         *centavos `json:"value"`
	CorrelationID string    `json:"correlationID"` // ours, optional: see withdrawCorrelationID
}

// onlyKnownFields refuses a JSON object body with a member other than known: for a
// request whose missing field has a default that costs money (a subaccount withdraw with
// no value takes the whole balance), a misspelled field is a 400 naming it, not the
// default. raw has been decoded already, so it is an object.
func onlyKnownFields(raw []byte, known ...string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return invalid("", "request body must be a JSON object")
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(known, name) { // keys match exactly, as decode matches them
			return invalid(name, "unknown field %q: this request takes only %s; leave value out to withdraw the whole balance", name, strings.Join(known, " and "))
		}
	}
	return nil
}

// subaccountWithdrawTransaction is the reply's transaction.
type subaccountWithdrawTransaction struct {
	Status           payments.WithdrawalStatus `json:"status"`
	Value            int64                     `json:"value"`
	EndToEndID       string                    `json:"endToEndId"`
	CorrelationID    string                    `json:"correlationID"`
	DestinationAlias string                    `json:"destinationAlias"`
	Comment          string                    `json:"comment"`
}

// subaccountWithdrawReply is {transaction, withdraw}: the official document's schema puts
// the withdrawal under withdraw.account, its example under transaction, and clients read
// either; both carry the same transaction.
type subaccountWithdrawReply struct {
	Transaction subaccountWithdrawTransaction `json:"transaction"`
	Withdraw    struct {
		Account subaccountWithdrawTransaction `json:"account"`
	} `json:"withdraw"`
}

// handleSubaccountWithdraw: POST /subaccount/{id}/withdraw {value?, correlationID?} → 200 {transaction:
// {status: CREATED, value, correlationID, destinationAlias, comment}, withdraw: {account: the same}}: the value (or the
// whole balance) to the subaccount's own Pix key. An empty subaccount, a value above its
// balance or a value not positive is a 400. (The Node SDK 1.3.3 cannot call this route:
// it sends a GET with a body.)
func handleSubaccountWithdraw(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var value int64
		var corr string
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, r, log, invalid("", "request body too large or unreadable"))
			return
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			r.Body = io.NopCloser(bytes.NewReader(raw))
			body, err := decode[subaccountWithdrawBody](r)
			if err != nil {
				writeError(w, r, log, err)
				return
			}
			if body.Value == nil {
				if err := onlyKnownFields(raw, "value", "correlationID"); err != nil {
					writeError(w, r, log, err) // a misspelled value must not withdraw everything
					return
				}
			} else {
				if *body.Value <= 0 {
					writeError(w, r, log, invalid("value", "value must be a positive number of centavos; leave it out to withdraw the whole balance"))
					return
				}
				value = int64(*body.Value)
			}
			corr = body.CorrelationID
		} else if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "json") {
			writeError(w, r, log, invalid("", "request body must be JSON (Content-Type: application/json)"))
			return
		}
		opts, err := withdrawCorrelationID(r, corr)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		wd, err := company(r).WithdrawFromSubaccount(r.Context(), r.PathValue("id"), value, opts)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		reply := subaccountWithdrawReply{Transaction: subaccountWithdrawTransaction{Status: wd.Status, Value: wd.Value,
			EndToEndID: wd.EndToEndID, CorrelationID: wd.CorrelationID, DestinationAlias: wd.DestinationAlias, Comment: wd.Comment}}
		reply.Withdraw.Account = reply.Transaction
		encode(w, http.StatusOK, reply)
	})
}

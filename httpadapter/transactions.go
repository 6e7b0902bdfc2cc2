package httpadapter

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/pixfoundry/payments"
)

// transactionView is a transaction as the wire shows it: withdraw is the withdrawal of a
// WITHDRAW transaction and null on every other, as the spec lists it on every transaction;
// webhookSent is the webhook audit, [] when there is none; endToEndID is endToEndId again,
// under the legacy name the real API still sends beside it (clients written against it may
// read either).
type transactionView struct {
	payments.Transaction
	WebhookSent      []payments.WebhookSent `json:"webhookSent"`
	LegacyEndToEndID string                 `json:"endToEndID"`
}

func viewTransaction(x payments.Transaction) transactionView {
	v := transactionView{Transaction: x, WebhookSent: x.WebhookSent, LegacyEndToEndID: x.EndToEndID}
	if v.WebhookSent == nil {
		v.WebhookSent = []payments.WebhookSent{}
	}
	return v
}

// transactionReply is the reply of GET /transaction/{id}.
type transactionReply struct {
	Transaction transactionView `json:"transaction"`
}

// transactionListReply is the reply of GET /transaction.
type transactionListReply struct {
	Status       string            `json:"status"`
	Transactions []transactionView `json:"transactions"`
	PageInfo     payments.PageInfo `json:"pageInfo"`
}

// handleTransactionGet: GET /transaction/{id} (transactionID or endToEndId) → 200
// {transaction}.
func handleTransactionGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, err := company(r).GetTransaction(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, transactionReply{Transaction: viewTransaction(x)})
	})
}

// handleTransactionList: GET /transaction?start&end&charge&pixQrCode&withdrawal&type&
// hasWebhook&skip&limit → 200 {status:"OK", transactions, pageInfo}, newest first. The top-level status
// is there because the Java SDK requires it. The filters combine: a transaction is listed
// when it matches all of them.
func handleTransactionList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := transactionFilter(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		xs, page, err := company(r).ListTransactions(r.Context(), f)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		reply := transactionListReply{Status: "OK", Transactions: make([]transactionView, len(xs)), PageInfo: page}
		for i, x := range xs {
			reply.Transactions[i] = viewTransaction(x)
		}
		encode(w, http.StatusOK, reply)
	})
}

func transactionFilter(r *http.Request) (payments.TransactionFilter, error) {
	var f payments.TransactionFilter
	var err error
	if f.ListParams, err = listParams(r); err != nil {
		return f, err
	}
	if f.Start, err = queryTime(r, "start"); err != nil {
		return f, err
	}
	if f.End, err = queryTime(r, "end"); err != nil {
		return f, err
	}
	q := r.URL.Query()
	f.Charge = q.Get("charge")
	f.PixQrCode = q.Get("pixQrCode")
	f.Withdrawal = q.Get("withdrawal")
	f.Type = payments.TransactionType(q.Get("type"))
	if strings.TrimSpace(q.Get("hasWebhook")) != "" {
		hw, err := queryBool(r, "hasWebhook")
		if err != nil {
			return f, err
		}
		f.HasWebhook = &hw
	}
	return f, nil
}

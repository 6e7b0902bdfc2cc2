package httpadapter

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/pixfoundry/payments"
)

// addStatementRoutes registers the statements: the company's and a subaccount's.
func addStatementRoutes(k routeKit) {
	k.api("GET /statement", k.auth(handleStatement(k.log)))
	k.api("GET /subaccount/{id}/statement", k.auth(handleSubaccountStatement(k.log)))
}

// statementLineView is a line of the company statement as the document lists it. Values
// and balances are in centavos, as every value of this API.
type statementLineView struct {
	ID            string                     `json:"id"`
	Time          time.Time                  `json:"time"`
	Description   string                     `json:"description"`
	Balance       int64                      `json:"balance"`
	Value         int64                      `json:"value"`
	Type          payments.StatementLineType `json:"type"`
	TransactionID string                     `json:"transactionId"`
}

// subaccountStatementLineView is a line of a subaccount's statement as the document lists
// it: operationType instead of transactionId.
type subaccountStatementLineView struct {
	ID            string                      `json:"id"`
	Time          time.Time                   `json:"time"`
	Description   string                      `json:"description"`
	Balance       int64                       `json:"balance"`
	Value         int64                       `json:"value"`
	Type          payments.StatementLineType  `json:"type"`
	OperationType payments.StatementOperation `json:"operationType"`
}

// handleStatement: GET /statement?start&end&skip&limit → 200 [line], the statement of the
// company's default account (the document's "company's bank account"; it takes no account
// id), newest first. The document's answer is a bare array, with no envelope and no
// pageInfo: a client pages with skip until a page comes back shorter than its limit.
func handleStatement(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := statementFilter(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		lines, _, err := company(r).Statement(r.Context(), "", f)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		out := make([]statementLineView, len(lines))
		for i, l := range lines {
			out[i] = statementLineView{ID: l.ID, Time: l.Time, Description: l.Description, Balance: l.Balance,
				Value: l.Value, Type: l.Type, TransactionID: l.TransactionID}
		}
		encode(w, http.StatusOK, out)
	})
}

// handleSubaccountStatement: GET /subaccount/{id}/statement?start&end&skip&limit ({id} is
// the subaccount's Pix key) → 200 [line], newest first, a bare array as for GET /statement.
// An unknown key is 400 "Subaccount not found: <key>", as the document's example says.
func handleSubaccountStatement(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := statementFilter(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		lines, _, err := company(r).SubaccountStatement(r.Context(), r.PathValue("id"), f)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		out := make([]subaccountStatementLineView, len(lines))
		for i, l := range lines {
			out[i] = subaccountStatementLineView{ID: l.ID, Time: l.Time, Description: l.Description, Balance: l.Balance,
				Value: l.Value, Type: l.Type, OperationType: l.OperationType}
		}
		encode(w, http.StatusOK, out)
	})
}

// statementFilter reads start, end (RFC 3339), skip and limit.
func statementFilter(r *http.Request) (payments.StatementFilter, error) {
	var f payments.StatementFilter
	var err error
	if f.ListParams, err = listParams(r); err != nil {
		return f, err
	}
	if f.Start, err = queryTime(r, "start"); err != nil {
		return f, err
	}
	f.End, err = queryTime(r, "end")
	return f, err
}

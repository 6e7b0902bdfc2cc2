package httpadapter

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/pixfoundry/payments"
)

// handleAccountList: GET /account and GET /account/ (the spec's path) ?skip&limit → 200
// {accounts, pageInfo}.
func handleAccountList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		as, page, err := company(r).ListAccounts(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, accountListReply{Accounts: as, PageInfo: page})
	})
}

// handleAccountGet: GET /account/{accountId} → 200 {account} with its balance; an unknown
// id is 404 {"error":"Account not found"}, as the reference documents. The Java SDK sends the id inside literal braces ("{<id>}", a template bug); they are dropped.
func handleAccountGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := company(r).GetAccount(r.Context(), pathAccountID(r))
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, accountReply{Account: a})
	})
}

// pathAccountID is the {accountId} of the path, without the literal braces the Java SDK
// sends around it.
func pathAccountID(r *http.Request) string {
	id := r.PathValue("accountId")
	if inner, ok := strings.CutPrefix(id, "{"); ok {
		id = strings.TrimSuffix(inner, "}")
	}
	return id
}

// accountClosedReply is the reply of DELETE /account/{accountId}, as the official
// document gives it.
type accountClosedReply struct {
	AccountID string `json:"accountId"`
	Status    string `json:"status"`
}

// handleAccountClose: DELETE /account/{accountId} → 200 {accountId, status:"OK"}: the
// account is closed (payments.Service.CloseAccount). An unknown id is 404 {"error":
// "Account not found"}; an account with balance ("Account with balance cannot be
// deleted: ..."), one already closed ("Account already closed") and the default account
// are 400. GET on it afterwards still answers it, with closedAt; it no longer lists.
func handleAccountClose(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := company(r).CloseAccount(r.Context(), pathAccountID(r))
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, accountClosedReply{AccountID: a.AccountID, Status: "OK"})
	})
}

// accountBody is the optional body of POST /account. The real API takes none (it
// "duplicates" the account); pixKey and name are our extension.
type accountBody struct {
	PixKey string `json:"pixKey"`
	Name   string `json:"name"`
}

// accountReply is the reply of POST /account.
type accountReply struct {
	Account payments.Account `json:"account"`
}

// handleAccountCreate: POST /account with no body, or {pixKey, name} → 200 {account}: a
// new account of the company, empty, with the given Pix key or a random (EVP) one. A key
// already used by an account or subaccount of the company is 400.
func handleAccountCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decodeOptional[accountBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		a, err := company(r).CreateAccount(r.Context(), payments.CreateAccountParams{PixKey: body.PixKey, Name: body.Name})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, accountReply{Account: a})
	})
}

// decodeOptional is decode for a route whose body may be left out: an empty body (or
// only white space) is the zero T; anything else must be what decode accepts.
func decodeOptional[T any](r *http.Request) (T, error) {
	var zero T
	b, err := io.ReadAll(r.Body)
	if err != nil { // decode reports it (too large, unreadable)
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
		return decode[T](r)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return zero, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return decode[T](r)
}

// errReader is a reader that fails with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// accountListReply is the reply of GET /account. Fields are in the order of their JSON
// names, as a map would write them.
type accountListReply struct {
	Accounts []payments.Account `json:"accounts"`
	PageInfo payments.PageInfo  `json:"pageInfo"`
}

package httpadapter

import (
	"log/slog"
	"net/http"
	"strings"
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
		encode(w, http.StatusOK, map[string]any{"accounts": as, "pageInfo": page})
	})
}

// handleAccountGet: GET /account/{accountId} → 200 {account} with its balance; an unknown
// id is 404 {"error":"Account not found"}, as the reference documents. The Java SDK sends the id inside literal braces ("{<id>}", a template bug); they are dropped.
func handleAccountGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("accountId")
		if inner, ok := strings.CutPrefix(id, "{"); ok {
			id = strings.TrimSuffix(inner, "}")
		}
		a, err := company(r).GetAccount(r.Context(), id)
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, map[string]any{"account": a})
	})
}

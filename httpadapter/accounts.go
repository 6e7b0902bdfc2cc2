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

// handleAccountGet: GET /account/{accountId} → 200 {account} with its balance. The Java
// SDK sends the id inside literal braces ("{<id>}", a template bug); they are dropped.
func handleAccountGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("accountId")
		if inner, ok := strings.CutPrefix(id, "{"); ok {
			id = strings.TrimSuffix(inner, "}")
		}
		a, err := company(r).GetAccount(r.Context(), id)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, map[string]any{"account": a})
	})
}

// msgNoAccountWithdrawals answers the account withdrawal routes: the Service does not
// offer withdrawals in this version.
const msgNoAccountWithdrawals = "account withdrawals are not available in this version"

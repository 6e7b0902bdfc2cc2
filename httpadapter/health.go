package httpadapter

import "net/http"

// handleHealth answers GET /health, without authentication: {"status":"ok"}.
func handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

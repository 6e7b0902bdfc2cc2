package httpadapter

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/pixfoundry/payments"
)

// healthTimeout bounds the store read of GET /health: a database that does not answer in
// time is as good as down to a load balancer.
const healthTimeout = 2 * time.Second

// handleHealth answers GET /health, without authentication: 200 {"status":"ok"} when the
// store answers a read (the company's record), else 503 {"status":"unavailable"}, so that
// a load balancer in front of several servers stops sending requests to one whose
// database it cannot reach. The cause is logged, not shown. "sandbox" says whether the
// Service's bank is the make-believe sandbox (Service.Sandbox), so that a monitor can
// tell a server that moves real money from one that does not.
func handleHealth(svc *payments.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		if _, err := svc.GetCompany(ctx); err != nil {
			if log != nil {
				log.Warn("health: the store did not answer", "err", err)
			}
			encode(w, http.StatusServiceUnavailable, health{Status: "unavailable", Sandbox: svc.Sandbox()})
			return
		}
		encode(w, http.StatusOK, health{Status: "ok", Sandbox: svc.Sandbox()})
	})
}

// health is the body of GET /health.
type health struct {
	Status  string `json:"status"`
	Sandbox bool   `json:"sandbox"`
}

package httpadapter

import (
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// routeKit is what addRoutes hands the nouns that register their routes from their own
// file (addStatementRoutes, addPixAutomaticRoutes, addDisputeRoutes, addCompanyRoutes).
type routeKit struct {
	api        func(pattern string, h http.Handler) // under /api/v1 and the legacy prefix
	root       func(pattern string, h http.Handler) // as is
	auth       func(http.Handler) http.Handler      // requires an App ID
	notOffered func(what string) http.Handler       // 501 "<what> not offered in this version", behind auth
	svc        *payments.Service
	opts       Options
	log        *slog.Logger
	vendors    []string // the vendor names the sandbox routes sit under: /<vendor>/testing/...
}

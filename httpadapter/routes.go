package httpadapter

import (
	"net/http"
	"strings"

	"github.com/pixfoundry/payments"
)

// addRoutes is the whole API surface. Every API route goes through api, which serves it
// under /api/v1 and the legacy /api/<vendor>/v1; auth marks the routes that need an App ID
// (all of them, for now; /health is outside the API). It returns the API patterns it
// registered, for the test that checks each one refuses a request without an App ID.
func addRoutes(mux *http.ServeMux, svc *payments.Service, opts Options) (apiPatterns []string) {
	log := opts.Logger
	auth := requireAuth(svc, log)
	api := apiRoutes(mux, svc.Vendor(), &apiPatterns)

	mux.Handle("GET /health", handleHealth())

	// Customers. {id} is a correlationID or a tax ID.
	api("POST /customer", auth(handleCustomerCreate(log)))
	api("GET /customer", auth(handleCustomerList(log)))
	api("GET /customer/{id}", auth(handleCustomerGet(log)))
	api("PATCH /customer/{id}", auth(handleCustomerUpdate(log)))

	// Applications of the caller's own company.
	api("POST /application", auth(handleApplicationCreate(log)))
	api("DELETE /application", auth(handleApplicationDelete(log)))

	// Partner operations: pre-registered companies and their applications.
	api("POST /partner/company", auth(handlePreRegistrationCreate(log)))
	api("GET /partner/company", auth(handlePreRegistrationList(log)))
	api("GET /partner/company/{taxID}", auth(handlePreRegistrationGet(log)))
	api("POST /partner/application", auth(handlePartnerApplicationCreate(log)))
	return apiPatterns
}

// apiRoutes returns a function that registers "METHOD /path" at /api/v1/path and at the
// legacy /api/<vendor>/v1/path, and appends the pattern to *registered.
func apiRoutes(mux *http.ServeMux, vendor string, registered *[]string) func(pattern string, h http.Handler) {
	prefixes := []string{"/api/v1", "/api/" + vendor + "/v1"}
	return func(pattern string, h http.Handler) {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || !strings.HasPrefix(path, "/") {
			panic("httpadapter: route pattern must be \"METHOD /path\": " + pattern)
		}
		for _, prefix := range prefixes {
			mux.Handle(method+" "+prefix+path, h)
		}
		*registered = append(*registered, pattern)
	}
}

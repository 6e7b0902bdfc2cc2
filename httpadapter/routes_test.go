package httpadapter

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// publicRoutes are the API patterns served without an App ID. Add a route here only on
// purpose (the webhook public keys, say).
var publicRoutes = map[string]bool{}

// TestRoutes_RequireAuth sends every registered API route, under both prefixes, a request
// without an App ID: each must answer 401, unless it is listed in publicRoutes.
func TestRoutes_RequireAuth(t *testing.T) {
	svc, err := payments.New(memory.New(), payments.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Logger: slog.New(slog.DiscardHandler)}
	patterns := addRoutes(http.NewServeMux(), svc, opts)
	h := New(svc, opts)
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	is := is.New(t)
	is.True(len(patterns) >= 10) // the routes were collected
	for _, pattern := range patterns {
		method, path, _ := strings.Cut(pattern, " ")
		path = wildcard.ReplaceAllString(path, "x")
		for _, prefix := range []string{"/api/v1", "/api/openpix/v1"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(method, prefix+path, strings.NewReader("{}")))
			if publicRoutes[pattern] {
				is.True(w.Code != http.StatusUnauthorized) // a public route
				continue
			}
			if w.Code != http.StatusUnauthorized {
				t.Errorf("%s %s%s: status %d without an App ID, want 401", method, prefix, path, w.Code)
			}
		}
	}
}

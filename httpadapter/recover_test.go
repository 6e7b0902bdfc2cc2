package httpadapter

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// TestRecoverPanics mounts test-only routes on the real handler: one that panics, and one
// that reaches for the company without requireAuth.
func TestRecoverPanics(t *testing.T) {
	t.Parallel()
	svc, err := payments.New(memory.New(), payments.Options{WebhookSigningKey: signingKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	h := newHandler(svc, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, func(mux *http.ServeMux) {
		mux.Handle("GET /test/panic", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
		mux.Handle("GET /test/noauth", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { company(r) }))
	})
	for _, path := range []string{"/test/panic", "/test/noauth"} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			logs.Reset()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			is.Equal(w.Code, http.StatusInternalServerError)              // the panic becomes a 500
			is.Equal(w.Body.String(), "{\"error\":\"internal error\"}\n") // with the usual body
			is.True(strings.HasPrefix(w.Header().Get("Content-Type"), "application/json"))
			is.True(strings.Contains(logs.String(), "panic serving request")) // and is logged
		})
	}
	t.Run("AbortHandler", func(t *testing.T) {
		is := is.New(t)
		abort := recoverPanics(slog.New(slog.DiscardHandler), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
		defer func() { is.Equal(recover(), http.ErrAbortHandler) }() // re-panicked for the server to handle
		abort.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	})
}

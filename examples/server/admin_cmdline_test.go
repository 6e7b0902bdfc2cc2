package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// TestAdmin_CmdlineRedacted: /debug/pprof/cmdline on the operator listener shows the
// command line as the log would: -db without its password, the PSP's secrets not at all,
// the rest as given, NUL-separated as net/http/pprof serves it.
func TestAdmin_CmdlineRedacted(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	args := []string{"server", "-addr", "127.0.0.1:8080", "-db", "postgres://app:db-s3cret@db.internal:5432/payments",
		"-rail", "apipix", "--psp-client-secret", "client-s3cret", "-psp-webhook-secret=hook-s3cret", "-tick", "1s"}
	svc, err := payments.New(memory.New(), payments.Options{})
	is.NoErr(err)
	h := adminHandler(svc, newMetrics(), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), args) // not os.Args: the other tests run beside this one
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
	is.Equal(rec.Code, http.StatusOK)
	body := rec.Body.String()
	is.True(!strings.Contains(body, "s3cret")) // no password, no secret
	is.Equal(strings.Split(body, "\x00"), []string{"server", "-addr", "127.0.0.1:8080", "-db", "postgres://app:xxxxx@db.internal:5432/payments",
		"-rail", "apipix", "--psp-client-secret", "xxxxx", "-psp-webhook-secret=xxxxx", "-tick", "1s"}) // the rest as given
	is.Equal(rec.Header().Get("X-Content-Type-Options"), "nosniff")
}

// TestRedactArgs: every form the flag package takes hides the values it must, and one
// reading of an ambiguous line hides more rather than less.
func TestRedactArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"DBSeparate", []string{"-db", "postgres://u:pw@h/d"}, []string{"-db", "postgres://u:xxxxx@h/d"}},
		{"DBEquals", []string{"-db=postgres://u:pw@h/d"}, []string{"-db=postgres://u:xxxxx@h/d"}},
		{"DBTwoDashes", []string{"--db=postgresql://u:pw@h/d"}, []string{"--db=postgresql://u:xxxxx@h/d"}},
		{"DBUnparsable", []string{"-db", "postgres://u:p%zw@h/d"}, []string{"-db", "postgres://xxxxx@h/d"}},
		{"DBFile", []string{"-db", "payments.db"}, []string{"-db", "payments.db"}},
		{"SecretSeparate", []string{"-psp-client-secret", "pw"}, []string{"-psp-client-secret", "xxxxx"}},
		{"SecretEquals", []string{"--psp-webhook-secret=pw"}, []string{"--psp-webhook-secret=xxxxx"}},
		{"SecretLast", []string{"-psp-client-secret"}, []string{"-psp-client-secret"}},
		{"SecretThenSecret", []string{"-psp-client-secret", "-psp-webhook-secret", "pw"}, []string{"-psp-client-secret", "xxxxx", "xxxxx"}},
		{"BoolBeforeSecret", []string{"-sandbox", "-psp-client-secret", "pw"}, []string{"-sandbox", "-psp-client-secret", "xxxxx"}},
		{"OtherFlags", []string{"-merchant-name", "Loja", "-tick=1s", "--", "x"}, []string{"-merchant-name", "Loja", "-tick=1s", "--", "x"}},
		{"URLElsewhere", []string{"-pix-key=postgres://u:pw@h/d"}, []string{"-pix-key=postgres://u:xxxxx@h/d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(redactArgs(tc.in), tc.want) // redacted as the log is
		})
	}
}

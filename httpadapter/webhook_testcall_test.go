package httpadapter_test

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// syncBuffer is a bytes.Buffer a logger may write from any goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ipLike finds an IPv4 address, or an IPv6 one written with "::", in a message.
var ipLike = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b|[0-9a-fA-F]*::[0-9a-fA-F:]*`)

// TestWebhooks_TestCallFailure: a webhook whose test call fails is refused with a 400 that
// names the url the company gave and the class of failure, and nothing of Go's error: no
// "dial tcp", no "lookup", no resolver, no address the host resolved to. The Service's
// log keeps the whole error.
func TestWebhooks_TestCallFailure(t *testing.T) {
	t.Parallel()
	closedPort := func(t *testing.T) string { // an address that refuses connections
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	answering := func(t *testing.T, status int) string {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tc := range []struct {
		name         string
		allowPrivate bool
		url          func(t *testing.T) string
		class        string
		logged       string // in the log's whole error
	}{
		{"Unresolvable", true, func(*testing.T) string { return "http://hooks.invalid/pix" },
			"the webhook URL's host could not be resolved", "lookup hooks.invalid"},
		{"Refused", true, func(t *testing.T) string { return "http://" + closedPort(t) + "/pix" },
			"connection refused", "dial tcp"},
		{"Answered500", true, func(t *testing.T) string { return answering(t, 500) + "/pix" },
			"answered the test call with HTTP 500, not 2xx", ""},
		{"PrivateAddress", false, func(t *testing.T) string { return answering(t, 200) + "/pix" },
			"the address is private and not allowed", "is not a public address"},
		{"PrivateByName", false, func(t *testing.T) string {
			return "http://localhost:" + strings.TrimPrefix(answering(t, 200), "http://127.0.0.1:") + "/pix"
		}, "the address is private and not allowed", "is not a public address"},
		{"NotTLS", true, func(t *testing.T) string { return "https" + strings.TrimPrefix(answering(t, 200), "http") + "/pix" },
			"TLS handshake failed", "HTTP response to HTTPS client"},
		{"UntrustedCertificate", true, func(t *testing.T) string {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError) // the refused handshake
			t.Cleanup(srv.Close)
			return srv.URL + "/pix"
		}, "TLS handshake failed", "x509"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			logs := &syncBuffer{}
			s, _ := newOffsetClockServer(t, true, payments.Options{
				Logger:        slog.New(slog.NewTextHandler(logs, nil)),
				WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: tc.allowPrivate})})
			url := tc.url(t)
			r := s.do(t, "POST", "/api/v1/webhook", s.appID, `{"webhook":{"name":"h","url":"`+url+`"}}`)
			mustStatus(t, is, r, http.StatusBadRequest)
			msg := r.errMsg()
			t.Log(msg)
			is.True(strings.Contains(msg, tc.class))                                          // the class of failure
			is.True(strings.Contains(msg, "the url "+url+" "))                                // the url the company gave
			rest := strings.ReplaceAll(msg, url, "")                                          // what the message adds to it
			is.True(!ipLike.MatchString(rest))                                                // no resolver, no address the host resolved to
			is.True(!strings.Contains(rest, "dial tcp") && !strings.Contains(rest, "lookup")) // none of Go's error text
			is.True(!strings.Contains(rest, ":53"))                                           // no resolver's port
			if tc.logged != "" {
				is.True(strings.Contains(logs.String(), tc.logged)) // the whole error, for the operator
			}
			_, page, err := s.svc.ListWebhooks(ctx, "", payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 0) // nothing stored
		})
	}
}

// TestWebhooks_TestCallTimeout: a url that does not answer within the webhook timeout is
// refused as "timed out".
func TestWebhooks_TestCallTimeout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	done := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers: the test call gives up at the webhook timeout
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer silent.Close()
	defer close(done) // first: lets its handler end
	s, _ := newOffsetClockServer(t, true, payments.Options{WebhookTimeout: 50 * time.Millisecond,
		WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true})})
	r := s.do(t, "POST", "/api/v1/webhook", s.appID, `{"webhook":{"name":"h","url":"`+silent.URL+`"}}`)
	mustStatus(t, is, r, http.StatusBadRequest)
	is.Equal(r.errMsg(), "the url "+silent.URL+" did not answer the test call: timed out") // the class, nothing else
}

package apipixtest_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

// t0 is a Monday afternoon in Brasília.
var t0 = time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)

// newPSP starts a PSP on a clock standing at t0.
func newPSP(t *testing.T, o apipixtest.Options) (*apipixtest.PSP, *apipixtest.Clock) {
	t.Helper()
	clk := apipixtest.NewClock(t0)
	o.Now = clk.Now
	return apipixtest.New(t, o), clk
}

// client talks to a PSP as a driver does: mutual TLS and a Bearer token.
type client struct {
	t     *testing.T
	base  string // https://127.0.0.1:PORT
	hc    *http.Client
	token string
}

// httpClient is an HTTP client with the PSP's client certificate and trust.
func httpClient(t *testing.T, p *apipixtest.PSP) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{p.ClientCertificate()},
		RootCAs:      p.RootCAs(),
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// dial returns a client of p that holds a token.
func dial(t *testing.T, p *apipixtest.PSP) *client {
	t.Helper()
	c := &client{t: t, base: strings.TrimSuffix(p.URL(), "/v2"), hc: httpClient(t, p)}
	c.token = fetchToken(t, p, c.hc, "application/json", `{"grant_type":"client_credentials"}`)
	return c
}

func fetchToken(t *testing.T, p *apipixtest.PSP, hc *http.Client, contentType, body string) string {
	t.Helper()
	is := is.New(t)
	req, err := http.NewRequest(http.MethodPost, p.TokenURL(), strings.NewReader(body))
	is.NoErr(err)
	req.SetBasicAuth(p.ClientID(), p.ClientSecret())
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(req)
	is.NoErr(err) // the token route answers
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK) // a token for the client's credentials
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	is.NoErr(json.NewDecoder(resp.Body).Decode(&tok))
	is.Equal(tok.TokenType, "Bearer")
	is.True(tok.AccessToken != "")
	return tok.AccessToken
}

// do sends body (raw JSON, "" for none) to path and returns the status and the decoded
// answer (nil when it is not a JSON object).
func (c *client) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	status, raw := c.raw(method, path, body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return status, m
}

func (c *client) raw(method, path, body string) (int, []byte) {
	c.t.Helper()
	status, raw, err := c.try(method, path, body)
	is.New(c.t).NoErr(err) // the PSP answers
	return status, raw
}

// try is raw for a goroutine other than the test's: it returns the error.
func (c *client) try(method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// hook is the company's webhook: an HTTPS server that records what it is POSTed.
type hook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	paths  []string // path?query of each POST
	bodies [][]byte
	status int
}

func newHook(t *testing.T) *hook {
	h := &hook{status: http.StatusOK}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.paths = append(h.paths, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type"))
		h.bodies = append(h.bodies, b)
		w.WriteHeader(h.status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) posts() ([]string, [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...), append([][]byte(nil), h.bodies...)
}

// register registers url as the webhook of p's key.
func (c *client) register(p *apipixtest.PSP, url string) {
	c.t.Helper()
	status, _ := c.do("PUT", "/v2/webhook/"+p.PixKey(), `{"webhookUrl":"`+url+`"}`)
	is.New(c.t).Equal(status, http.StatusOK) // the webhook is registered
}

// noViolations checks that the PSP saw no request that broke the standard.
func noViolations(t *testing.T, p *apipixtest.PSP) {
	t.Helper()
	if v := p.Violations(); len(v) > 0 {
		t.Fatalf("violations:\n%s", strings.Join(v, "\n"))
	}
}

// field walks a decoded JSON object along keys.
func field(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

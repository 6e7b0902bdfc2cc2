package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/memory"
)

var ctx = context.Background()

// signingKey is the webhook signing key every test's Service shares (signingkey_test.go).
var signingKey = httpadapter.SigningKeyForTests

// server is the real handler over the memory store, with the default company's App ID.
type server struct {
	svc   *payments.Service
	clock *payments.ManualClock
	store *memory.Store
	h     http.Handler
	appID string        // the default (partner) company's App ID
	logs  *bytes.Buffer // what the handler logged
}

// newServer builds a Service on a fresh memory store, the handler over it, and an App ID
// for the default company.
func newServer(t testing.TB, opts httpadapter.Options) server {
	t.Helper()
	st := memory.New()
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(st, payments.Options{Clock: clock, WebhookSigningKey: signingKey(t), DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	return server{svc: svc, clock: clock, store: st, h: httpadapter.New(svc, opts), appID: a.AppID(), logs: logs}
}

// response is a reply with its JSON body decoded.
type response struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// do sends a request through the handler. appID "" sends no Authorization header; body ""
// sends none. Every reply must be JSON, and a success must carry no "error" key.
func (s server) do(t *testing.T, method, path, appID, body string, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rd)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if appID != "" {
		r.Header.Set("Authorization", appID)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	res := response{status: w.Code, header: w.Header(), raw: w.Body.String()}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: Content-Type %q, body %q: every reply must be JSON", method, path, ct, res.raw)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res.body); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, res.raw, err)
	}
	if _, ok := res.body["error"]; ok && w.Code < 300 {
		t.Fatalf("%s %s: success body with an error key: %s", method, path, res.raw)
	}
	return res
}

// errMsg is the "error" of a failure body.
func (r response) errMsg() string {
	s, _ := r.body["error"].(string)
	return s
}

// get walks a decoded body: get(body, "customer", "taxID", "type").
func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// str is get as a string.
func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

// num is get as a number.
func num(v any, path ...string) int {
	f, _ := get(v, path...).(float64)
	return int(f)
}

// list is get as an array.
func list(v any, path ...string) []any {
	l, _ := get(v, path...).([]any)
	return l
}

// mustStatus checks a reply's status and shows the body when it differs.
func mustStatus(t *testing.T, is *is.I, r response, want int) {
	t.Helper()
	is.Helper()
	if r.status != want {
		t.Logf("body: %s", r.raw)
	}
	is.Equal(r.status, want)
}

// raw sends a request without a body and returns the recorded reply as is, for replies
// that are not JSON (images).
func (s server) raw(t testing.TB, method, path, appID string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	if appID != "" {
		r.Header.Set("Authorization", appID)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

// newCompany registers a company through the partner routes, as a partner would: a
// pre-registration for the CNPJ, then an application. It returns the new company's App ID,
// base64(clientId:clientSecret).
func (s server) newCompany(t *testing.T, name, cnpj string) string {
	t.Helper()
	is := is.New(t)
	r := s.do(t, "POST", "/api/v1/partner/company", s.appID, `{
		"preRegistration":{"name":"`+name+`","taxID":{"taxID":"`+cnpj+`","type":"BR:CNPJ"},"website":"https://example.com"},
		"user":{"firstName":"Bia","lastName":"Lima","email":"bia@example.com","phone":"+5511999990009"}}`)
	mustStatus(t, is, r, http.StatusCreated)
	r = s.do(t, "POST", "/api/v1/partner/application", s.appID,
		`{"application":{"name":"`+name+` API","type":"API"},"taxID":{"taxID":"`+cnpj+`","type":"BR:CNPJ"}}`)
	mustStatus(t, is, r, http.StatusCreated)
	clientID, secret := str(r.body, "application", "clientId"), str(r.body, "application", "clientSecret")
	is.True(clientID != "" && secret != "") // the credentials, shown once
	return base64.StdEncoding.EncodeToString([]byte(clientID + ":" + secret))
}

// createCharge creates a charge through the API and returns it.
func (s server) createCharge(t *testing.T, appID, body string) map[string]any {
	t.Helper()
	r := s.do(t, "POST", "/api/v1/charge", appID, body)
	mustStatus(t, is.New(t), r, http.StatusOK)
	return get(r.body, "charge").(map[string]any)
}

// sandboxPay pays through the sandbox route (query: "transactionID=..." or
// "identifier=...") and returns the reply's transaction.
func (s server) sandboxPay(t *testing.T, appID, query string) map[string]any {
	t.Helper()
	r := s.do(t, "GET", "/openpix/testing?"+query, appID, "")
	mustStatus(t, is.New(t), r, http.StatusOK)
	return get(r.body, "transaction").(map[string]any)
}

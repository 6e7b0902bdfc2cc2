package httpadapter_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	r := s.do(t, "GET", "/health", "", "")
	mustStatus(t, is, r, http.StatusOK)                       // no App ID needed
	is.Equal(r.raw, "{\"status\":\"ok\",\"sandbox\":true}\n") // exact body: the default bank is the sandbox, and says so
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	a, err := s.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(a.AppID())
	clientID, secret, _ := strings.Cut(string(raw), ":")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		mustStatus(t, is, s.do(t, "GET", "/api/v1/customer", s.appID, ""), http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", "/api/v1/customer", "  "+s.appID+"  ", ""), http.StatusOK) // spaces trimmed
		r := s.do(t, "GET", "/api/v1/customer", s.appID, "")
		is.Equal(r.header.Get("Cache-Control"), "no-store") // a company's own data: kept out of shared caches
	})
	t.Run("TwoHeaders", func(t *testing.T) {
		is := is.New(t)
		for _, second := range []string{"garbage", s.appID} {
			req := httptest.NewRequest("GET", "/api/v1/customer", nil)
			req.Header.Add("Authorization", s.appID)
			req.Header.Add("Authorization", second)
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, req)
			is.Equal(w.Code, http.StatusUnauthorized) // which one? neither (the first was taken)
		}
	})
	for _, tc := range []struct{ name, appID string }{
		{"Missing", ""},
		{"Garbage", "%%% not an app id"},
		{"WrongSecret", b64(clientID + ":" + secret + "x")},
		{"UnknownClient", b64("Client_Id_unknown:" + secret)},
		{"Bearer", "Bearer " + a.AppID()}, // the App ID goes raw, with no scheme
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", "/api/v1/customer", tc.appID, "")
			mustStatus(t, is, r, http.StatusUnauthorized)
			is.Equal(r.raw, `{"error":"appID inválido","errors":[{"message":"appID inválido"}],"data":null}`+"\n") // the body every SDK reads
		})
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	for _, path := range []string{"/", "/nope", "/api/v1/nope", "/api/v1/customer/a/b", "/api/v2/customer"} {
		r := s.do(t, "GET", path, s.appID, "")
		mustStatus(t, is, r, http.StatusNotFound) // unknown route
		is.Equal(r.errMsg(), "not found")         // in JSON, not the mux's text
	}
	r := s.do(t, "DELETE", "/api/v1/customer", s.appID, "")
	mustStatus(t, is, r, http.StatusMethodNotAllowed) // a known path with another method
	is.Equal(r.errMsg(), "method not allowed")
	is.True(strings.Contains(r.header.Get("Allow"), "POST")) // Allow kept

	r = s.do(t, "GET", "/api/v1//customer", s.appID, "")
	is.Equal(r.status, http.StatusTemporaryRedirect) // the mux's redirect to the clean path, in JSON
	is.Equal(r.header.Get("Location"), "/api/v1/customer")
}

func TestLegacyPrefix(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	r := s.do(t, "POST", "/api/openpix/v1/customer", s.appID, `{"name":"Ana","email":"ana@example.com","correlationID":"legacy"}`)
	mustStatus(t, is, r, http.StatusOK) // the legacy prefix serves the same routes
	r = s.do(t, "GET", "/api/v1/customer/legacy", s.appID, "")
	mustStatus(t, is, r, http.StatusOK) // on the same data
	is.Equal(str(r.body, "customer", "name"), "Ana")
}

func TestDecode(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{MaxBodyBytes: 1024})
	cases := []struct {
		name, body, contentType string
		want                    string // part of the error message
	}{
		{"Malformed", `{"name":`, "", "not valid JSON"},
		{"Array", `[]`, "", "must be a JSON object"},
		{"ArrayOfObjects", `[{"name":"a"}]`, "", "must be a JSON object"},
		{"String", `"name"`, "", "must be a JSON object"},
		{"Null", `null`, "", "must be a JSON object"},
		{"Empty", ``, "", "request body is required"},
		{"Spaces", "  \n ", "", "request body is required"},
		{"TrailingGarbage", `{"name":"a","email":"a@example.com"} x`, "", "not valid JSON"},
		{"TwoObjects", `{"name":"a","email":"a@example.com"}{}`, "", "not valid JSON"},
		{"WrongType", `{"name":5,"email":"a@example.com"}`, "", "name must be a string"},
		{"WrongNestedType", `{"name":"a","email":"a@example.com","address":{"city":1}}`, "", "address.city must be a string"},
		{"WrongObjectType", `{"name":"a","email":"a@example.com","address":"x"}`, "", "address must be an object"},
		{"TaxIDWrongType", `{"name":"a","taxID":52998224725}`, "", "taxID must be a string"},
		{"NotJSONContentType", `{"name":"a","email":"a@example.com"}`, "text/plain", "Content-Type"},
		{"FormContentType", `name=a`, "application/x-www-form-urlencoded", "Content-Type"},
		{"TooLarge", `{"name":"` + strings.Repeat("a", 2000) + `"}`, "", "request body too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var headers []string
			if tc.contentType != "" {
				headers = []string{"Content-Type", tc.contentType}
			}
			r := s.do(t, "POST", "/api/v1/customer", s.appID, tc.body, headers...)
			mustStatus(t, is, r, http.StatusBadRequest)    // rejected
			is.True(strings.Contains(r.errMsg(), tc.want)) // with a clear message
			is.Equal(len(r.body), 1)                       // {"error": "..."} and nothing else
			_, page, err := s.svc.ListCustomers(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 0) // nothing written
		})
	}
	t.Run("ContentEncoding", func(t *testing.T) {
		is := is.New(t)
		// a body labelled gzip is not decoded: refused, whatever it holds (it was taken
		// when it was plain JSON, and refused as not UTF-8 when it was gzip)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"a","email":"a@example.com"}`, "Content-Encoding", "gzip")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), `request body with Content-Encoding "gzip" is not accepted: send it uncompressed`)
		r = s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"i","email":"i@example.com"}`, "Content-Encoding", "identity")
		mustStatus(t, is, r, http.StatusOK) // identity is no encoding
	})
	t.Run("AnnouncedTooLarge", func(t *testing.T) {
		is := is.New(t)
		req := httptest.NewRequest("POST", "/api/v1/customer", &neverRead{t: t})
		req.ContentLength = 9_000_000 // refused from the header, before a byte is read
		req.Header.Set("Authorization", s.appID)
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, req)
		is.Equal(w.Code, http.StatusBadRequest)
		is.True(strings.Contains(w.Body.String(), "request body too large"))
	})
	t.Run("UnknownFieldsIgnored", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"a","email":"a@example.com","correlationID":"u","extra":{"x":[1]},"ensureSameTaxID":true}`)
		mustStatus(t, is, r, http.StatusOK) // the SDKs send extras
	})
	t.Run("JSONSubtypeAndCharset", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"b","email":"b@example.com"}`, "Content-Type", "application/json; charset=utf-8")
		mustStatus(t, is, r, http.StatusOK)
	})
	t.Run("NoContentType", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"c","email":"c@example.com"}`, "Content-Type", "")
		mustStatus(t, is, r, http.StatusOK) // a JSON body without the header is accepted
	})
	t.Run("ContentTypeOnBodilessGET", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer", s.appID, "", "Content-Type", "application/json")
		mustStatus(t, is, r, http.StatusOK) // the Node SDK sends it on every request
	})
}

func TestPaging(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for i := range 3 {
		_, err := s.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "C", Email: "c@example.com", CorrelationID: string(rune('a' + i))})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer?skip=1&limit=1&foo=bar", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // unknown params ignored
		is.Equal(len(list(r.body, "customers")), 1)
		is.Equal(get(r.body, "pageInfo"), map[string]any{
			"skip": 1.0, "limit": 1.0, "totalCount": 3.0, "hasPreviousPage": true, "hasNextPage": true,
		})
		r = s.do(t, "GET", "/api/v1/customer?skip=&limit=", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // empty values mean the defaults
		is.Equal(num(r.body, "pageInfo", "limit"), payments.DefaultLimit)
	})
	for _, tc := range []struct{ query, field string }{
		{"skip=abc", "skip"},
		{"limit=ten", "limit"},
		{"skip=1.5", "skip"},
		{"limit=99999999999999999999", "limit"},
		{"skip=-1", "skip"},
		{"limit=5000", "limit"},
		{"limit=0", "limit"}, // the message says 1 to 1000, as the reference's minimum
		{"skip=100001", "skip"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", "/api/v1/customer?"+tc.query, s.appID, "")
			mustStatus(t, is, r, http.StatusBadRequest)
			is.True(strings.HasPrefix(r.errMsg(), tc.field)) // the message names the parameter
		})
	}
}

func TestInternalError(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	s.store.Close() // every transaction now fails
	r := s.do(t, "GET", "/api/v1/customer", s.appID, "")
	mustStatus(t, is, r, http.StatusInternalServerError)
	is.Equal(r.raw, "{\"error\":\"internal error\"}\n")                // no detail for the caller
	is.True(strings.Contains(s.logs.String(), "memory store: closed")) // the cause goes to the log
}

// TestInvalidUTF8Body: encoding/json would turn invalid UTF-8 into U+FFFD, so that two
// different correlationIDs ("a\xff" and "a\xfe") became the same one. It is refused.
func TestInvalidUTF8Body(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for _, body := range []string{
		"{\"correlationID\":\"dup\xff\",\"value\":100}",
		"{\"correlationID\":\"dup\xfe\",\"value\":100}",
		"{\"correlationID\":\"ok\",\"value\":100,\"comment\":\"\xc3\"}", // a cut multi-byte sequence
	} {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", s.appID, body)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "request body is not valid UTF-8")
	}
	is := is.New(t)
	_, page, err := s.svc.ListCharges(ctx, payments.ChargeFilter{})
	is.NoErr(err)
	is.Equal(page.TotalCount, 0) // nothing was created
	r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"dupé","value":100}`)
	mustStatus(t, is, r, http.StatusOK) // valid UTF-8 is fine
	is.Equal(str(r.body, "charge", "correlationID"), "dupé")
}

// TestMethodNotAllowed: a known path with another method is 405 with Allow, also where a
// wildcard route of that method would otherwise take the path for an id.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/api/v1/subaccount/transfer", "POST"},         // not the subaccount with Pix key "transfer"
		{"DELETE", "/api/v1/subaccount/transfer", "POST"},      // nor deleting it
		{"GET", "/api/openpix/v1/subaccount/transfer", "POST"}, // under the legacy prefix too
		{"GET", "/api/v1/payment/approve", "POST"},             // not the payment "approve"
		{"DELETE", "/api/v1/webhook/events", "GET, HEAD"},      // not the webhook "events"
		{"PUT", "/api/v1/charge", "GET, HEAD, POST"},
		{"DELETE", "/api/v1/customer", "GET, HEAD, POST"},
		{"GET", "/api/v1/decode/emv", "POST"},
		{"POST", "/health", "GET, HEAD"},
		{"PUT", "/api/v1/charge/x", "DELETE, GET, HEAD, PATCH"}, // the mux's own 405, in JSON
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, tc.method, tc.path, s.appID, "")
			mustStatus(t, is, r, http.StatusMethodNotAllowed)
			is.Equal(r.body, map[string]any{"error": "method not allowed"}) // JSON, nothing else
			is.Equal(r.header.Get("Allow"), tc.allow)                       // the methods the path has
		})
	}
	is := is.New(t)
	r := s.do(t, "HEAD", "/api/v1/customer", s.appID, "")
	mustStatus(t, is, r, http.StatusOK) // HEAD goes with GET
}

// TestMalformedRequests: what the handler sees of a malformed request is answered in JSON.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{MaxHeaderBytes: 2048})
	t.Run("BadQueryEscape", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/transaction?charge=%zz", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // not the whole list, as if there were no filter
		is.Equal(r.errMsg(), `the query string is malformed: invalid URL escape "%zz"`)
	})
	t.Run("QuerySemicolon", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/charge?status=ACTIVE;limit=1", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.HasPrefix(r.errMsg(), "the query string is malformed"))
	})
	t.Run("HeadersTooLarge", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer", s.appID, "", "X-Big", strings.Repeat("a", 2048))
		mustStatus(t, is, r, http.StatusRequestHeaderFieldsTooLarge)
		is.Equal(r.errMsg(), "request header fields too large (limit 2048 bytes)")
		r = s.do(t, "GET", "/api/v1/customer", s.appID, "", "X-Big", strings.Repeat("a", 1500))
		mustStatus(t, is, r, http.StatusOK) // under the limit
	})
	t.Run("AsteriskTarget", func(t *testing.T) {
		is := is.New(t)
		req := httptest.NewRequest("OPTIONS", "/", nil)
		req.RequestURI = "*" // "OPTIONS * HTTP/1.1": the mux answers 400 with no body
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, req)
		is.Equal(w.Code, http.StatusBadRequest)
		is.Equal(w.Body.String(), "{\"error\":\"bad request\"}\n") // in JSON
	})
}

// TestNotOffered: operations of the real API this version does not offer answer 501
// {"error"} at their real method and path, behind auth, not the 404 of an unknown route.
func TestNotOffered(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/api/v1/invoice", "GET /api/v1/invoice: listing invoices is not offered in this version"},
		{"POST", "/api/v1/funds-recovery", "POST /api/v1/funds-recovery: opening a funds recovery (MED) is not offered in this version"},
		{"GET", "/api/openpix/v1/boleto-transaction", "GET /api/v1/boleto-transaction: listing boleto transactions is not offered in this version"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			is := is.New(t)
			body := ""
			if tc.method == "POST" || tc.method == "PUT" || tc.method == "PATCH" {
				body = `{"value":1}`
			}
			r := s.do(t, tc.method, tc.path, s.appID, body)
			mustStatus(t, is, r, http.StatusNotImplemented)
			is.Equal(r.body, map[string]any{"error": tc.want}) // said plainly, in the usual body
			r = s.do(t, tc.method, tc.path, "", body)
			mustStatus(t, is, r, http.StatusUnauthorized) // behind auth like every API route
		})
	}
}

// levelRecorder is a slog handler that keeps the level and message of every record.
type levelRecorder struct {
	mu      sync.Mutex
	records []string // "LEVEL message status=N"
}

func (h *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *levelRecorder) WithGroup(string) slog.Handler            { return h }
func (h *levelRecorder) Handle(_ context.Context, r slog.Record) error {
	status := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "status" {
			status = " status=" + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Level.String()+" "+r.Message+status)
	return nil
}

func (h *levelRecorder) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.records
	h.records = nil
	return out
}

// TestErrorLogLevels: ERROR is for faults. Expected answers (4xx, 501) are logged at DEBUG,
// a request whose context ended (the client left, or its deadline passed) at INFO and
// answered 503, not as an internal error; a 500 at ERROR.
func TestErrorLogLevels(t *testing.T) {
	t.Parallel()
	rec := &levelRecorder{}
	s := newServer(t, httpadapter.Options{Logger: slog.New(rec)})
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel2()
	for _, tc := range []struct {
		name, method, path, appID, body string
		ctx                             context.Context
		status                          int
		want                            string
	}{
		{"BadInput", "POST", "/api/v1/charge", s.appID, `{"value":1}`, ctx, 400, "DEBUG request failed status=400"},
		{"NotFound", "GET", "/api/v1/charge/nope", s.appID, "", ctx, 400, "DEBUG request failed status=400"},
		{"AccountNotFound", "GET", "/api/v1/account/nope", s.appID, "", ctx, 404, "DEBUG request failed status=404"},
		{"Unauthorized", "GET", "/api/v1/charge", "", "", ctx, 401, "DEBUG request failed status=401"},
		{"NotOffered", "GET", "/api/v1/anticipation", s.appID, "", ctx, 501, "DEBUG request failed status=501"},
		{"Canceled", "GET", "/api/v1/charge", s.appID, "", canceled, 503, "INFO request failed status=503"},
		{"DeadlineExceeded", "GET", "/api/v1/charge", s.appID, "", expired, 503, "INFO request failed status=503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := httptest.NewRequestWithContext(tc.ctx, tc.method, tc.path, body)
			if tc.appID != "" {
				r.Header.Set("Authorization", tc.appID)
			}
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, r)
			is.Equal(w.Code, tc.status)                                   // the expected answer
			is.Equal(rec.take(), []string{tc.want})                       // logged once, below ERROR
			is.True(!strings.Contains(w.Body.String(), "internal error")) // and not called one
		})
	}
	t.Run("Internal", func(t *testing.T) {
		is := is.New(t)
		s.store.Close() // every transaction now fails
		r := s.do(t, "GET", "/api/v1/customer", s.appID, "")
		mustStatus(t, is, r, http.StatusInternalServerError)
		is.Equal(rec.take(), []string{"ERROR request failed status=500"}) // a fault is an ERROR
	})
}

// TestHealth_StoreDown: /health reads the store, so a server whose database is gone
// answers 503 and a load balancer stops sending it requests. Before, it said ok while
// every API call failed.
func TestHealth_StoreDown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	is.NoErr(s.store.Close())
	r := s.do(t, "GET", "/health", "", "")
	is.Equal(r.status, http.StatusServiceUnavailable)
	is.Equal(r.raw, "{\"status\":\"unavailable\",\"sandbox\":true}\n")
}

// neverRead is a request body that fails the test if it is read.
type neverRead struct{ t *testing.T }

func (n *neverRead) Read([]byte) (int, error) {
	n.t.Error("the body was read")
	return 0, io.EOF
}

package httpadapter_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

const (
	shopOrigin  = "https://shop.example"
	otherOrigin = "https://other.example"
)

// corsHeaders are the reply headers CORS is about.
var corsHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
	"Access-Control-Max-Age", "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials",
}

// send sends a request through the handler with the headers given as name, value pairs
// (Add, so that a name may repeat) and returns the recorded reply.
func (s server) send(t *testing.T, method, path string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

// preflight sends the OPTIONS request Chromium sends before a fetch of method with the App
// ID and a JSON body from a page of origin.
func (s server) preflight(t *testing.T, path, origin, method string) *httptest.ResponseRecorder {
	t.Helper()
	return s.send(t, "OPTIONS", path, "Origin", origin,
		"Access-Control-Request-Method", method, "Access-Control-Request-Headers", "authorization,content-type")
}

// noCORS checks that a reply carries none of the CORS headers.
func noCORS(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	for _, name := range corsHeaders {
		if v := w.Header().Values(name); len(v) > 0 {
			t.Errorf("%s: %q, want none", name, v)
		}
	}
}

// TestCORS: with Options.CORSOrigins, the API answers the preflights of the pages of those
// origins and its replies let them read what it answers; other origins get nothing.
func TestCORS(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{
		Sandbox:     true,
		CORSOrigins: []string{shopOrigin, "HTTP://LocalHost:5173"}, // as a browser sends them: lower case
		RequestLog:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})

	t.Run("Preflight", func(t *testing.T) {
		for _, tc := range []struct{ path, method string }{
			{"/api/openpix/v1/charge", "POST"}, // @openpix/react's chargeCreate
			{"/api/v1/charge/abc", "GET"},
			{"/api/v1/charge/abc", "DELETE"},
			{"/api/v1/subscriptions/abc/cancel", "PUT"},
			{"/openpix/testing", "GET"},             // the sandbox's payer
			{"/openpix/testing/clock", "POST"},      // and its clock
			{"/openpix/api/v1/webhook", "POST"},     // the spec's other webhook path
			{"/api/v1/no-such-route", "GET"},        // answered; the call itself then gets 404
			{"/api/image/qrcode/base64/abc", "GET"}, // under /api, with the App ID
			{"/api/v1/webhook/public-keys", "GET"},  // public, and an API route all the same
		} {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				is := is.New(t)
				w := s.preflight(t, tc.path, shopOrigin, tc.method)
				is.Equal(w.Code, http.StatusNoContent)                                                          // answered, not 405
				is.Equal(w.Header().Get("Access-Control-Allow-Origin"), shopOrigin)                             // that origin, never "*"
				is.Equal(w.Header().Get("Access-Control-Allow-Methods"), "DELETE, GET, HEAD, PATCH, POST, PUT") // the API's methods
				allow := w.Header().Get("Access-Control-Allow-Headers")
				for _, h := range []string{"Authorization", "Content-Type", "Accept", "User-Agent", "Idempotency-Key", "X-Request-Id"} {
					is.True(strings.Contains(allow, h)) // the App ID, JSON, and what the SDKs send
				}
				is.Equal(w.Header().Get("Access-Control-Max-Age"), "7200")           // two hours, Chromium's cap
				is.Equal(w.Header().Values("Access-Control-Allow-Credentials"), nil) // no cookies: the App ID is a header
				is.Equal(w.Header().Get("Vary"), "Origin")                           // the answer depends on the Origin
				is.Equal(w.Body.Len(), 0)                                            // 204: no body
			})
		}
	})

	t.Run("Request", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/openpix/v1/charge", s.appID, `{"correlationID":"cors-1","value":100}`, "Origin", shopOrigin)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), shopOrigin)       // the page may read the reply
		is.Equal(r.header.Get("Access-Control-Expose-Headers"), "X-Request-Id") // and the request id
		is.True(r.header.Get("X-Request-Id") != "")                             // which is there
		is.Equal(r.header.Values("Vary"), []string{"Origin"})                   // for caches
		is.Equal(r.header.Values("Access-Control-Allow-Methods"), nil)          // preflight headers only on preflights
		r = s.do(t, "GET", "/openpix/testing?transactionID="+str(r.body, "charge", "transactionID"), s.appID, "", "Origin", shopOrigin)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), shopOrigin) // the sandbox's payer too
	})

	t.Run("ErrorReplies", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", "", `{"value":100}`, "Origin", shopOrigin)
		mustStatus(t, is, r, http.StatusUnauthorized)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), shopOrigin) // the page can read why
		r = s.do(t, "POST", "/api/v1/charge", s.appID, `{"value":"x"}`, "Origin", shopOrigin)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), shopOrigin)
		r = s.do(t, "GET", "/api/v1/no-such-route", s.appID, "", "Origin", shopOrigin)
		mustStatus(t, is, r, http.StatusNotFound)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), shopOrigin)
	})

	t.Run("OriginCanonical", func(t *testing.T) {
		is := is.New(t)
		w := s.preflight(t, "/api/v1/charge", "http://localhost:5173", "POST")
		is.Equal(w.Code, http.StatusNoContent)                                                                  // configured in capitals
		is.Equal(w.Header().Get("Access-Control-Allow-Origin"), "http://localhost:5173")                        // answered as the browser sent it
		is.Equal(s.preflight(t, "/api/v1/charge", "http://localhost:5174", "POST").Code, http.StatusForbidden)  // the port counts
		is.Equal(s.preflight(t, "/api/v1/charge", "https://localhost:5173", "POST").Code, http.StatusForbidden) // and the scheme
		is.Equal(s.preflight(t, "/api/v1/charge", shopOrigin+"/", "POST").Code, http.StatusForbidden)           // exactly the origin
	})

	t.Run("OtherOrigin", func(t *testing.T) {
		is := is.New(t)
		for _, origin := range []string{otherOrigin, "null", "https://shop.example.evil.example", "garbage"} {
			w := s.preflight(t, "/api/openpix/v1/charge", origin, "POST")
			is.Equal(w.Code, http.StatusForbidden) // refused, with a reason
			is.True(strings.HasPrefix(w.Header().Get("Content-Type"), "application/json"))
			is.True(strings.Contains(w.Body.String(), `"error":"Origin not allowed`)) // the reason
			noCORS(t, w)
			is.Equal(w.Header().Get("Vary"), "Origin")
		}
		r := s.do(t, "GET", "/api/v1/charge", s.appID, "", "Origin", otherOrigin)
		mustStatus(t, is, r, http.StatusOK)                       // served as any request (a browser keeps it from the page)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), "") // but not readable there
		is.Equal(r.header.Get("Vary"), "Origin")
	})

	t.Run("TwoOrigins", func(t *testing.T) {
		is := is.New(t)
		w := s.send(t, "OPTIONS", "/api/v1/charge", "Origin", shopOrigin, "Origin", shopOrigin, "Access-Control-Request-Method", "POST")
		is.Equal(w.Code, http.StatusMethodNotAllowed) // whose? neither: no browser's preflight
		noCORS(t, w)
	})

	t.Run("NotPreflight", func(t *testing.T) {
		is := is.New(t)
		w := s.send(t, "OPTIONS", "/api/v1/charge", "Origin", shopOrigin)                   // no Access-Control-Request-Method
		is.Equal(w.Code, http.StatusMethodNotAllowed)                                       // an OPTIONS request like any other
		is.Equal(w.Header().Get("Access-Control-Allow-Origin"), shopOrigin)                 // whose reply the page may read
		w = s.send(t, "OPTIONS", "/api/v1/charge", "Access-Control-Request-Method", "POST") // no Origin: no browser
		is.Equal(w.Code, http.StatusMethodNotAllowed)
		noCORS(t, w)
	})

	t.Run("NotAPI", func(t *testing.T) {
		is := is.New(t)
		charge := s.createCharge(t, s.appID, `{"correlationID":"cors-page","value":100}`)
		link := str(charge, "paymentLinkID")
		for _, path := range []string{"/pay/" + link, "/pay/" + link + "/status", "/openpix/charge/brcode/image/" + link + ".png", "/health"} {
			w := s.send(t, "GET", path, "Origin", shopOrigin)
			is.Equal(w.Code, http.StatusOK) // served
			noCORS(t, w)                    // opened by the browser itself: no CORS
			is.True(!strings.Contains(strings.Join(w.Header().Values("Vary"), ","), "Origin"))
			w = s.preflight(t, path, shopOrigin, "GET")
			is.Equal(w.Code, http.StatusMethodNotAllowed) // as without CORS
			noCORS(t, w)
		}
	})
}

// TestCORS_Any: ["*"] lets the page of any origin call the API, answered "*".
func TestCORS_Any(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{CORSOrigins: []string{"*"}})
	for _, origin := range []string{shopOrigin, otherOrigin, "null"} {
		w := s.preflight(t, "/api/openpix/v1/charge", origin, "POST")
		is.Equal(w.Code, http.StatusNoContent)
		is.Equal(w.Header().Get("Access-Control-Allow-Origin"), "*")                               // any origin, said so
		is.True(strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization")) // named: "*" would not cover it
		is.Equal(w.Header().Values("Access-Control-Allow-Credentials"), nil)
	}
	r := s.do(t, "GET", "/api/v1/charge", s.appID, "", "Origin", otherOrigin)
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(r.header.Get("Access-Control-Allow-Origin"), "*")
	is.Equal(r.header.Get("Access-Control-Expose-Headers"), "X-Request-Id")
	r = s.do(t, "GET", "/api/v1/charge", s.appID, "")
	is.Equal(r.header.Get("Access-Control-Allow-Origin"), "") // no Origin, no browser page: nothing to allow
}

// TestCORS_Off: without Options.CORSOrigins there is no CORS header at all, and a
// preflight is answered as any OPTIONS request, 405, so a browser refuses the call.
func TestCORS_Off(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	for _, path := range []string{"/api/openpix/v1/charge", "/api/v1/charge/abc", "/openpix/testing"} {
		w := s.preflight(t, path, shopOrigin, "POST")
		is.Equal(w.Code, http.StatusMethodNotAllowed) // as before CORS existed
		is.Equal(w.Body.String(), `{"error":"method not allowed"}`+"\n")
		noCORS(t, w)
	}
	r := s.do(t, "GET", "/api/v1/charge", s.appID, "", "Origin", shopOrigin)
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(r.header.Get("Access-Control-Allow-Origin"), "")
	is.Equal(r.header.Values("Vary"), nil) // nothing depends on the Origin
}

// TestCheckCORSOrigins: an origin is scheme://host[:port] as a browser sends it, or "*"
// alone; New refuses, by a panic, what CheckCORSOrigins refuses.
func TestCheckCORSOrigins(t *testing.T) {
	t.Parallel()
	for _, ok := range [][]string{
		nil,
		{"*"},
		{shopOrigin},
		{shopOrigin, "http://127.0.0.1:8081", "http://[::1]:3000", "https://xn--loja-caf-i1a.example"},
		{"HTTPS://SHOP.EXAMPLE:443", "http://shop.example:80"}, // case and default ports do not matter
	} {
		t.Run("OK "+strings.Join(ok, ","), func(t *testing.T) {
			is := is.New(t)
			is.NoErr(httpadapter.CheckCORSOrigins(ok))
		})
	}
	for _, tc := range []struct {
		origins []string
		want    string // in the error
	}{
		{[]string{""}, "is empty"},
		{[]string{"*", shopOrigin}, "goes alone"},
		{[]string{shopOrigin, "*"}, "goes alone"},
		{[]string{"https://shop.example/"}, "no path"},
		{[]string{"https://shop.example/loja"}, "no path"},
		{[]string{"shop.example"}, "http:// or https://"},
		{[]string{"ftp://shop.example"}, "http:// or https://"},
		{[]string{"null"}, "http:// or https://"},
		{[]string{"https://"}, "must name a host"},
		{[]string{"https://:8080"}, "must name a host"},
		{[]string{"https:shop.example"}, "must name a host"},
		{[]string{"https://user:pw@shop.example"}, "credentials"},
		{[]string{"https://shop.example?x=1"}, "query"},
		{[]string{"https://shop.example#top"}, "fragment"},
		{[]string{"https://shop.example:0"}, "port"},
		{[]string{"https://shop.example:99999"}, "port"},
		{[]string{"https://shop.example:http"}, "not an origin"},
		{[]string{"https://loja café.example"}, "spaces"},
		{[]string{"https://lojacafé.example"}, "punycode"},
		{[]string{shopOrigin, "https://shop.example\n"}, "spaces"},
	} {
		t.Run("Bad "+strings.Join(tc.origins, ","), func(t *testing.T) {
			is := is.New(t)
			err := httpadapter.CheckCORSOrigins(tc.origins)
			is.True(err != nil) // refused
			is.True(strings.Contains(err.Error(), tc.want))
			if tc.origins[len(tc.origins)-1] != "*" && tc.origins[0] != "*" {
				is.True(strings.Contains(err.Error(), `"`)) // naming the entry
			}
			defer func() {
				p := recover()
				is.True(p != nil) // New refuses it too
				is.True(strings.Contains(p.(string), "Options.CORSOrigins"))
			}()
			newServer(t, httpadapter.Options{CORSOrigins: tc.origins})
		})
	}
}

package httpadapter_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

func TestHealth(t *testing.T) {
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	r := s.do(t, "GET", "/health", "", "")
	mustStatus(t, is, r, http.StatusOK)      // no App ID needed
	is.Equal(r.raw, "{\"status\":\"ok\"}\n") // exact body
}

func TestAuth(t *testing.T) {
	s := newServer(t, httpadapter.Options{})
	a, err := s.svc.CreateApplication(ctx, payments.ApplicationParams{Name: "other"})
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
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	r := s.do(t, "POST", "/api/openpix/v1/customer", s.appID, `{"name":"Ana","email":"ana@example.com","correlationID":"legacy"}`)
	mustStatus(t, is, r, http.StatusOK) // the legacy prefix serves the same routes
	r = s.do(t, "GET", "/api/v1/customer/legacy", s.appID, "")
	mustStatus(t, is, r, http.StatusOK) // on the same data
	is.Equal(str(r.body, "customer", "name"), "Ana")
}

func TestDecode(t *testing.T) {
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
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	s.store.Close() // every transaction now fails
	r := s.do(t, "GET", "/api/v1/customer", s.appID, "")
	mustStatus(t, is, r, http.StatusInternalServerError)
	is.Equal(r.raw, "{\"error\":\"internal error\"}\n")                // no detail for the caller
	is.True(strings.Contains(s.logs.String(), "memory store: closed")) // the cause goes to the log
}

package httpadapter_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// TestAuth_Hint: every App ID mistake keeps the real API's 401 body, "appID inválido", and
// says in X-Auth-Hint what was wrong: a missing header, a scheme before the App ID, the
// App ID in another header, two headers, or an App ID this server does not know.
func TestAuth_Hint(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for _, tc := range []struct {
		name    string
		headers [][2]string
		want    string
	}{
		{"Missing", nil, "no App ID"},
		{"Bearer", [][2]string{{"Authorization", "Bearer " + s.appID}}, `without "Bearer "`},
		{"Basic", [][2]string{{"Authorization", "Basic " + s.appID}}, `without "Basic "`},
		{"OtherHeader", [][2]string{{"X-Api-Key", s.appID}}, "goes in the Authorization header"},
		{"Twice", [][2]string{{"Authorization", s.appID}, {"Authorization", s.appID}}, "send one Authorization header"},
		{"Unknown", [][2]string{{"Authorization", "Q2xpZW50X0lkX25vcGU6Q2xpZW50X1NlY3JldF9ub3Bl"}}, "not valid on this server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := httptest.NewRequest("GET", "/api/v1/charge", nil)
			for _, h := range tc.headers {
				r.Header.Add(h[0], h[1])
			}
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, r)
			is.Equal(w.Code, http.StatusUnauthorized)
			is.True(strings.Contains(w.Body.String(), `"error":"appID inválido"`)) // the real API's body
			is.True(strings.Contains(w.Header().Get("X-Auth-Hint"), tc.want))      // and what was wrong
		})
	}
	is := is.New(t)
	r := s.do(t, "GET", "/api/v1/charge", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(r.header.Get("X-Auth-Hint"), "") // none on success
}

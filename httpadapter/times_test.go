package httpadapter_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// A time on the wire, and one with the real API's three fraction digits.
var (
	wireTime      = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^"]*"`)
	threeDigitsAt = regexp.MustCompile(`^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)"$`)
)

// TestTimes_ThreeFractionDigits: every time in the replies and in the events' payloads
// has exactly three fraction digits, as the real API sends them: at a whole second (which
// time.Time's JSON writes "…:00Z"), at .300 ("….3Z") and at .310 ("….31Z"). Before, a
// parser fixed to three digits failed on most of these.
func TestTimes_ThreeFractionDigits(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	var bodies []string
	check := func(r response) { bodies = append(bodies, r.raw) }
	for i, step := range []time.Duration{0, 300 * time.Millisecond, 10 * time.Millisecond} {
		s.clock.Advance(step)
		id := []string{"a", "b", "c"}[i]
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"Ana","email":"ana`+id+`@example.com","taxID":"`+[]string{"52998224725", "11144477735", "39053344705"}[i]+`"}`)
		mustStatus(t, is, r, http.StatusOK)
		check(r)
		r = s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"t-`+id+`","value":500,"customer":{"name":"Ana","taxID":"`+[]string{"52998224725", "11144477735", "39053344705"}[i]+`"}}`)
		mustStatus(t, is, r, http.StatusOK)
		check(r)
		r = s.do(t, "GET", "/openpix/testing?transactionID="+str(r.body, "charge", "transactionID"), s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		check(r)
		for _, path := range []string{"/api/v1/charge/t-" + id, "/api/v1/transaction", "/api/v1/customer", "/api/v1/account"} {
			r := s.do(t, "GET", path, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			check(r)
		}
	}
	events, err := s.svc.Events(ctx, 0, 100)
	is.NoErr(err)
	is.True(len(events) >= 6) // created and completed, three times
	for _, e := range events {
		bodies = append(bodies, string(e.Data)) // the body a webhook POSTs
	}
	n := 0
	for _, b := range bodies {
		for _, at := range wireTime.FindAllString(b, -1) {
			n++
			if !threeDigitsAt.MatchString(at) {
				t.Errorf("%s: not three fraction digits, in %s", at, b)
			}
		}
	}
	is.True(n > 50) // the replies and payloads carried times
}

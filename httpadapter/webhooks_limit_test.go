package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestWebhooks_WireLimit: a webhook past the company's limit on its event
// (Options.MaxWebhooksPerEvent) is a 400 whose error names the limit.
func TestWebhooks_WireLimit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newOffsetClockServer(t, true, payments.Options{MaxWebhooksPerEvent: 1})
	body := `{"webhook":{"name":"w","email":"ops@loja.example.com","event":"OPENPIX:CHARGE_CREATED"}}`
	mustStatus(t, is, s.do(t, "POST", "/api/v1/webhook", s.appID, body), http.StatusOK)
	r := s.do(t, "POST", "/api/v1/webhook", s.appID, body)
	mustStatus(t, is, r, http.StatusBadRequest)                  // the second on the event
	is.True(strings.Contains(str(r.body, "error"), "at most 1")) // saying why
	other := s.newCompany(t, "Outra", "11222333000181")
	mustStatus(t, is, s.do(t, "POST", "/api/v1/webhook", other, body), http.StatusOK) // another company's first
}

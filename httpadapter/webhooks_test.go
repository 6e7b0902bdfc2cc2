package httpadapter_test

import (
	"net/http"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// TestWebhookEvents: GET /webhook/events lists the catalogue, {events:[{name,
// description}]}, with the names webhooks carry, under both prefixes, behind auth.
func TestWebhookEvents(t *testing.T) {
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	want := s.svc.EventCatalog()
	for _, path := range []string{"/api/v1/webhook/events", "/api/openpix/v1/webhook/events"} {
		r := s.do(t, "GET", path, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		events := list(r.body, "events")
		is.Equal(len(events), len(want)) // the whole catalogue
		names := map[string]bool{}
		for i, ev := range events {
			is.Equal(str(ev, "name"), want[i].Name) // in the catalogue's order
			is.True(str(ev, "description") != "")   // each says what it reports
			names[str(ev, "name")] = true
		}
		for _, name := range []string{"OPENPIX:CHARGE_CREATED", "OPENPIX:CHARGE_COMPLETED", "OPENPIX:CHARGE_EXPIRED",
			"OPENPIX:CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER", "OPENPIX:TRANSACTION_RECEIVED",
			"PIX_TRANSACTION_REFUND_SENT_CONFIRMED", "PIX_TRANSACTION_REFUND_SENT_REJECTED",
			"OPENPIX:MOVEMENT_CONFIRMED", "OPENPIX:MOVEMENT_FAILED", "OPENPIX:MOVEMENT_REMOVED"} {
			is.True(names[name]) // the wire reference's name, with the vendor prefix where it has one
		}
	}
	mustStatus(t, is, s.do(t, "GET", "/api/v1/webhook/events", "", ""), http.StatusUnauthorized) // an API route like the others
}

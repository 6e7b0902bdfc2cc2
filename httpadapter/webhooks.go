package httpadapter

import (
	"net/http"

	"github.com/pixfoundry/payments"
)

// webhookEventsBody is the answer of GET /webhook/events.
type webhookEventsBody struct {
	Events []payments.EventType `json:"events"`
}

// handleWebhookEvents: GET /webhook/events → 200 {events:[{name, description}]}, the events
// this server produces (payments.Service.EventCatalog), named as webhooks carry them.
func handleWebhookEvents() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, webhookEventsBody{Events: company(r).EventCatalog()})
	})
}

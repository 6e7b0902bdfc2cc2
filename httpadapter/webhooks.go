package httpadapter

import (
	"log/slog"
	"net/http"
	"time"

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

// webhookBody is the body of POST /webhook: {webhook:{name, event, url, authorization,
// isActive}}, as every SDK sends it; a body without the wrapper is read as the webhook
// itself (one doc example shows it so).
type webhookBody struct {
	Webhook *webhookFields `json:"webhook"`
	webhookFields
}

type webhookFields struct {
	Name          string `json:"name"`
	Event         string `json:"event"`
	URL           string `json:"url"`
	Email         string `json:"email"` // the e-mail action, instead of url (an extension)
	Authorization string `json:"authorization"`
	IsActive      *bool  `json:"isActive"`
}

// handleWebhookCreate: POST /webhook → 200 {webhook}. The url must answer a test call
// with 2xx, or 400 names why and nothing is stored.
func handleWebhookCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[webhookBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		f := body.webhookFields
		if body.Webhook != nil {
			f = *body.Webhook
		}
		// The test call may take the whole webhook timeout (100 s by default), longer than a
		// server's write timeout may be (examples/server: 60 s): the answer, a 400 saying the
		// url did not answer in time, must still reach the client.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{}) // not supported: nothing to lift
		wh, err := company(r).CreateWebhook(r.Context(), payments.CreateWebhookParams{
			Name: f.Name, Event: f.Event, URL: f.URL, Email: f.Email, Authorization: f.Authorization, IsActive: f.IsActive})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, webhookReply{Webhook: wh})
	})
}

// handleWebhookList: GET /webhook?url&skip&limit → 200 {webhooks, pageInfo}.
func handleWebhookList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ws, page, err := company(r).ListWebhooks(r.Context(), r.URL.Query().Get("url"), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, webhookListReply{PageInfo: page, Webhooks: ws})
	})
}

// handleWebhookDelete: DELETE /webhook/{id} → 200 {status:"OK", id}; an unknown id is 400
// {"error":"Webhook not found","status":"ERROR"}.
func handleWebhookDelete(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := company(r).DeleteWebhook(r.Context(), id); err != nil {
			writeDeleteError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, deletedReply{ID: id, Status: "OK"})
	})
}

// handleWebhookPublicKeys: GET /webhook/public-keys, without an App ID → 200
// {public_keys:[{key_identifier, key, is_current}]}, the keys that verify
// x-webhook-signature, cacheable for an hour.
func handleWebhookPublicKeys(svc *payments.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys, err := svc.WebhookPublicKeys(r.Context())
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		encode(w, http.StatusOK, webhookPublicKeysReply{PublicKeys: keys})
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	webhookReply struct {
		Webhook payments.Webhook `json:"webhook"`
	}
	webhookListReply struct {
		PageInfo payments.PageInfo  `json:"pageInfo"`
		Webhooks []payments.Webhook `json:"webhooks"`
	}
	webhookPublicKeysReply struct {
		PublicKeys []payments.WebhookPublicKey `json:"public_keys"`
	}
)

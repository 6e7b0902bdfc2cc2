package httpadapter_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// TestWebhookEvents: GET /webhook/events lists the catalogue, {events:[{name,
// description}]}, with the names webhooks carry, under both prefixes, behind auth.
func TestWebhookEvents(t *testing.T) {
	t.Parallel()
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

// newWebhookServer is newClockServer with webhooks delivered over HTTP to loopback.
func newWebhookServer(t *testing.T) (server, *payments.OffsetClock) {
	t.Helper()
	return newOffsetClockServer(t, true, payments.Options{
		WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true})})
}

// hook is a receiver on 127.0.0.1 that records bodies and headers and answers with status.
type hook struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	heads  []http.Header
	status int
}

func newHook(t *testing.T) *hook {
	h := &hook{status: 200}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.bodies, h.heads = append(h.bodies, string(b)), append(h.heads, r.Header.Clone())
		w.WriteHeader(h.status)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) count() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.bodies) }

// TestWebhooks_Wire: create (wrapped body, and a flat one), list with the url filter,
// delete, the public keys without auth, a delivery verified with them, and a failed
// delivery retried when the sandbox clock moves.
func TestWebhooks_Wire(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, clock := newWebhookServer(t)
	rcv := newHook(t)
	r := s.do(t, "POST", "/api/v1/webhook", s.appID, `{"webhook":{"name":"w","url":"`+rcv.URL+`/a","event":"OPENPIX:CHARGE_CREATED","authorization":"tok","isActive":true}}`)
	mustStatus(t, is, r, http.StatusOK)
	id, secret := str(r.body, "webhook", "id"), str(r.body, "webhook", "hmacSecretKey")
	is.True(id != "")                                                   // an id to delete by
	is.Equal(str(r.body, "webhook", "event"), "OPENPIX:CHARGE_CREATED") // as sent
	is.Equal(rcv.count(), 1)                                            // the test call
	is.True(strings.Contains(rcv.bodies[0], `"evento":"teste_webhook"`))
	r = s.do(t, "POST", "/api/openpix/v1/webhook", s.appID, `{"name":"flat","url":"`+rcv.URL+`/b"}`)
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "webhook", "event"), "OPENPIX:TRANSACTION_RECEIVED") // the default event
	r = s.do(t, "GET", "/api/v1/webhook?url="+url.QueryEscape(rcv.URL+"/a"), s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(len(list(r.body, "webhooks")), 1) // the url filter
	is.Equal(num(r.body, "pageInfo", "totalCount"), 1)
	r = s.do(t, "GET", "/api/v1/webhook", s.appID, "")
	is.Equal(len(list(r.body, "webhooks")), 2) // all of them without it

	// another company sees none of them and cannot delete them
	other := s.newCompany(t, "Outra", "11222333000181")
	r = s.do(t, "GET", "/api/v1/webhook", other, "")
	is.Equal(len(list(r.body, "webhooks")), 0)
	mustStatus(t, is, s.do(t, "DELETE", "/api/v1/webhook/"+id, other, ""), http.StatusBadRequest)

	// the keys are public
	r = s.do(t, "GET", "/api/v1/webhook/public-keys", "", "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(r.header.Get("Cache-Control"), "public, max-age=3600")
	key := str(list(r.body, "public_keys")[0], "key")
	is.Equal(len(str(list(r.body, "public_keys")[0], "key_identifier")), 64) // hex SHA-256

	// a delivery, verified; then a failure retried when the sandbox clock moves
	s.createCharge(t, s.appID, `{"correlationID":"c1","value":100}`)
	is.NoErr(s.svc.RunWebhooks(ctx))
	is.Equal(rcv.count(), 3) // two test calls, then the event
	is.NoErr(httpadapter.VerifyWebhookRSA(key, rcv.heads[2], []byte(rcv.bodies[2])))
	is.NoErr(httpadapter.VerifyWebhook(secret, rcv.heads[2], []byte(rcv.bodies[2]), clock.Now(), 0))
	is.Equal(rcv.heads[2].Get("Authorization"), "tok")
	rcv.mu.Lock()
	rcv.status = 500
	rcv.mu.Unlock()
	s.createCharge(t, s.appID, `{"correlationID":"c2","value":100}`)
	is.NoErr(s.svc.RunWebhooks(ctx))
	is.Equal(rcv.count(), 4) // failed
	rcv.mu.Lock()
	rcv.status = 200
	rcv.mu.Unlock()
	mustStatus(t, is, s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"10s"}`), http.StatusOK)
	is.Equal(rcv.count(), 5) // the clock route ran the retry
	is.True(strings.Contains(rcv.bodies[4], `"c2"`))

	mustStatus(t, is, s.do(t, "DELETE", "/api/v1/webhook/"+id, s.appID, ""), http.StatusOK)
	r = s.do(t, "DELETE", "/api/v1/webhook/"+id, s.appID, "")
	mustStatus(t, is, r, http.StatusBadRequest)
	is.Equal(r.body, map[string]any{"error": "Webhook not found", "status": "ERROR"}) // the reference's {error, status}
}

// TestWebhooks_VendorRoute: the spec's /<vendor>/api/v1/webhook creates, lists and deletes
// like /api/v1/webhook, behind auth, beside the other /<vendor>/ routes.
func TestWebhooks_VendorRoute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newWebhookServer(t)
	rcv := newHook(t)
	mustStatus(t, is, s.do(t, "POST", "/openpix/api/v1/webhook", "", `{"name":"v","url":"`+rcv.URL+`"}`), http.StatusUnauthorized) // behind auth
	r := s.do(t, "POST", "/openpix/api/v1/webhook", s.appID, `{"webhook":{"name":"v","url":"`+rcv.URL+`","event":"OPENPIX:CHARGE_CREATED"}}`)
	mustStatus(t, is, r, http.StatusOK)
	id := str(r.body, "webhook", "id")
	is.Equal(str(r.body, "webhook", "event"), "OPENPIX:CHARGE_CREATED") // the create handler's reply
	r = s.do(t, "GET", "/api/v1/webhook", s.appID, "")
	is.Equal(len(list(r.body, "webhooks")), 1) // stored like any other
	r = s.do(t, "GET", "/openpix/api/v1/webhook", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(len(list(r.body, "webhooks")), 1) // listed at the variant too
	mustStatus(t, is, s.do(t, "DELETE", "/openpix/api/v1/webhook/"+id, s.appID, ""), http.StatusOK)
	r = s.do(t, "GET", "/api/v1/webhook", s.appID, "")
	is.Equal(len(list(r.body, "webhooks")), 0)                                              // deleted through the variant
	mustStatus(t, is, s.do(t, "GET", "/openpix/testing/clock", s.appID, ""), http.StatusOK) // the sandbox routes still answer
}

// TestWebhooks_TransactionAudit: a transaction shows webhookSent ([] before any delivery,
// then {"<EVENT>":{status,time},isRetry}), and GET /transaction?hasWebhook= filters on it.
func TestWebhooks_TransactionAudit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newWebhookServer(t)
	rcv := newHook(t)
	first := s.sandboxPay(t, s.appID, "transactionID="+str(s.createCharge(t, s.appID, `{"correlationID":"c0","value":100}`), "transactionID"))
	r := s.do(t, "GET", "/api/v1/transaction/"+str(first, "endToEndId"), s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(len(list(r.body, "transaction", "webhookSent")), 0) // none yet
	is.True(get(r.body, "transaction", "webhookSent") != nil)    // but [] rather than null or absent
	mustStatus(t, is, s.do(t, "POST", "/api/v1/webhook", s.appID, `{"name":"w","url":"`+rcv.URL+`"}`), http.StatusOK)
	c := s.createCharge(t, s.appID, `{"correlationID":"c1","value":100}`)
	x := s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	is.NoErr(s.svc.RunWebhooks(ctx))
	is.Equal(rcv.count(), 2) // the test call, then TRANSACTION_RECEIVED
	r = s.do(t, "GET", "/api/v1/transaction/"+str(x, "endToEndId"), s.appID, "")
	sent := list(r.body, "transaction", "webhookSent")
	is.Equal(len(sent), 1) // the delivery
	is.Equal(str(sent[0], "OPENPIX:TRANSACTION_RECEIVED", "status"), "SUCCESS")
	is.Equal(str(sent[0], "OPENPIX:TRANSACTION_RECEIVED", "time"), "2026-11-22T12:00:00.000Z")
	is.Equal(get(sent[0], "isRetry"), false) // the first attempt

	for _, tc := range []struct {
		query string
		want  string
	}{
		{"hasWebhook=true", str(x, "endToEndId")},
		{"hasWebhook=false", str(first, "endToEndId")},
		{"hasWebhook=TRUE&charge=c1", str(x, "endToEndId")},
		{"hasWebhook=false&type=PAYMENT&start=2026-11-22T12:00:00Z", str(first, "endToEndId")},
	} {
		r := s.do(t, "GET", "/api/v1/transaction?"+tc.query, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		xs := list(r.body, "transactions")
		is.Equal(len(xs), 1)                        // tc.query
		is.Equal(str(xs[0], "endToEndId"), tc.want) // tc.query
	}
	r = s.do(t, "GET", "/api/v1/transaction?hasWebhook=yes", s.appID, "")
	mustStatus(t, is, r, http.StatusBadRequest)
	is.True(strings.Contains(r.errMsg(), "hasWebhook")) // names the parameter
}

// TestWebhooks_CreateErrors: bad input and a url failing the test call are 400 naming why.
// TestWebhooks_CreateSlowURL: a url that does not answer the test call within the webhook
// timeout gets the 400 saying so, even from a server whose write timeout is shorter than
// that (examples/server's is 60 s, the webhook timeout 100 s): before, the client got the
// connection closed with no answer.
func TestWebhooks_CreateSlowURL(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newOffsetClockServer(t, true, payments.Options{WebhookTimeout: 300 * time.Millisecond,
		WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true})})
	done := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers: the sender gives up at the webhook timeout
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer silent.Close()
	defer close(done) // first: lets its handler end
	srv := httptest.NewUnstartedServer(s.h)
	srv.Config.WriteTimeout = 50 * time.Millisecond
	srv.Start()
	defer srv.Close()
	req, err := http.NewRequest("POST", srv.URL+"/api/v1/webhook", strings.NewReader(`{"webhook":{"name":"slow","url":"`+silent.URL+`"}}`))
	is.NoErr(err)
	req.Header.Set("Authorization", s.appID)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err) // an answer, not a closed connection
	defer res.Body.Close()
	is.Equal(res.StatusCode, http.StatusBadRequest)
	b, err := io.ReadAll(res.Body)
	is.NoErr(err)
	is.True(strings.Contains(string(b), "did not answer")) // says why
}

func TestWebhooks_CreateErrors(t *testing.T) {
	t.Parallel()
	s, _ := newWebhookServer(t)
	rcv := newHook(t)
	rcv.status = 404
	for _, tc := range []struct{ body, want string }{
		{`{"webhook":{"url":"nope"}}`, "url must be an absolute http or https URL without credentials"},
		{`{"webhook":{"url":"http://:1/"}}`, "url must be an absolute http or https URL without credentials"}, // no host: it dialed this machine
		{`{"webhook":{"url":"` + rcv.URL + `/a b"}}`, "url must not contain spaces or a #fragment (escape them: %20, %23)"},
		{`{"webhook":{"url":"` + rcv.URL + `/in#part"}}`, "url must not contain spaces or a #fragment (escape them: %20, %23)"}, // never sent
		{`{"webhook":{"url":"` + rcv.URL + `","event":"X"}}`, `event "X" is not one of the Service's events (EventCatalog, served as GET /api/v1/webhook/events)`},
		{`{"webhook":{"url":"` + rcv.URL + `"}}`, "the url " + rcv.URL + " answered the test call with HTTP 404, not 2xx"},
		{`{"webhook":{"url":1}}`, "webhook.url must be a string"},
	} {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/webhook", s.appID, tc.body)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), tc.want) // says why
	}
}

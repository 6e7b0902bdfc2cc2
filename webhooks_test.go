package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// delivery is one POST a receiver got.
type delivery struct {
	header http.Header
	body   []byte
	event  string
}

// receiver is a webhook endpoint on 127.0.0.1 whose answer the test sets.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int, d delivery) int // status for the n-th POST (from 1)
	header http.Header                 // added to every answer
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{answer: func(int, delivery) int { return http.StatusOK }, header: http.Header{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var v struct {
			Event  string `json:"event"`
			Evento string `json:"evento"`
		}
		_ = json.Unmarshal(b, &v)
		d := delivery{header: req.Header.Clone(), body: b, event: v.Event}
		if v.Evento == "teste_webhook" {
			d.event = "test"
		}
		r.mu.Lock()
		r.got = append(r.got, d)
		n, answer := len(r.got), r.answer
		for k, v := range r.header {
			w.Header()[k] = v
		}
		r.mu.Unlock()
		w.WriteHeader(answer(n, d))
	}))
	t.Cleanup(r.Close)
	return r
}

// events are the names of the deliveries received, tests included.
func (r *receiver) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.got {
		out = append(out, d.event)
	}
	return out
}

func (r *receiver) last() delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1]
}

// newWebhookEnv is a Service delivering through the real HTTP sender, loopback allowed.
func newWebhookEnv(t *testing.T, st store.Store, opts payments.Options) env {
	t.Helper()
	clock := payments.NewManualClock(t0)
	opts.Clock = clock
	opts.WebhookSender = httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true})
	opts.DefaultCompany = payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja", MerchantCity: "Sao Paulo"}
	svc, err := payments.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return env{svc: svc, clock: clock, store: st}
}

func eachWebhookStore(t *testing.T, opts payments.Options, fn func(t *testing.T, e env)) {
	t.Helper()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			fn(t, newWebhookEnv(t, st.open(t), opts))
		})
	}
}

func createWebhook(t *testing.T, svc *payments.Service, url, event string) payments.Webhook {
	t.Helper()
	w, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: "hook", URL: url, Event: svc.EventName(event), Authorization: "Bearer abc"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func newCharge(t *testing.T, svc *payments.Service, corr string) {
	t.Helper()
	if _, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: corr, Value: 100}); err != nil {
		t.Fatal(err)
	}
}

func TestService_CreateWebhook(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			r := newReceiver(t)
			w := createWebhook(t, e.svc, r.URL+"/ok", payments.EventChargeCreated)
			is.True(strings.HasPrefix(w.HMACSecretKey, "whsec_")) // a Standard Webhooks secret
			is.True(w.IsActive)                                   // active by default
			is.Equal(r.events(), []string{"test"})                // the test call came first
			var test map[string]any
			is.NoErr(json.Unmarshal(r.last().body, &test))
			is.Equal(test["event"], "OPENPIX:CHARGE_CREATED")                                                      // it names the chosen event
			is.NoErr(httpadapter.VerifyWebhook(w.HMACSecretKey, r.last().header, r.last().body, e.clock.Now(), 0)) // signed too
			ws, page, err := e.svc.ListWebhooks(ctx, r.URL+"/ok", payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 1) // found by its url
			is.Equal(ws[0].ID, w.ID)
			_, page, err = e.svc.ListWebhooks(ctx, r.URL+"/o", payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 0) // the url filter is exact
			is.NoErr(e.svc.DeleteWebhook(ctx, w.ID))
			is.Equal(payments.ErrorCode(e.svc.DeleteWebhook(ctx, w.ID)), payments.ENOTFOUND) // gone
		})
		t.Run("ErrTestCall", func(t *testing.T) {
			is := is.New(t)
			r := newReceiver(t)
			r.answer = func(int, delivery) int { return http.StatusInternalServerError }
			_, err := e.svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: r.URL + "/bad"})
			is.Equal(payments.ErrorCode(err), payments.EINVALID) // the url must answer 2xx
			is.Equal(payments.ErrorField(err), "url")
			is.True(strings.Contains(err.Error(), "500")) // and the message says what it answered
			_, page, err := e.svc.ListWebhooks(ctx, r.URL+"/bad", payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 0) // nothing stored
		})
		t.Run("ErrInput", func(t *testing.T) {
			is := is.New(t)
			for _, p := range []payments.CreateWebhookParams{
				{URL: ""}, {URL: "ftp://x.example"}, {URL: "/relative"}, {URL: "http://u:p@x.example/"},
				{URL: "http://x.example/", Event: "OPENPIX:NOPE"},
			} {
				_, err := e.svc.CreateWebhook(ctx, p)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // refused before any call
			}
		})
	})
}

// TestService_CreateWebhook_Private: the default sender refuses a loopback receiver at
// dial time, and the create says so.
func TestService_CreateWebhook_Private(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := newReceiver(t)
	svc, err := payments.New(memory.New(), payments.Options{WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{})})
	is.NoErr(err)
	_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: r.URL})
	is.Equal(payments.ErrorCode(err), payments.EINVALID)              // refused
	is.True(strings.Contains(err.Error(), "is not a public address")) // naming why
	is.Equal(len(r.events()), 0)                                      // nothing reached it
	_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "http://localhost:1/"})
	is.True(strings.Contains(err.Error(), "is not a public address")) // a name resolving to loopback too
}

func TestService_DeliverWebhooks(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		newCharge(t, e.svc, "before") // before the webhook: not delivered
		w := createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		newCharge(t, e.svc, "c1")
		newCharge(t, e.svc, "c2")
		other, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Other"})
		is.NoErr(err)
		osvc, err := e.svc.Company(ctx, other.ID)
		is.NoErr(err)
		newCharge(t, osvc, "other") // another company's event
		_, page, err := osvc.ListWebhooks(ctx, "", payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 0)                                                    // it sees none of ours
		is.Equal(payments.ErrorCode(osvc.DeleteWebhook(ctx, w.ID)), payments.ENOTFOUND) // nor deletes them
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(r.events(), []string{"test", "OPENPIX:CHARGE_CREATED", "OPENPIX:CHARGE_CREATED"}) // ours, after it, once each
		evs, err := e.svc.Events(ctx, 0, 100)
		is.NoErr(err)
		d := r.last()
		is.Equal(string(d.body), string(evs[len(evs)-1].Data)) // the body is the outbox payload
		is.NoErr(httpadapter.VerifyWebhook(w.HMACSecretKey, d.header, d.body, e.clock.Now(), 0))
		keys, err := e.svc.WebhookPublicKeys(ctx)
		is.NoErr(err)
		is.NoErr(httpadapter.VerifyWebhookRSA(keys[0].Key, d.header, d.body))                    // RSA over the body
		is.True(httpadapter.VerifyWebhookRSA(keys[0].Key, d.header, append(d.body, ' ')) != nil) // and only that body
		is.Equal(d.header.Get("Authorization"), "Bearer abc")                                    // the webhook's authorization
		is.Equal(d.header.Get("x-openpix-authorization"), "Bearer abc")
		is.True(d.header.Get("X-OpenPix-Signature") != "")
		is.True(strings.HasSuffix(d.header.Get("webhook-id"), "_"+itoa(evs[len(evs)-1].Seq))) // names the event
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 3) // nothing twice
		as, _, err := e.svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(as), 2) // each attempt recorded
		is.Equal(as[0].Outcome, "delivered")
		is.Equal(as[0].Status, 200)
	})
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// TestService_WebhookRetries: a receiver failing twice gets the event on the clock's
// schedule (10 s, then 20 s), and the next event waits behind it (strict order).
func TestService_WebhookRetries(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		r.answer = func(n int, d delivery) int {
			if n <= 3 { // the test call, then two failures
				if n == 1 {
					return 200
				}
				return http.StatusServiceUnavailable
			}
			return 200
		}
		newCharge(t, e.svc, "c1")
		newCharge(t, e.svc, "c2")
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 2) // one failure; c2 waits behind c1
		e.clock.Advance(9 * time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 2) // not yet due
		e.clock.Advance(time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 3) // the retry after 10 s, failing again
		e.clock.Advance(19 * time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 3) // the next after 20 s
		e.clock.Advance(time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 5) // c1 delivered, then c2
		var bodies []string
		for _, d := range r.got[3:] {
			var v struct {
				Charge struct{ CorrelationID string }
			}
			is.NoErr(json.Unmarshal(d.body, &v))
			bodies = append(bodies, v.Charge.CorrelationID)
		}
		is.Equal(bodies, []string{"c1", "c2"})                                         // in outbox order
		is.Equal(r.got[1].header.Get("webhook-id"), r.got[3].header.Get("webhook-id")) // a retry has the same id
	})
}

// TestService_WebhookGiveUp: after the last attempt the event is given up and the next
// goes; Retry-After longer than the backoff is honoured.
func TestService_WebhookGiveUp(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{WebhookAttempts: 2}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		w := createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		r.answer = func(n int, d delivery) int {
			if strings.Contains(string(d.body), `"c1"`) {
				return 500
			}
			return 200
		}
		r.header.Set("Retry-After", "60")
		newCharge(t, e.svc, "c1")
		newCharge(t, e.svc, "c2")
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 2)
		e.clock.Advance(59 * time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 2) // Retry-After: 60 beats the 10 s backoff
		e.clock.Advance(time.Second)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 4) // c1's last attempt, given up, then c2
		as, _, err := e.svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(as), 3)
		is.Equal(as[0].Outcome, "delivered")
		is.Equal(as[1].Outcome, "gave_up")
		is.Equal(as[2].Outcome, "retry")
		is.Equal(as[2].Status, 500)
	})
}

// TestService_WebhookGone: a 410 disables the webhook; nothing more is sent.
func TestService_WebhookGone(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		w := createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		r.answer = func(int, delivery) int { return http.StatusGone }
		newCharge(t, e.svc, "c1")
		is.NoErr(e.svc.RunDue(ctx))
		got, err := e.svc.GetWebhook(ctx, w.ID)
		is.NoErr(err)
		is.True(!got.IsActive) // disabled
		newCharge(t, e.svc, "c2")
		e.clock.Advance(time.Hour)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 2) // the test call and the 410, nothing after
	})
}

// TestService_WebhookHanging: a receiver that never answers costs its webhook one timeout
// per attempt; another webhook is delivered in the same pass.
func TestService_WebhookHanging(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{WebhookTimeout: 200 * time.Millisecond}, func(t *testing.T, e env) {
		is := is.New(t)
		hang := newReceiver(t)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		w := createWebhook(t, e.svc, hang.URL, payments.EventChargeCreated)
		hang.answer = func(int, delivery) int { <-release; return 200 }
		ok := newReceiver(t)
		createWebhook(t, e.svc, ok.URL, payments.EventChargeCreated)
		newCharge(t, e.svc, "c1")
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(ok.events()), 2) // delivered although the other hangs
		as, _, err := e.svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(as), 1)
		is.Equal(as[0].Outcome, "retry")   // a timeout is a failure
		is.Equal(as[0].Error, "timed out") // and says so
	})
}

// TestService_WebhookNoSender: without a sender creating a webhook is not offered.
func TestService_WebhookNoSender(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, memory.New())
	_, err := e.svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://x.example/"})
	is.Equal(payments.ErrorCode(err), payments.ENOTIMPLEMENTED) // said plainly
}

// TestService_WebhookEmail: the e-mail action mails each event through the Mailer (a
// MemoryMailer records them), without a sender or a test call.
func TestService_WebhookEmail(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			mailer := &payments.MemoryMailer{}
			clock := payments.NewManualClock(t0)
			svc, err := payments.New(st.open(t), payments.Options{Clock: clock, Mailer: mailer})
			is.NoErr(err)
			w, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{Email: "ops@loja.example.com", Event: svc.EventName(payments.EventChargeCreated)})
			is.NoErr(err)
			is.Equal(w.Email, "ops@loja.example.com")
			newCharge(t, svc, "c1")
			is.NoErr(svc.RunDue(ctx))
			msgs := mailer.Messages()
			is.Equal(len(msgs), 1) // the event, mailed
			is.Equal(msgs[0].To, "ops@loja.example.com")
			is.Equal(msgs[0].Subject, "OPENPIX:CHARGE_CREATED")
			is.True(strings.Contains(string(msgs[0].Body), `"c1"`)) // the payload as the body
			for _, p := range []payments.CreateWebhookParams{{Email: "not an address"}, {Email: "a@b.example", URL: "https://x.example/"}} {
				_, err := svc.CreateWebhook(ctx, p)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // a valid address, and not both actions
			}
		})
	}
}

// TestService_ResendWebhookEvent: a given-up event is sent again on request, with its
// webhook-id, and the resend recorded; the cursor stays.
func TestService_ResendWebhookEvent(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{WebhookAttempts: 1}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		w := createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		r.answer = func(n int, d delivery) int {
			if n == 2 {
				return 500
			}
			return 200
		}
		newCharge(t, e.svc, "c1")
		is.NoErr(e.svc.RunDue(ctx)) // one attempt, given up
		evs, err := e.svc.Events(ctx, 0, 100)
		is.NoErr(err)
		seq := evs[len(evs)-1].Seq
		a, err := e.svc.ResendWebhookEvent(ctx, w.ID, seq)
		is.NoErr(err)
		is.Equal(a.Outcome, "resent")
		is.Equal(len(r.events()), 3)                                                   // test, failure, resend
		is.Equal(r.got[1].header.Get("webhook-id"), r.got[2].header.Get("webhook-id")) // the same message
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 3) // nothing more queued
		_, err = e.svc.ResendWebhookEvent(ctx, w.ID, seq+1000)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such event
		other := createWebhook(t, e.svc, r.URL, payments.EventChargeExpired)
		_, err = e.svc.ResendWebhookEvent(ctx, other.ID, seq)
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // not an event it subscribes to
	})
}

// TestService_RunWebhooks_Concurrent: passes running at once send each event once.
func TestService_RunWebhooks_Concurrent(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		for i := range 20 {
			newCharge(t, e.svc, fmt.Sprint("c", i))
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); is.NoErr(e.svc.RunWebhooks(ctx)) }()
		}
		wg.Wait()
		is.NoErr(e.svc.RunWebhooks(ctx))
		ids := map[string]bool{}
		for _, d := range r.got[1:] {
			ids[d.header.Get("webhook-id")] = true
		}
		is.Equal(len(r.got)-1, 20) // each event once
		is.Equal(len(ids), 20)
	})
}

// TestService_WebhookScan: a webhook finds its events past many it does not subscribe to
// (more than one claim reads), each once, in order.
func TestService_WebhookScan(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		createWebhook(t, e.svc, r.URL, payments.EventChargeExpired)
		for i := range 150 {
			_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("x", i), Value: 100, ExpiresIn: 900})
			is.NoErr(err)
		}
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(r.events()), 1) // only the test call: nothing expired yet
		e.clock.Advance(time.Hour)
		is.NoErr(e.svc.RunDue(ctx)) // expires them all, then delivers
		is.Equal(len(r.events()), 151)
		for _, d := range r.got[1:] {
			is.Equal(d.event, "OPENPIX:CHARGE_EXPIRED") // only what it subscribes to
		}
	})
}

// TestService_ListEventWebhookAttempts: every attempt of one event is listed, to all
// webhooks or to one, newest first, beside the per-webhook listing.
func TestService_ListEventWebhookAttempts(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		a := createWebhook(t, e.svc, r.URL+"/a", payments.EventChargeCreated)
		b := createWebhook(t, e.svc, r.URL+"/b", payments.EventChargeCreated)
		r.answer = func(n int, d delivery) int {
			if n == 3 || n == 4 { // both webhooks' first tries of c1
				return 500
			}
			return 200
		}
		newCharge(t, e.svc, "c1")
		is.NoErr(e.svc.RunDue(ctx))
		e.clock.Advance(10 * time.Second)
		is.NoErr(e.svc.RunDue(ctx)) // the retries
		newCharge(t, e.svc, "c2")
		is.NoErr(e.svc.RunDue(ctx))
		evs, err := e.svc.Events(ctx, 0, 100)
		is.NoErr(err)
		c1, c2 := evs[len(evs)-2].Seq, evs[len(evs)-1].Seq
		got, page, err := e.svc.ListEventWebhookAttempts(ctx, c1, "", payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(got), 4)                     // two webhooks, a failure and a delivery each
		is.Equal(page.TotalCount, 4)              // counted
		is.Equal(got[0].Seq, c1)                  // all of the event
		is.True(!got[0].Time.Before(got[3].Time)) // newest first
		got, _, err = e.svc.ListEventWebhookAttempts(ctx, c1, a.ID, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(got), 2) // one webhook's
		is.Equal(got[0].WebhookID, a.ID)
		is.Equal(got[0].Outcome, "delivered") // the newest
		is.Equal(got[1].Outcome, "retry")
		got, page, err = e.svc.ListEventWebhookAttempts(ctx, c1, a.ID, payments.ListParams{Skip: 1, Limit: 1})
		is.NoErr(err)
		is.Equal(len(got), 1) // one webhook's, paged
		is.Equal(got[0].Outcome, "retry")
		is.Equal(got[0].WebhookID, a.ID)
		is.Equal(page.TotalCount, 2)
		is.True(!page.HasNextPage)
		got, page, err = e.svc.ListEventWebhookAttempts(ctx, c1, b.ID, payments.ListParams{Limit: 1})
		is.NoErr(err)
		is.Equal(len(got), 1)
		is.Equal(got[0].WebhookID, b.ID)
		is.Equal(got[0].Outcome, "delivered") // the other webhook's newest
		is.Equal(page.TotalCount, 2)
		is.True(page.HasNextPage)
		got, _, err = e.svc.ListEventWebhookAttempts(ctx, c2, b.ID, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(got), 1) // c2 went at once
		got, _, err = e.svc.ListEventWebhookAttempts(ctx, c2+1, "", payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(got), 0) // no such event: none
	})
}

// TestService_ResendWebhookEvents: the events of the webhook's name in [from, to) are sent
// again and recorded, at most MaxWebhookResend a call, the rest by continuing with After.
func TestService_ResendWebhookEvents(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		n := payments.MaxWebhookResend + 5
		for i := range n { // all at t0: the continuation must go by number, not time
			newCharge(t, e.svc, "c"+itoa(uint64(i)))
		}
		e.clock.Advance(time.Minute)
		newCharge(t, e.svc, "later")
		r := newReceiver(t)
		w := createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		createWebhook(t, e.svc, r.URL, payments.EventChargeExpired) // another name: not its events

		got, more, err := e.svc.ResendWebhookEvents(ctx, w.ID, payments.ResendWebhookEventsParams{From: t0, To: t0.Add(time.Minute)})
		is.NoErr(err)
		is.Equal(len(got), payments.MaxWebhookResend) // bounded
		is.True(more)                                 // and says there is more
		rest, more, err := e.svc.ResendWebhookEvents(ctx, w.ID, payments.ResendWebhookEventsParams{From: t0, To: t0.Add(time.Minute), After: got[len(got)-1].Seq})
		is.NoErr(err)
		is.Equal(len(rest), 5) // the rest
		is.True(!more)         // and no more
		seen := map[uint64]bool{}
		all := append(got, rest...)
		for i, a := range all {
			is.Equal(a.Outcome, "resent") // recorded as a resend
			is.True(!seen[a.Seq])         // each event once
			seen[a.Seq] = true
			if i > 0 {
				is.True(a.Seq > all[i-1].Seq) // oldest first
			}
		}
		is.Equal(len(r.events()), 2+n) // the two test calls, then each event once; "later" is outside [from, to)
		attempts, _, err := e.svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{Limit: payments.MaxLimit})
		is.NoErr(err)
		is.Equal(len(attempts), n) // all recorded

		got, more, err = e.svc.ResendWebhookEvents(ctx, w.ID, payments.ResendWebhookEventsParams{From: t0.Add(time.Minute), To: t0.Add(time.Hour)})
		is.NoErr(err)
		is.Equal(len(got), 1) // "later" alone
		is.True(!more)
		is.True(strings.Contains(string(r.last().body), `"later"`))

		_, _, err = e.svc.ResendWebhookEvents(ctx, w.ID, payments.ResendWebhookEventsParams{To: t0})
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // from required
		_, _, err = e.svc.ResendWebhookEvents(ctx, w.ID, payments.ResendWebhookEventsParams{From: t0, To: t0})
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // an empty range
		_, _, err = e.svc.ResendWebhookEvents(ctx, "nope", payments.ResendWebhookEventsParams{From: t0, To: t0.Add(time.Hour)})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such webhook
	})
}

// countingSender answers every delivery 200 and counts those of events (not the test call
// on create) by URL.
type countingSender struct {
	mu    sync.Mutex
	byURL map[string]int
}

func (c *countingSender) SendWebhook(_ context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
	if !bytes.Contains(r.Body, []byte(`"teste_webhook"`)) {
		c.mu.Lock()
		c.byURL[r.URL]++
		c.mu.Unlock()
	}
	return payments.WebhookResponse{Status: http.StatusOK}, nil
}

// TestService_Webhooks_MoreThanAPage: a company with more webhooks on one event than a
// page of MaxLimit (a limit raised past it) gets the event to every one of them; the last
// was never queued, so it never received anything.
func TestService_Webhooks_MoreThanAPage(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	snd := &countingSender{byURL: map[string]int{}}
	const n = payments.MaxLimit + 2
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0), WebhookSender: snd,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}, MaxWebhooksPerEvent: n})
	is.NoErr(err)
	for i := range n {
		_, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: fmt.Sprintf("https://hooks.example.com/%d", i),
			Event: svc.EventName(payments.EventChargeCreated)})
		is.NoErr(err)
	}
	newCharge(t, svc, "c1")
	is.NoErr(svc.RunDue(ctx))
	for i := range n {
		if got := snd.byURL[fmt.Sprintf("https://hooks.example.com/%d", i)]; got != 1 {
			t.Errorf("webhook %d got the event %d times, want once", i, got)
		}
	}
}

// TestMemoryMailer_Keeps: the default mailer keeps the latest Keep messages, oldest first,
// and drops the rest.
func TestMemoryMailer_Keeps(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	m := &payments.MemoryMailer{Keep: 3}
	for i := range 5 {
		is.NoErr(m.SendMail(ctx, payments.MailMessage{To: "a@example.com", Subject: fmt.Sprint(i)}))
	}
	var subjects []string
	for _, msg := range m.Messages() {
		subjects = append(subjects, msg.Subject)
	}
	is.Equal(subjects, []string{"2", "3", "4"})
	is.Equal(len((&payments.MemoryMailer{}).Messages()), 0)
}

// TestService_CreateWebhook_LongURL: a url's limit is in bytes too, the same on every
// store: 700 characters of another script (2,100 bytes) are refused naming url, where
// PostgreSQL alone failed to index them (a 500); 2,048 bytes of ASCII are taken everywhere.
func TestService_CreateWebhook_LongURL(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			svc, err := payments.New(st.open(t), payments.Options{Clock: payments.NewManualClock(t0), WebhookSender: &countingSender{byURL: map[string]int{}}})
			is.NoErr(err)
			_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://x.example/" + strings.Repeat("界", 700)})
			is.Equal(payments.ErrorField(err), "url")
			is.True(strings.Contains(err.Error(), "bytes"))
			long := "https://x.example/" + strings.Repeat("a", 2048-len("https://x.example/"))
			_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: long})
			is.NoErr(err) // the longest taken, on every store
		})
	}
}

// TestService_ListWebhooks_SameInstant: webhooks created at one instant list newest first,
// with and without the url filter. Before, ties were broken by the encoded id, whose
// base64 does not sort as the id it encodes.
func TestService_ListWebhooks_SameInstant(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		var made []string
		for range 40 {
			made = append(made, createWebhook(t, e.svc, r.URL+"/in", payments.EventChargeCreated).ID)
		}
		slices.Reverse(made) // newest first
		for _, url := range []string{"", r.URL + "/in"} {
			ws, _, err := e.svc.ListWebhooks(ctx, url, payments.ListParams{})
			is.NoErr(err)
			var got []string
			for _, w := range ws {
				got = append(got, w.ID)
			}
			is.Equal(got, made)
		}
	})
}

// TestService_CreateWebhook_EventConstants: the package's own event constants, without the
// vendor prefix, are accepted and stored under the full name the catalogue lists; a name
// of no event is refused with an error that does not speak HTTP only.
func TestService_CreateWebhook_EventConstants(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0), Mailer: &payments.MemoryMailer{},
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	for _, tc := range []struct{ event, want string }{
		{payments.EventChargeCompleted, "OPENPIX:CHARGE_COMPLETED"},
		{payments.EventRefundConfirmed, "PIX_TRANSACTION_REFUND_SENT_CONFIRMED"}, // its real name has no prefix
		{"OPENPIX:CHARGE_CREATED", "OPENPIX:CHARGE_CREATED"},
	} {
		w, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: tc.event, Email: "ops@loja.example.com", Event: tc.event})
		is.NoErr(err)
		is.Equal(w.Event, tc.want)
	}
	for _, bad := range []string{"CHARGE_PAID", "OPENPIX:PIX_TRANSACTION_REFUND_SENT_CONFIRMED"} {
		_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: "x", Email: "ops@loja.example.com", Event: bad})
		is.Equal(payments.ErrorCode(err), payments.EINVALID)
		is.True(strings.Contains(err.Error(), "EventCatalog")) // names the library's list
	}
}

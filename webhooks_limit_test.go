package payments_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// mailHook creates an active e-mail webhook of svc on event (full name), the i-th.
func mailHook(svc *payments.Service, i int, event string) (payments.Webhook, error) {
	return svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: fmt.Sprint("mail ", i), Email: fmt.Sprintf("ops%d@loja.example.com", i), Event: event})
}

// TestService_CreateWebhook_Limit: a company has at most Options.MaxWebhooksPerEvent
// active webhooks on one event, queued or not; the next is EPRECONDITION on "event",
// refused before its test call. Inactive webhooks, other events and other companies do
// not count; deleting one makes room.
func TestService_CreateWebhook_Limit(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{MaxWebhooksPerEvent: 3}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		event := e.svc.EventName(payments.EventChargeCreated)
		var made []payments.Webhook
		for i := range 3 {
			w, err := mailHook(e.svc, i, event)
			is.NoErr(err) // up to the limit
			made = append(made, w)
		}
		_, err := mailHook(e.svc, 3, event)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // one more is refused
		is.Equal(payments.ErrorField(err), "event")               // naming the field
		is.True(strings.Contains(err.Error(), "at most 3"))       // and the limit
		_, err = e.svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: r.URL, Event: event})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a url webhook too
		is.Equal(len(r.events()), 0)                              // refused before its test call

		off := false
		_, err = e.svc.CreateWebhook(ctx, payments.CreateWebhookParams{Email: "off@loja.example.com", Event: event, IsActive: &off})
		is.NoErr(err) // an inactive one does not count
		_, err = mailHook(e.svc, 4, e.svc.EventName(payments.EventChargeCompleted))
		is.NoErr(err) // nor one on another event
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		for i := range 3 {
			_, err := mailHook(other, i, event)
			is.NoErr(err) // another company has a limit of its own
		}

		newCharge(t, e.svc, "c1") // queues the three
		_, err = mailHook(e.svc, 5, event)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // queued ones count
		is.NoErr(e.svc.RunDue(ctx))                               // delivered: off the queue
		_, err = mailHook(e.svc, 5, event)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // and so do the others

		is.NoErr(e.svc.DeleteWebhook(ctx, made[0].ID))
		_, err = mailHook(e.svc, 6, event)
		is.NoErr(err) // deleting one made room
		_, err = mailHook(e.svc, 7, event)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // for one
	})
}

// TestService_CreateWebhook_LimitDisabled: a webhook its receiver disabled (410 Gone) is
// no longer active and leaves its place.
func TestService_CreateWebhook_LimitDisabled(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{MaxWebhooksPerEvent: 1}, func(t *testing.T, e env) {
		is := is.New(t)
		r := newReceiver(t)
		r.answer = func(n int, d delivery) int {
			if d.event == "test" {
				return http.StatusOK
			}
			return http.StatusGone
		}
		w := createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
		_, err := mailHook(e.svc, 0, w.Event)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // full
		newCharge(t, e.svc, "c1")
		is.NoErr(e.svc.RunDue(ctx))
		got, err := e.svc.GetWebhook(ctx, w.ID)
		is.NoErr(err)
		is.True(!got.IsActive) // disabled by the 410
		_, err = mailHook(e.svc, 0, w.Event)
		is.NoErr(err) // its place is free
	})
}

// TestService_CreateWebhook_LimitConcurrent: creates racing for the last places take no
// more than there are.
func TestService_CreateWebhook_LimitConcurrent(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{MaxWebhooksPerEvent: 3}, func(t *testing.T, e env) {
		is := is.New(t)
		event := e.svc.EventName(payments.EventChargeCreated)
		errs := make([]error, 12)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = mailHook(e.svc, i, event) })
		}
		wg.Wait()
		made := 0
		for _, err := range errs {
			switch payments.ErrorCode(err) {
			case "":
				made++
			case payments.EPRECONDITION:
			default:
				t.Fatalf("create: %v", err)
			}
		}
		is.Equal(made, 3) // exactly the limit
		_, page, err := e.svc.ListWebhooks(ctx, "", payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 3) // and only those stored
	})
}

// TestService_CreateWebhook_DefaultLimit: without Options.MaxWebhooksPerEvent a company
// has DefaultMaxWebhooksPerEvent active webhooks on one event, every one of which gets
// its events.
func TestService_CreateWebhook_DefaultLimit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	mailer := &payments.MemoryMailer{}
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0), Mailer: mailer,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	event := svc.EventName(payments.EventChargeCreated)
	for i := range payments.DefaultMaxWebhooksPerEvent {
		_, err := mailHook(svc, i, event)
		is.NoErr(err)
	}
	_, err = mailHook(svc, payments.DefaultMaxWebhooksPerEvent, event)
	is.Equal(payments.ErrorCode(err), payments.EPRECONDITION)                                           // one past the default
	is.True(strings.Contains(err.Error(), fmt.Sprint("at most ", payments.DefaultMaxWebhooksPerEvent))) // which the message names
	newCharge(t, svc, "c1")
	newCharge(t, svc, "c2") // the webhooks are queued already: found by their cursors
	is.NoErr(svc.RunDue(ctx))
	newCharge(t, svc, "c3") // off the queue again: queued by this one
	is.NoErr(svc.RunDue(ctx))
	to := map[string]int{}
	for _, m := range mailer.Messages() {
		to[m.To]++
	}
	is.Equal(len(to), payments.DefaultMaxWebhooksPerEvent) // every webhook
	for addr, n := range to {
		if n != 3 {
			t.Errorf("%s got %d e-mails, want 3", addr, n)
		}
	}
}

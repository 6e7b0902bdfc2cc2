package payments_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
)

// TestService_OutboxLag follows a webhook whose receiver fails one event: the lag counts
// the events owed and ages with the clock until delivery catches up; OnWebhookAttempt
// sees each recorded attempt's outcome.
func TestService_OutboxLag(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			outboxLag(t, st.open)
		})
	}
}

func outboxLag(t *testing.T, open func(testing.TB) store.Store) {
	is := is.New(t)
	var mu sync.Mutex
	var outcomes []string // this store's: the subtests run in parallel
	e := newWebhookEnv(t, open(t), payments.Options{WebhookAttempts: 2, OnWebhookAttempt: func(a payments.WebhookAttempt) {
		mu.Lock()
		defer mu.Unlock()
		outcomes = append(outcomes, a.Outcome)
	}})
	r := newReceiver(t)
	createWebhook(t, e.svc, r.URL, payments.EventChargeCreated)
	r.answer = func(n int, d delivery) int {
		if strings.Contains(string(d.body), `"c1"`) {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	lag, err := e.svc.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, payments.OutboxLag{}) // nothing owed yet

	newCharge(t, e.svc, "c1")
	newCharge(t, e.svc, "c2")
	e.clock.Advance(30 * time.Second)
	lag, err = e.svc.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag.Webhooks, 1)            // one webhook is owed
	is.Equal(lag.Events, uint64(2))      // the two charges' events
	is.Equal(lag.Oldest, 30*time.Second) // the oldest has waited 30 s

	is.NoErr(e.svc.RunDue(ctx)) // c1 fails: retried in 10 s, c2 waits behind it
	lag, err = e.svc.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag.Events, uint64(2)) // still both owed

	e.clock.Advance(10 * time.Second)
	is.NoErr(e.svc.RunDue(ctx)) // c1 given up, c2 delivered
	lag, err = e.svc.OutboxLag(ctx)
	is.NoErr(err)
	is.Equal(lag, payments.OutboxLag{}) // caught up

	mu.Lock()
	defer mu.Unlock()
	is.Equal(outcomes, []string{"retry", "gave_up", "delivered"}) // each recorded attempt, once
}

package payments_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// TestService_WebhookBodySignedOnce: an event delivered to many webhooks is RSA-signed
// once, not once per webhook, and every copy verifies with its own webhook's secret.
func TestService_WebhookBodySignedOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newWebhookEnv(t, stores[0].open(t), payments.Options{})
	r := newReceiver(t)
	const n = 20
	var hooks []payments.Webhook
	for range n {
		hooks = append(hooks, createWebhook(t, e.svc, r.URL, payments.EventChargeCreated))
	}
	before := e.svc.WebhookRSASignatures() // the create calls' test deliveries
	newCharge(t, e.svc, "c1")
	is.NoErr(e.svc.RunDue(ctx))
	is.Equal(e.svc.WebhookRSASignatures()-before, int64(1)) // one event, one RSA signature for 20 copies
	keys, err := e.svc.WebhookPublicKeys(ctx)
	is.NoErr(err)
	got := 0
	r.mu.Lock()
	all := append([]delivery(nil), r.got...)
	r.mu.Unlock()
	for _, d := range all {
		if d.event != e.svc.EventName(payments.EventChargeCreated) {
			continue
		}
		got++
		is.NoErr(httpadapter.VerifyWebhookRSA(keys[0].Key, d.header, d.body)) // the shared RSA signature verifies
		verified := 0
		for _, w := range hooks {
			if httpadapter.VerifyWebhook(w.HMACSecretKey, d.header, d.body, e.clock.Now(), 0) == nil {
				verified++
			}
		}
		is.Equal(verified, 1) // each copy carries its own webhook's HMAC
	}
	is.Equal(got, n) // every webhook got its copy
}

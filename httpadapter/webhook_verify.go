package httpadapter

import (
	"net/http"
	"time"

	"github.com/pixfoundry/payments/webhook"
)

// Helpers for receivers of this server's webhooks: the protocol lives in package webhook,
// with its signing end; these names stay for the receivers that use them.

// ErrWebhookSignature is returned by the verifiers when a delivery is not authentic; it is
// webhook.ErrSignature.
var ErrWebhookSignature = webhook.ErrSignature

// DefaultWebhookTolerance is how far webhook-timestamp may be from now in VerifyWebhook.
const DefaultWebhookTolerance = webhook.DefaultTolerance

// VerifyWebhook checks a delivery's Standard Webhooks headers against body with the
// webhook's hmacSecretKey: see webhook.Verify.
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	return webhook.Verify(secret, h, body, now, tolerance)
}

// VerifyWebhookRSA checks x-webhook-signature with a PEM public key from GET
// /api/v1/webhook/public-keys: see webhook.VerifyRSA.
func VerifyWebhookRSA(publicKeyPEM string, h http.Header, body []byte) error {
	return webhook.VerifyRSA(publicKeyPEM, h, body)
}

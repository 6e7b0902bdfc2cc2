package httpadapter

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Helpers for receivers of this server's webhooks.

// ErrWebhookSignature is returned by the verifiers when a delivery is not authentic.
var ErrWebhookSignature = errors.New("webhook signature does not verify")

// DefaultWebhookTolerance is how far webhook-timestamp may be from now in VerifyWebhook.
const DefaultWebhookTolerance = 5 * time.Minute

// VerifyWebhook checks a delivery's Standard Webhooks headers (webhook-id,
// webhook-timestamp, webhook-signature) against body with the webhook's hmacSecretKey
// ("whsec_..."): one of the space-separated "v1,<base64>" signatures must be the HMAC-SHA256
// of "<id>.<timestamp>.<body>" keyed with the base64-decoded part after "whsec_", and the
// timestamp within tolerance of now (0 means DefaultWebhookTolerance).
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("webhook secret: %w", err)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return ErrWebhookSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance", ErrWebhookSignature)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.", id, ts)
	mac.Write(body)
	want := mac.Sum(nil)
	for sig := range strings.FieldsSeq(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookSignature
}

// VerifyWebhookRSA checks x-webhook-signature (base64 RSA PKCS#1 v1.5 SHA-256 of the body)
// with a PEM public key from GET /api/v1/webhook/public-keys.
func VerifyWebhookRSA(publicKeyPEM string, h http.Header, body []byte) error {
	b, _ := pem.Decode([]byte(publicKeyPEM))
	if b == nil {
		return errors.New("webhook public key: not PEM")
	}
	pk, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return fmt.Errorf("webhook public key: %w", err)
	}
	key, ok := pk.(*rsa.PublicKey)
	if !ok {
		return errors.New("webhook public key: not RSA")
	}
	sig, err := base64.StdEncoding.DecodeString(h.Get("x-webhook-signature"))
	if err != nil {
		return ErrWebhookSignature
	}
	sum := sha256.Sum256(body)
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil {
		return ErrWebhookSignature
	}
	return nil
}

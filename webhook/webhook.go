// Package webhook is the signature protocol of this platform's webhooks, both ends of it:
// what the sender puts on a delivery and what a receiver checks. A delivery carries three
// signatures of its body, so that every kind of receiver can check one:
//
//   - Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature): "v1," and the
//     base64 HMAC-SHA256 of "<id>.<timestamp>.<body>", keyed with the base64-decoded part
//     of the webhook's secret after "whsec_";
//   - x-webhook-signature: the base64 RSA PKCS#1 v1.5 SHA-256 signature of the body, with
//     the platform's key (its public half is served at GET /api/v1/webhook/public-keys),
//     as the real OpenPix API signs;
//   - X-OpenPix-Signature: the base64 HMAC-SHA1 of the body keyed with the whole secret
//     string ("whsec_..." as text), the legacy header.
//
// Signer signs; Verify, VerifyRSA and VerifyLegacy check. It imports nothing of this
// module, as brcode does not.
package webhook

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	HeaderRSA       = "x-webhook-signature"
	HeaderLegacy    = "X-OpenPix-Signature"
)

// SecretPrefix starts every webhook secret: "whsec_" and the base64 of the HMAC key.
const SecretPrefix = "whsec_"

// ErrSignature is returned by the verifiers when a delivery is not authentic.
var ErrSignature = errors.New("webhook signature does not verify")

// DefaultTolerance is how far webhook-timestamp may be from now in Verify.
const DefaultTolerance = 5 * time.Minute

// Delivery is one POST of a body to one webhook, as Signer.Headers signs it.
type Delivery struct {
	// ID is the webhook-id: the same on every attempt of one event to one webhook.
	ID string
	// At is the webhook-timestamp's time.
	At time.Time
	// Secret is the webhook's secret, "whsec_" and base64.
	Secret string
	// Authorization, when set, is sent as Authorization and x-openpix-authorization.
	Authorization string
	Body          []byte
}

// Signer signs deliveries with one RSA key. The RSA signature, the expensive part (about
// a millisecond of CPU at 2048 bits), depends on the body alone: Signer keeps the last
// bodies' signatures, so that an event's body sent to many webhooks, and sent again on a
// retry, is RSA-signed once. The HMACs depend on each webhook's secret and the delivery's
// id and time, and cost microseconds. A Signer is safe for concurrent use.
type Signer struct {
	key *rsa.PrivateKey

	mu    sync.Mutex
	sigs  map[[sha256.Size]byte]*signature // by body digest, being made or made
	order [][sha256.Size]byte              // digests in the order they were added, for eviction
	next  int                              // the slot of order the next digest takes once full
	size  int

	computed atomic.Int64
}

// DefaultSignatureCache is how many bodies' RSA signatures a Signer keeps.
const DefaultSignatureCache = 1024

// NewSigner returns a Signer with key that keeps the RSA signatures of the last cache
// bodies (DefaultSignatureCache when cache <= 0).
func NewSigner(key *rsa.PrivateKey, cache int) *Signer {
	if cache <= 0 {
		cache = DefaultSignatureCache
	}
	return &Signer{key: key, sigs: make(map[[sha256.Size]byte]*signature, cache), size: cache}
}

// signature is one body's RSA signature: done is closed once sig or err is set. The
// deliveries of one body that arrive while it is being made wait for it instead of
// signing again.
type signature struct {
	done chan struct{}
	sig  string
	err  error
}

// RSASignatures is how many RSA signatures s has computed (bodies it had not signed lately).
func (s *Signer) RSASignatures() int64 { return s.computed.Load() }

// Headers makes the headers of a delivery: Content-Type, User-Agent, the three
// signatures (see the package doc) and, when set, the authorization.
func (s *Signer) Headers(d Delivery) (http.Header, error) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "payments-webhooks/1")
	ts := strconv.FormatInt(d.At.Unix(), 10)
	std, err := standard(d.Secret, d.ID, ts, d.Body)
	if err != nil {
		return nil, err
	}
	h.Set(HeaderID, d.ID)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, "v1,"+base64.StdEncoding.EncodeToString(std))
	sig, err := s.rsa(d.Body)
	if err != nil {
		return nil, err
	}
	h.Set(HeaderRSA, sig)
	h.Set(HeaderLegacy, base64.StdEncoding.EncodeToString(legacy(d.Secret, d.Body)))
	if d.Authorization != "" {
		h.Set("Authorization", d.Authorization)
		h.Set("x-openpix-authorization", d.Authorization)
	}
	return h, nil
}

// rsa is the base64 RSA signature of body: made by the first delivery of the body, and
// reused by the others while the body is among the last s.size signed.
func (s *Signer) rsa(body []byte) (string, error) {
	sum := sha256.Sum256(body)
	s.mu.Lock()
	if sg, ok := s.sigs[sum]; ok {
		s.mu.Unlock()
		<-sg.done
		return sg.sig, sg.err
	}
	sg := &signature{done: make(chan struct{})}
	s.remember(sum, sg)
	s.mu.Unlock()

	raw, err := rsa.SignPKCS1v15(nil, s.key, crypto.SHA256, sum[:])
	s.computed.Add(1)
	if err != nil {
		sg.err = err
		s.mu.Lock()
		if s.sigs[sum] == sg {
			delete(s.sigs, sum) // a failure is not kept: the next delivery tries again
		}
		s.mu.Unlock()
	} else {
		sg.sig = base64.StdEncoding.EncodeToString(raw)
	}
	close(sg.done)
	return sg.sig, sg.err
}

// remember adds sg under sum, evicting the oldest body once s.size are kept. s.mu is held.
func (s *Signer) remember(sum [sha256.Size]byte, sg *signature) {
	if len(s.order) < s.size {
		s.order = append(s.order, sum)
	} else {
		delete(s.sigs, s.order[s.next])
		s.order[s.next] = sum
		s.next = (s.next + 1) % s.size
	}
	s.sigs[sum] = sg
}

// standard is the Standard Webhooks HMAC-SHA256 of "<id>.<ts>.<body>" keyed with the
// base64-decoded secret after "whsec_".
func standard(secret, id, ts string, body []byte) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.", id, ts)
	mac.Write(body)
	return mac.Sum(nil), nil
}

// legacy is the HMAC-SHA1 of body keyed with the whole secret string.
func legacy(secret string, body []byte) []byte {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write(body)
	return mac.Sum(nil)
}

// Verify checks a delivery's Standard Webhooks headers against body with the webhook's
// secret ("whsec_..."): one of the space-separated "v1,<base64>" signatures must be the
// HMAC-SHA256 of "<id>.<timestamp>.<body>", and the timestamp within tolerance of now
// (0 means DefaultTolerance), so that a captured delivery cannot be replayed later.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts := h.Get(HeaderID), h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return ErrSignature
	}
	want, err := standard(secret, id, ts, body)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance", ErrSignature)
	}
	for sig := range strings.FieldsSeq(h.Get(HeaderSignature)) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}

// VerifyRSA checks x-webhook-signature against body with a PEM public key ("PUBLIC KEY",
// as GET /api/v1/webhook/public-keys serves it).
func VerifyRSA(publicKeyPEM string, h http.Header, body []byte) error {
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
	sig, err := base64.StdEncoding.DecodeString(h.Get(HeaderRSA))
	if err != nil {
		return ErrSignature
	}
	sum := sha256.Sum256(body)
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil {
		return ErrSignature
	}
	return nil
}

// VerifyLegacy checks X-OpenPix-Signature, the HMAC-SHA1 of body keyed with the whole
// secret string. It proves the sender knows the secret but, having no timestamp, not that
// the delivery is fresh: prefer Verify.
func VerifyLegacy(secret string, h http.Header, body []byte) error {
	got, err := base64.StdEncoding.DecodeString(h.Get(HeaderLegacy))
	if err != nil || !hmac.Equal(got, legacy(secret, body)) {
		return ErrSignature
	}
	return nil
}

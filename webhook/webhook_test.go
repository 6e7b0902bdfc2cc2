package webhook_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/webhook"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// key is one 2048-bit key for every test (making one takes a while).
func key(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

func publicPEM(t *testing.T, k *rsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var at = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// TestSignVerify: a delivery Headers signs passes each verifier; a changed body, secret,
// timestamp or key does not.
func TestSignVerify(t *testing.T) {
	is := is.New(t)
	s := webhook.NewSigner(key(t), 0)
	body := []byte(`{"event":"OPENPIX:CHARGE_COMPLETED","charge":{"value":100}}`)
	h, err := s.Headers(webhook.Delivery{ID: "msg_1", At: at, Secret: secret, Authorization: "Bearer x", Body: body})
	is.NoErr(err)
	is.Equal(h.Get(webhook.HeaderID), "msg_1")
	is.Equal(h.Get(webhook.HeaderTimestamp), fmt.Sprint(at.Unix()))
	is.Equal(h.Get("Authorization"), "Bearer x")
	is.Equal(h.Get("x-openpix-authorization"), "Bearer x")

	is.NoErr(webhook.Verify(secret, h, body, at.Add(time.Minute), 0))                             // the Standard Webhooks signature
	is.NoErr(webhook.VerifyRSA(publicPEM(t, key(t)), h, body))                                    // the RSA one
	is.NoErr(webhook.VerifyLegacy(secret, h, body))                                               // the legacy one
	is.True(errors.Is(webhook.Verify(secret, h, append(body, ' '), at, 0), webhook.ErrSignature)) // another body
	is.True(errors.Is(webhook.VerifyRSA(publicPEM(t, key(t)), h, append(body, ' ')), webhook.ErrSignature))
	is.True(errors.Is(webhook.VerifyLegacy(secret, h, append(body, ' ')), webhook.ErrSignature))
	is.True(errors.Is(webhook.Verify("whsec_b3RoZXI=", h, body, at, 0), webhook.ErrSignature)) // another secret
	is.True(errors.Is(webhook.VerifyLegacy("whsec_b3RoZXI=", h, body), webhook.ErrSignature))
	err = webhook.Verify(secret, h, body, at.Add(6*time.Minute), 0)
	is.True(errors.Is(err, webhook.ErrSignature)) // too late: a replay
	err = webhook.Verify(secret, h, body, at.Add(-6*time.Minute), 0)
	is.True(errors.Is(err, webhook.ErrSignature))                             // from the future
	is.NoErr(webhook.Verify(secret, h, body, at.Add(time.Hour), 2*time.Hour)) // a wider tolerance

	other, err := rsa.GenerateKey(rand.Reader, 1024) // another key, small: only verified against
	is.NoErr(err)
	is.True(errors.Is(webhook.VerifyRSA(publicPEM(t, other), h, body), webhook.ErrSignature))

	h.Set(webhook.HeaderSignature, "v0,abc v1,"+h.Get(webhook.HeaderSignature)[3:])
	is.NoErr(webhook.Verify(secret, h, body, at, 0)) // one good signature among several is enough
	h.Del(webhook.HeaderID)
	is.True(errors.Is(webhook.Verify(secret, h, body, at, 0), webhook.ErrSignature)) // no id
	is.True(webhook.VerifyRSA("not pem", h, body) != nil)
}

// TestSigner_RSAOncePerBody: one body sent to many webhooks (other secrets, ids and
// times) is RSA-signed once; another body once more; a body pushed out of the cache is
// signed again, with the same signature.
func TestSigner_RSAOncePerBody(t *testing.T) {
	is := is.New(t)
	s := webhook.NewSigner(key(t), 2)
	body := []byte(`{"event":"OPENPIX:CHARGE_CREATED"}`)
	var first string
	for i := range 50 {
		h, err := s.Headers(webhook.Delivery{ID: fmt.Sprint("msg_", i), At: at.Add(time.Duration(i) * time.Second),
			Secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte(fmt.Sprint("secret", i%3))), Body: body})
		is.NoErr(err)
		if first == "" {
			first = h.Get(webhook.HeaderRSA)
		}
		is.Equal(h.Get(webhook.HeaderRSA), first) // the same signature each time
	}
	is.Equal(s.RSASignatures(), int64(1)) // signed once for 50 deliveries
	for _, b := range []string{`{"a":1}`, `{"a":2}`} {
		_, err := s.Headers(webhook.Delivery{ID: "m", At: at, Secret: secret, Body: []byte(b)})
		is.NoErr(err)
	}
	is.Equal(s.RSASignatures(), int64(3)) // each new body once; the first is now out of a cache of 2
	h, err := s.Headers(webhook.Delivery{ID: "m", At: at, Secret: secret, Body: body})
	is.NoErr(err)
	is.Equal(s.RSASignatures(), int64(4))     // signed again
	is.Equal(h.Get(webhook.HeaderRSA), first) // PKCS#1 v1.5 is deterministic
}

// TestSigner_Concurrent: deliveries signed at once (under -race) each verify, and each of
// the four bodies is RSA-signed once, the others waiting for it.
func TestSigner_Concurrent(t *testing.T) {
	is := is.New(t)
	s := webhook.NewSigner(key(t), 0)
	pub := publicPEM(t, key(t))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := []byte(fmt.Sprintf(`{"n":%d}`, i%4))
			h, err := s.Headers(webhook.Delivery{ID: "m", At: at, Secret: secret, Body: body})
			if err == nil {
				err = webhook.VerifyRSA(pub, h, body)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err)
	}
	is.Equal(s.RSASignatures(), int64(4)) // four bodies, signed once each
}

// TestVerify_BadSecret: a secret that is not base64 after whsec_ is reported, not a
// signature mismatch.
func TestVerify_BadSecret(t *testing.T) {
	is := is.New(t)
	s := webhook.NewSigner(key(t), 0)
	h, err := s.Headers(webhook.Delivery{ID: "m", At: at, Secret: secret, Body: []byte("{}")})
	is.NoErr(err)
	err = webhook.Verify("whsec_not base64!", h, []byte("{}"), at, 0)
	is.True(err != nil && !errors.Is(err, webhook.ErrSignature))
	_, err = s.Headers(webhook.Delivery{ID: "m", At: at, Secret: "whsec_not base64!", Body: []byte("{}")})
	is.True(err != nil) // nor signed with
}

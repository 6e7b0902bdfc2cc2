package httpadapter

import (
	"crypto/rand"
	"crypto/rsa"
	"sync"
	"testing"
)

// testSigningKey is made once for the package's tests: an RSA-2048 key costs about 100 ms
// under the race detector, and the tests open a Service each.
var testSigningKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// SigningKeyForTests is the webhook signing key every test's Service shares
// (Options.WebhookSigningKey).
func SigningKeyForTests(t testing.TB) *rsa.PrivateKey {
	k, err := testSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signingKey is SigningKeyForTests for the package's own tests.
var signingKey = SigningKeyForTests

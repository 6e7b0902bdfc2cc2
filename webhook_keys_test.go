package payments_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
)

// TestService_WebhookSigningKey: a store without a signing key starts with the one
// Options.WebhookSigningKey gives, and keeps it when reopened without it; a store that has
// its key keeps it whatever a later open gives; a key under 2048 bits is refused.
func TestService_WebhookSigningKey(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	given, err := rsa.GenerateKey(rand.Reader, 2048)
	is.NoErr(err)
	publicPEM := func(k *rsa.PrivateKey) string {
		der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		is.NoErr(err)
		return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	}
	published := func(path string, key *rsa.PrivateKey) string {
		st, err := bolt.Open(path)
		is.NoErr(err)
		defer st.Close()
		svc, err := payments.New(st, payments.Options{WebhookSigningKey: key})
		is.NoErr(err)
		keys, err := svc.WebhookPublicKeys(ctx)
		is.NoErr(err)
		is.Equal(len(keys), 1)
		return keys[0].Key
	}

	dir := t.TempDir()
	withKey := filepath.Join(dir, "given.db")
	is.Equal(published(withKey, given), publicPEM(given)) // a new store starts with the given key
	is.Equal(published(withKey, nil), publicPEM(given))   // and keeps it

	generated := filepath.Join(dir, "generated.db")
	first := published(generated, nil)
	is.True(first != publicPEM(given))
	is.Equal(published(generated, given), first) // a store with its key keeps it

	small, err := rsa.GenerateKey(rand.Reader, 1024)
	is.NoErr(err)
	_, err = payments.New(memory.New(), payments.Options{WebhookSigningKey: small})
	is.Equal(payments.ErrorCode(err), payments.EINVALID)
	is.Equal(payments.ErrorField(err), "WebhookSigningKey")
}

package payments

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/webhook"
)

// The platform's webhook signing key: one RSA key pair for every company, made on first
// use and kept in the system space; its public half is served so that receivers can check
// x-webhook-signature (package webhook signs and verifies with it).
const (
	collWebhookKeys = "webhook_keys"
	webhookKeyBits  = 2048
	currentKeyID    = "current"
)

// generateWebhookKey makes a store's first signing key when Options.WebhookSigningKey
// does not give one. (The package's tests replace it with one key made once: a key costs
// about 100 ms under the race detector, and they open hundreds of stores.)
var generateWebhookKey = func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, webhookKeyBits) }

type storedKey struct {
	PEM string `json:"pem"` // PKCS#8 private key
}

// webhookKey is the current signing key, generated and stored on first use.
func (s *Service) webhookKey(ctx context.Context) (*rsa.PrivateKey, error) {
	wc := s.core.webhooks
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.key != nil {
		return wc.key, nil
	}
	read := func(t *txn) (*rsa.PrivateKey, error) {
		r, err := t.tx.Get(collWebhookKeys, systemSpace, currentKeyID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		} else if err != nil {
			return nil, internal(err)
		}
		var k storedKey
		if err := decode(r, &k); err != nil {
			return nil, err
		}
		b, _ := pem.Decode([]byte(k.PEM))
		if b == nil {
			return nil, errors.New("webhook key: bad PEM")
		}
		pk, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			return nil, err
		}
		rk, ok := pk.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("webhook key: not RSA")
		}
		return rk, nil
	}
	var key *rsa.PrivateKey
	err := s.view(ctx, func(t *txn) error {
		var err error
		key, err = read(t)
		return err
	})
	if err != nil {
		return nil, err
	}
	if key == nil {
		gen := wc.given // Options.WebhookSigningKey
		if gen == nil {
			gen, err = generateWebhookKey() // outside the transaction: it may run twice
			if err != nil {
				return nil, internal(err)
			}
		}
		der, err := x509.MarshalPKCS8PrivateKey(gen)
		if err != nil {
			return nil, internal(err)
		}
		data, err := json.Marshal(storedKey{PEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
		if err != nil {
			return nil, internal(err)
		}
		err = s.update(ctx, func(t *txn) error {
			key = nil
			got, err := read(t)
			if err != nil || got != nil {
				key = got // another process made it first
				return err
			}
			key = gen
			return storeErr(t.tx.Insert(collWebhookKeys, systemSpace, store.Record{ID: currentKeyID, Data: data}), "webhook key")
		})
		if err != nil {
			return nil, err
		}
	}
	wc.key, wc.signer = key, webhook.NewSigner(key, 0)
	return key, nil
}

// webhookSigner signs deliveries with the current key (see webhook.Signer: an event's body
// is RSA-signed once however many webhooks it goes to).
func (s *Service) webhookSigner(ctx context.Context) (*webhook.Signer, error) {
	if _, err := s.webhookKey(ctx); err != nil {
		return nil, err
	}
	wc := s.core.webhooks
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.signer, nil
}

// WebhookPublicKey is a key that verifies x-webhook-signature, as GET
// /api/v1/webhook/public-keys serves it.
type WebhookPublicKey struct {
	KeyIdentifier string `json:"key_identifier"` // hex SHA-256 of the DER SubjectPublicKeyInfo
	Key           string `json:"key"`            // PEM "PUBLIC KEY"
	IsCurrent     bool   `json:"is_current"`
}

// WebhookPublicKeys returns the keys that verify x-webhook-signature (one: there is no
// rotation yet), generating the key pair on first use.
func (s *Service) WebhookPublicKeys(ctx context.Context) ([]WebhookPublicKey, error) {
	key, err := s.webhookKey(ctx)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, internal(err)
	}
	sum := sha256.Sum256(der)
	return []WebhookPublicKey{{KeyIdentifier: hex.EncodeToString(sum[:]),
		Key: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), IsCurrent: true}}, nil
}

package payments

import "sync"

// SetWebhookWaitHook makes f run each time a delivery pass starts to wait for a webhook
// that another pass of the process is delivering to, until the test ends. Set it before
// any pass runs.
func SetWebhookWaitHook(t interface{ Cleanup(func()) }, f func()) {
	testHookWebhookWait = f
	t.Cleanup(func() { testHookWebhookWait = nil })
}

// WebhookRSASignatures is how many RSA signatures the Service's webhook signer has
// computed (0 before the first delivery).
func (s *Service) WebhookRSASignatures() int64 {
	wc := s.core.webhooks
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.signer == nil {
		return 0
	}
	return wc.signer.RSASignatures()
}

// The tests share one webhook signing key, made on first use (see generateWebhookKey).
func init() {
	key := sync.OnceValues(generateWebhookKey)
	generateWebhookKey = key
}

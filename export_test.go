package payments

// SetWebhookWaitHook makes f run each time a delivery pass starts to wait for a webhook
// that another pass of the process is delivering to, until the test ends. Set it before
// any pass runs.
func SetWebhookWaitHook(t interface{ Cleanup(func()) }, f func()) {
	testHookWebhookWait = f
	t.Cleanup(func() { testHookWebhookWait = nil })
}

package httpadapter

// addCompanyRoutes registers the company itself, closing its accounts and subaccounts,
// and the webhook source addresses.
func addCompanyRoutes(k routeKit) {
	k.api("GET /company", k.notOffered("getting the company is"))
	k.api("DELETE /account/{accountId}", k.notOffered("closing accounts is"))
	k.api("DELETE /subaccount/{id}", k.notOffered("deleting subaccounts is"))
	k.api("GET /webhook/ips", k.notOffered("webhook source IPs are"))
}

package httpadapter

// addPixAutomaticRoutes registers Pix Automático: a subscription's installments and
// their collection requests, and a subscription's value.
func addPixAutomaticRoutes(k routeKit) {
	k.api("PUT /subscriptions/{id}/value", k.notOffered("changing a subscription's value is"))
	k.api("GET /subscriptions/{id}/installments", k.notOffered("subscription installments are"))
	k.api("GET /installments/{id}", k.notOffered("subscription installments are"))
	k.api("POST /installments/{id}/cobr", k.notOffered("an installment's cobr is"))
	k.api("POST /installments/{id}/cobr/retry", k.notOffered("retrying an installment's cobr is"))
}

package httpadapter

// addStatementRoutes registers the statements: the company's and a subaccount's.
func addStatementRoutes(k routeKit) {
	k.api("GET /statement", k.notOffered("statements are"))
	k.api("GET /subaccount/{id}/statement", k.notOffered("subaccount statements are"))
}

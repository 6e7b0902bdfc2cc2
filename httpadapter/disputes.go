package httpadapter

// addDisputeRoutes registers disputes (MED) against the company's received Pix.
func addDisputeRoutes(k routeKit) {
	k.api("GET /dispute", k.notOffered("disputes are"))
	k.api("GET /dispute/{id}", k.notOffered("disputes are"))
	k.api("POST /dispute/{id}/evidence", k.notOffered("dispute evidence is"))
}

package httpadapter

import (
	"context"
	"testing"

	"github.com/pixfoundry/payments"
)

func FuzzDisputeEvidence(f *testing.F)    { fuzzRoute(f, "POST /dispute/{id}/evidence") }
func FuzzSandboxDisputeOpen(f *testing.F) { fuzzRoute(f, "POST /openpix/testing/dispute") }
func FuzzSandboxDisputeDecide(f *testing.F) {
	fuzzRoute(f, "POST /openpix/testing/dispute/{id}/decide")
}

// Pix of the fuzz server's disputes: the first two are disputed (one answered by the
// evidence route's target, one decided by the decide route's), the third is the one
// validBodies' sandbox body opens a dispute against.
const (
	fuzzEvidencePix = "E99999999202611221200dispute0001"
	fuzzDecidePix   = "E99999999202611221200dispute0002"
)

// fuzzDisputePaths receives the disputes' Pix (small ones, so the balance the other
// targets spend stays as it was) in the fuzz server's company, opens the disputes, and
// returns the paths of the routes that need one.
func fuzzDisputePaths(tb testing.TB, svc *payments.Service) map[string]string {
	tb.Helper()
	ctx := context.Background()
	for _, e2e := range []string{fuzzEvidencePix, fuzzDecidePix, "E99999999202611221200dispute0003"} {
		if _, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e, Value: 100}); err != nil {
			tb.Fatal(err)
		}
	}
	for _, e2e := range []string{fuzzEvidencePix, fuzzDecidePix} {
		if _, err := svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: e2e, Reason: "fuzz"}); err != nil {
			tb.Fatal(err)
		}
	}
	return map[string]string{
		"POST /dispute/{id}/evidence":               "/api/v1/dispute/" + fuzzEvidencePix + "/evidence",
		"POST /openpix/testing/dispute/{id}/decide": "/openpix/testing/dispute/" + fuzzDecidePix + "/decide",
	}
}

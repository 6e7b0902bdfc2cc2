package payments_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// TestService_IDsFromOptions runs one flow twice with a fixed clock and an id source of the
// same seed, and once with another seed: every generated id (record ids, transactionIDs,
// paymentLinkIDs, generated correlationIDs, client ids and secrets, default Pix keys) comes
// from Options.IDs, so the first two outputs are byte-identical and the third differs.
func TestService_IDsFromOptions(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	a, b, c := idFlow(t, 1), idFlow(t, 1), idFlow(t, 2)
	is.Equal(string(a), string(b))  // same clock and seed: byte-identical output
	is.True(string(a) != string(c)) // another seed: other ids
}

// idFlow runs every operation that generates an id and returns all it answered, as JSON.
func idFlow(t *testing.T, seed byte) []byte {
	t.Helper()
	is := is.New(t)
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, IDs: rand.NewChaCha8([32]byte{seed}),
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", MerchantName: "Loja", MerchantCity: "Sao Paulo"}}) // default Pix key generated
	is.NoErr(err)
	var out []any
	keep := func(v any, err error) {
		t.Helper()
		is.NoErr(err) // flow step
		out = append(out, v)
	}
	keep(svc.GetCompany(ctx))
	keep(svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725"})) // generated correlationID
	ch, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 1000})
	keep(ch, err)
	keep(svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "balcao"}))
	clock.Advance(time.Minute)
	keep(svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E1", Value: 1000, TxID: ch.Identifier}))
	keep(svc.CreateChargeRefund(ctx, "c1", payments.CreateChargeRefundParams{CorrelationID: "r1", Value: 100}))
	app, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "erp", Type: payments.ApplicationAPI})
	keep(app, err)
	keep(svc.NewSandboxEndToEndID(), nil)
	keep(svc.Events(ctx, 0, 100))
	data, err := json.Marshal(out)
	is.NoErr(err)
	return data
}

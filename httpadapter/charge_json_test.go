package httpadapter

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/internal/wiretime"
)

// TestChargeJSON_SameAsEncodingJSON checks that the charge replies' own JSON
// (charge_json.go) is byte for byte what encoding/json writes for them. The charge inside
// is written by payments.Charge.AppendJSON, whose own test compares every field of Charge
// with encoding/json; this one covers the envelopes: the create, get and list replies,
// with a charge, the zero charge, no list, an empty list, and strings that need escaping.
func TestChargeJSON_SameAsEncodingJSON(t *testing.T) {
	t.Parallel()
	same := func(t *testing.T, reply jsonAppender) {
		t.Helper()
		is := is.NewRelaxed(t)
		want, err := json.Marshal(reply)
		is.NoErr(err)
		want = wiretime.Fix(want)                             // as encode writes encoding/json's bytes
		is.Equal(string(reply.appendJSON(nil)), string(want)) // the same bytes as encoding/json, times fixed
	}
	at := time.Date(2026, 11, 22, 9, 30, 0, 1000, time.FixedZone("BRT", -3*60*60))
	c := payments.Charge{
		Status: payments.ChargeActive, Value: 1990, Comment: `<b>"Pedido" & \ 1</b>` + "\u2028", CorrelationID: "pedido-1",
		BRCode: "000201010212...6304ABCD", Customer: &payments.Customer{Name: "Ana", Email: "ana@example.com"},
		AdditionalInfo: []payments.AdditionalInfo{{Key: "k", Value: "v\n"}}, CreatedAt: at, UpdatedAt: at,
	}
	page := payments.PageInfo{Skip: 20, Limit: 10, TotalCount: 31, HasPreviousPage: true}
	same(t, chargeReply{Charge: c})
	same(t, chargeCreatedReply{BRCode: c.BRCode, Charge: c, CorrelationID: c.CorrelationID})
	same(t, chargeCreatedReply{BRCode: "\x00<>&\xff", CorrelationID: "emoji 😀"})
	same(t, chargeListReply{Charges: []payments.Charge{c, {}}, PageInfo: page})
	same(t, chargeReply{})
	same(t, chargeCreatedReply{})
	same(t, chargeListReply{})
	same(t, chargeListReply{Charges: []payments.Charge{}, PageInfo: page})
}

package httpadapter

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestChargeJSON_SameAsEncodingJSON checks that the charge replies' own JSON
// (charge_json.go) is byte for byte what encoding/json writes for them: for a charge with
// every field set (a field added to payments.Charge and not to appendCharge fails here),
// the zero charge, and charges with fields set or left zero at random, with strings that
// need escaping and times in other zones.
func TestChargeJSON_SameAsEncodingJSON(t *testing.T) {
	same := func(t *testing.T, reply jsonAppender) {
		t.Helper()
		is := is.NewRelaxed(t)
		want, err := json.Marshal(reply)
		is.NoErr(err)
		is.Equal(string(reply.appendJSON(nil)), string(want)) // the same bytes as encoding/json
	}
	page := payments.PageInfo{Skip: 20, Limit: 10, TotalCount: 31, HasPreviousPage: true}

	t.Run("EveryField", func(t *testing.T) {
		var c payments.Charge
		fill(reflect.ValueOf(&c).Elem(), rand.New(rand.NewPCG(1, 1)), 0)
		is := is.New(t)
		b, err := json.Marshal(c)
		is.NoErr(err)
		for _, key := range []string{"customer", "dueDate", "interests", "fines", "discountSettings", "splits", "paidAt", "subscription", "endToEndId"} {
			is.True(json.Valid(b) && jsonHas(t, b, key)) // the filler set the optional fields too
		}
		same(t, chargeReply{Charge: c})
		same(t, chargeCreatedReply{BRCode: c.BRCode, Charge: c, CorrelationID: c.CorrelationID})
		same(t, chargeListReply{Charges: []payments.Charge{c, c}, PageInfo: page})
	})
	t.Run("Zero", func(t *testing.T) {
		same(t, chargeReply{})
		same(t, chargeCreatedReply{})
		same(t, chargeListReply{})
		same(t, chargeListReply{Charges: []payments.Charge{}, PageInfo: page})
	})
	t.Run("EmptyNotNil", func(t *testing.T) {
		c := payments.Charge{
			AdditionalInfo: []payments.AdditionalInfo{}, Splits: []payments.Split{},
			Customer:         &payments.Customer{Address: &payments.Address{}},
			DiscountSettings: &payments.DiscountSettings{DiscountFixedDate: []payments.DiscountTier{}},
		}
		c.PaymentMethods.Pix.AdditionalInfo = []payments.AdditionalInfo{}
		same(t, chargeReply{Charge: c})
	})
	t.Run("Random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(2, 2))
		for range 500 {
			var c payments.Charge
			fill(reflect.ValueOf(&c).Elem(), r, 0.4)
			same(t, chargeReply{Charge: c})
		}
	})
}

// jsonHas reports whether the JSON object b has the key.
func jsonHas(t *testing.T, b []byte, key string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	_, ok := m[key]
	return ok
}

// Values the filler picks from: strings that need escaping of every kind, and times in
// several zones and precisions.
var (
	fillStrings = []string{"ACTIVE", "Pedido 123", `quote " and \ back`, "<b>&amp;</b>", "tab\tline\nnul\x00\x1f",
		"pão de açúcar", "bad \xff utf-8", "line\u2028sep\u2029", "emoji 😀", ""}
	fillTimes = []time.Time{
		time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC),
		time.Date(2026, 11, 22, 9, 30, 0, 1000, time.FixedZone("BRT", -3*60*60)),
		{},
	}
)

// fill sets every field of v (recursively) to a value from r, leaving each at its zero
// value with probability zero.
func fill(v reflect.Value, r *rand.Rand, zero float64) {
	if zero > 0 && r.Float64() < zero {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillStrings[r.IntN(len(fillStrings)-1)]) // not "": set means non-empty
	case reflect.Int, reflect.Int64:
		v.SetInt(r.Int64N(2_000_000_000_000) - 1_000_000_000_000 | 1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), r, zero)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1+r.IntN(2), 2)
		for i := range s.Len() {
			fill(s.Index(i), r, zero)
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(fillTimes[r.IntN(len(fillTimes)-1)]))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), r, zero)
			}
		}
	default:
		panic("fill: no filler for " + v.Type().String())
	}
}

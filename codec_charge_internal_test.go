package payments

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/internal/wiretime"
	"github.com/pixfoundry/payments/store"
)

// TestChargeJSON_SameAsEncodingJSON checks that codec_charge.go writes, byte for byte,
// what encoding/json writes for a charge and a charge event, its times as wiretime.Fix
// makes them (three fraction digits at millisecond precision): with every field set (a field
// added to Charge and not to appendCharge fails here), zero, empty but not nil, and fields
// set or left zero at random, with strings that need escaping and times in other zones.
func TestChargeJSON_SameAsEncodingJSON(t *testing.T) {
	t.Parallel()
	same := func(t *testing.T, v jsonAppender) {
		t.Helper()
		is := is.NewRelaxed(t)
		want, err := json.Marshal(v)
		is.NoErr(err)
		want = wiretime.Fix(want)
		is.Equal(string(v.appendJSON(nil)), string(want)) // the same bytes as encoding/json, times fixed
		got, err := marshal(v)
		is.NoErr(err)
		is.Equal(string(got), string(want)) // marshal takes appendJSON
	}
	t.Run("EveryField", func(t *testing.T) {
		var ev chargeEvent
		fill(reflect.ValueOf(&ev).Elem(), rand.New(rand.NewPCG(1, 1)), 0)
		is := is.New(t)
		b, err := json.Marshal(ev.Charge)
		is.NoErr(err)
		var m map[string]json.RawMessage
		is.NoErr(json.Unmarshal(b, &m))
		for _, key := range []string{"customer", "dueDate", "interests", "fines", "discountSettings", "splits", "paidAt", "subscription", "endToEndId"} {
			_, ok := m[key]
			is.True(ok) // the filler set the optional fields too
		}
		same(t, ev.Charge)
		same(t, &ev)
	})
	t.Run("Zero", func(t *testing.T) {
		same(t, Charge{})
		same(t, &chargeEvent{})
		same(t, &chargeEvent{Company: &eventCompany{}, Account: &Account{}})
	})
	t.Run("EmptyNotNil", func(t *testing.T) {
		c := Charge{
			AdditionalInfo: []AdditionalInfo{}, Splits: []Split{},
			Customer:         &Customer{Address: &Address{}},
			DiscountSettings: &DiscountSettings{DiscountFixedDate: []DiscountTier{}},
		}
		c.PaymentMethods.Pix.AdditionalInfo = []AdditionalInfo{}
		same(t, c)
	})
	t.Run("Random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(2, 2))
		for range 500 {
			var ev chargeEvent
			fill(reflect.ValueOf(&ev).Elem(), r, 0.4)
			same(t, ev.Charge)
			same(t, &ev)
		}
	})
}

// TestChargeRecord_LeavesOutDerived: a charge's record (appendChargeRecord) is the charge's
// JSON without paymentLinkUrl, qrCodeImage and paymentMethods, and decodes to the charge
// with those three at their zero values, for charges with every field set and with fields
// left zero at random.
func TestChargeRecord_LeavesOutDerived(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 300 {
		var c Charge
		fill(reflect.ValueOf(&c).Elem(), r, min(float64(i)/300, 0.4)) // the first with every field set
		is := is.NewRelaxed(t)
		var full, rec map[string]json.RawMessage
		is.NoErr(json.Unmarshal(appendCharge(nil, &c), &full))
		stored, err := marshal(chargeRecord{&c}) // as insertCharge and saveCharge store it
		is.NoErr(err)
		is.NoErr(json.Unmarshal(stored, &rec))
		for _, key := range []string{"paymentLinkUrl", "qrCodeImage", "paymentMethods"} {
			_, ok := full[key]
			is.True(ok) // the charge's JSON has it
			delete(full, key)
		}
		is.Equal(rec, full) // the record: every other field, as the charge's JSON has it

		var got, want Charge // want: the charge's JSON decoded (invalid UTF-8 becomes U+FFFD in both)
		is.NoErr(decode(store.Record{ID: "x", Data: stored}, &got))
		is.NoErr(decode(store.Record{ID: "x", Data: appendCharge(nil, &c)}, &want))
		want.PaymentLinkURL, want.QRCodeImage, want.PaymentMethods = "", "", PaymentMethods{}
		is.Equal(string(appendCharge(nil, &got)), string(appendCharge(nil, &want))) // decodes to the charge less the three
	}
}

// Values the filler picks from: strings that need escaping of every kind, and times in
// several zones and precisions.
var (
	fillStrings = []string{"ACTIVE", "Pedido 123", `quote " and \ back`, "<b>&amp;</b>", "tab\tline\nnul\x00\x1f",
		"pão de açúcar", "bad \xff utf-8", "line\u2028sep\u2029", "emoji 😀", ""}
	fillTimes = []time.Time{
		time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC),
		time.Date(2026, 11, 22, 12, 0, 0, 310_000_000, time.UTC),
		time.Date(2026, 11, 22, 9, 30, 0, 1000, time.FixedZone("BRT", -3*60*60)),
		{},
	}
)

// fill sets every exported field of v (recursively) to a value from r, leaving each at
// its zero value with probability zero.
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

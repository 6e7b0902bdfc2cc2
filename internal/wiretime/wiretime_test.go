package wiretime_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/internal/wiretime"
)

func TestAppend(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 27, 14, 50, 34, 310_000_000, time.UTC)
	is.Equal(string(wiretime.Append(nil, at)), `"2026-11-27T14:50:34.310Z"`)
	is.Equal(string(wiretime.Append(nil, at.Truncate(time.Second))), `"2026-11-27T14:50:34.000Z"`)
	is.Equal(string(wiretime.Append(nil, at.In(time.FixedZone("", -3*3600)))), `"2026-11-27T11:50:34.310-03:00"`)
	// Finer than a millisecond: every digit, so a stored record keeps it.
	is.Equal(string(wiretime.Append(nil, at.Add(123))), `"2026-11-27T14:50:34.310000123Z"`)
}

// TestAppend_AsAppendFormat: Append writes at millisecond precision exactly what
// AppendFormat(Layout) writes, for random times over years -50 to 10050 (those outside 0 to
// 9999 go to AppendFormat itself) in UTC, the local zone and offsets of any size under a
// day, seconds included.
func TestAppend_AsAppendFormat(t *testing.T) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(31, 2026))
	lo := time.Date(-50, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10050, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("BRT", -3*3600), time.FixedZone("", 5*3600+45*60)}
	for i := range 200_000 {
		at := time.Unix(lo+rng.Int64N(hi-lo), int64(rng.IntN(1000))*int64(time.Millisecond))
		zone := zones[i%len(zones)]
		if i%5 == 4 { // any offset under a day, in seconds
			zone = time.FixedZone("", rng.IntN(2*86400-1)-86399)
		}
		at = at.In(zone)
		want := `"` + at.Format(wiretime.Layout) + `"`
		if got := string(wiretime.Append(nil, at)); got != want {
			is.Equal(got, want) // the first one that differs
		}
	}
}

func TestFix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"createdAt":"2026-11-27T14:50:34.31Z"}`, `{"createdAt":"2026-11-27T14:50:34.310Z"}`},
		{`{"createdAt":"2026-11-27T14:50:34Z","x":1}`, `{"createdAt":"2026-11-27T14:50:34.000Z","x":1}`},
		{`{"paidAt":"2026-11-27T14:50:34.3109Z"}`, `{"paidAt":"2026-11-27T14:50:34.3109Z"}`}, // finer: kept
		{`{"time":"2026-11-27T14:50:34.3-03:00"}`, `{"time":"2026-11-27T14:50:34.300-03:00"}`},
		{`{"a":[{"updatedAt":"2026-11-27T14:50:34Z"},{"updatedAt":"2026-11-27T14:50:35.5Z"}]}`,
			`{"a":[{"updatedAt":"2026-11-27T14:50:34.000Z"},{"updatedAt":"2026-11-27T14:50:35.500Z"}]}`},
		// Already right, not a time, or not under a time key: unchanged.
		{`{"createdAt":"2026-11-27T14:50:34.310Z"}`, `{"createdAt":"2026-11-27T14:50:34.310Z"}`},
		{`{"createdAt":"yesterday"}`, `{"createdAt":"yesterday"}`},
		{`{"comment":"2026-11-27T14:50:34Z"}`, `{"comment":"2026-11-27T14:50:34Z"}`},
		{`{"value":"2026-11-27T14:50:34Z","key":"createdAt"}`, `{"value":"2026-11-27T14:50:34Z","key":"createdAt"}`},
		{`{"comment":"say \"createdAt\":","at":"x\\"}`, `{"comment":"say \"createdAt\":","at":"x\\"}`},
		{`{"comment":"\"","createdAt":"2026-11-27T14:50:34Z"}`, `{"comment":"\"","createdAt":"2026-11-27T14:50:34.000Z"}`},
		{`{"createdAt":"2026-11-27T14:50:34Z`, `{"createdAt":"2026-11-27T14:50:34Z`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			is := is.New(t)
			is.Equal(string(wiretime.Fix([]byte(tc.in))), tc.want)
		})
	}
}

// FuzzFix: Fix keeps valid JSON valid and changes nothing but the times under Keys: the
// document decodes to the same values once those are read as times.
func FuzzFix(f *testing.F) {
	f.Add(`{"createdAt":"2026-11-27T14:50:34.31Z","comment":"2026-11-27T14:50:34Z"}`)
	f.Add(`{"a":[{"time":"2026-01-01T00:00:00Z"}],"b":"\"\\"}`)
	f.Fuzz(func(t *testing.T, s string) {
		var before any
		if json.Unmarshal([]byte(s), &before) != nil {
			return
		}
		compact, err := json.Marshal(before) // the compact form encoding/json writes
		if err != nil {
			return
		}
		fixed := wiretime.Fix(compact)
		var after any
		if err := json.Unmarshal(fixed, &after); err != nil {
			t.Fatalf("Fix(%s) = %s: not JSON: %v", compact, fixed, err)
		}
		if !sameBut(before, after, "") {
			t.Fatalf("Fix(%s) = %s: changed more than times", compact, fixed)
		}
	})
}

// sameBut reports whether a and b are equal, a string under a time key compared as the
// instant it names when it is one.
func sameBut(a, b any, key string) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if !sameBut(v, bm[k], k) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !sameBut(a[i], bs[i], key) {
				return false
			}
		}
		return true
	case string:
		bs, ok := b.(string)
		if !ok {
			return false
		}
		if a == bs {
			return true
		}
		ta, errA := time.Parse(time.RFC3339Nano, a)
		tb, errB := time.Parse(time.RFC3339Nano, bs)
		return wiretime.Keys[key] && errA == nil && errB == nil && ta.Equal(tb)
	default:
		return a == b
	}
}

// BenchmarkFix: the pass over a reply or payload of the size of a charge event's (about
// 2 KB, a dozen times), with nothing to rewrite (a charge, written right already) and with
// every time to rewrite (encoding/json's bytes).
func BenchmarkFix(b *testing.B) {
	var right, wrong strings.Builder
	right.WriteString(`{"charge":{`)
	wrong.WriteString(`{"charge":{`)
	for i := range 12 {
		fmt.Fprintf(&right, `"comment%d":"Pedido \"%d\" de teste, com texto","createdAt":"2026-11-27T14:50:34.310Z",`, i, i)
		fmt.Fprintf(&wrong, `"comment%d":"Pedido \"%d\" de teste, com texto","createdAt":"2026-11-27T14:50:34.31Z",`, i, i)
	}
	right.WriteString(`"value":100}}`)
	wrong.WriteString(`"value":100}}`)
	for _, tc := range []struct {
		name string
		b    []byte
	}{{"NothingToFix", []byte(right.String())}, {"EveryTime", []byte(wrong.String())}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.b)))
			b.ReportAllocs()
			for b.Loop() {
				wiretime.Fix(tc.b)
			}
		})
	}
}

// BenchmarkAppend: one time as a reply writes it, and as the store's sort keys write it
// (nine fraction digits), each against AppendFormat with the same layout.
func BenchmarkAppend(b *testing.B) {
	at := time.Date(2026, 11, 27, 14, 50, 34, 310_000_000, time.UTC)
	buf := make([]byte, 0, 64)
	b.Run("Append", func(b *testing.B) {
		for b.Loop() {
			buf = wiretime.Append(buf[:0], at)
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		for b.Loop() {
			buf = append(at.AppendFormat(append(buf[:0], '"'), wiretime.Layout), '"')
		}
	})
	b.Run("AppendFixed9", func(b *testing.B) {
		for b.Loop() {
			buf, _ = wiretime.AppendFixed(buf[:0], at, 9)
			buf = append(buf, 'Z')
		}
	})
	b.Run("AppendFormat9", func(b *testing.B) {
		for b.Loop() {
			buf = at.AppendFormat(buf[:0], "2006-01-02T15:04:05.000000000Z")
		}
	})
}

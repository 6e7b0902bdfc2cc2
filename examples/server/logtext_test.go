package main

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// textLines writes what slog.TextHandler writes, for the request log's records and for
// random ones: strings with every kind of character the TextHandler quotes, each kind
// of value, times in other zones, the zero time; and hands it what it does not write
// itself (groups, values of other kinds, empty keys, WithAttrs, WithGroup).
func TestTextLines_AsTextHandler(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	words := []string{"", "a", "GET /api/v1/charge/{id}", "x=y", `say "hi"`, `back\slash`, "tab\there", "nl\n", "é", "ação",
		"\u00a0nbsp", "\u200bzw", "del\x7f", "bad\xffutf8", "µs", "{id}", "-", "emoji 😀", "\x00", "ok_1.2:3"}
	zone := time.FixedZone("BRT", -3*60*60)
	values := []func(r *rand.Rand) slog.Value{
		func(r *rand.Rand) slog.Value {
			return slog.StringValue(words[r.IntN(len(words))] + words[r.IntN(len(words))])
		},
		func(r *rand.Rand) slog.Value { return slog.IntValue(r.IntN(2000) - 1000) },
		func(r *rand.Rand) slog.Value { return slog.Uint64Value(r.Uint64()) },
		func(r *rand.Rand) slog.Value { return slog.Float64Value(r.NormFloat64() * 1e6) },
		func(r *rand.Rand) slog.Value { return slog.BoolValue(r.IntN(2) == 0) },
		func(r *rand.Rand) slog.Value {
			return slog.DurationValue(time.Duration(r.Int64N(int64(3 * time.Second))))
		},
		func(r *rand.Rand) slog.Value {
			return slog.TimeValue(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zone))
		},
		func(r *rand.Rand) slog.Value { return slog.AnyValue([]string{"not", "plain"}) },
		func(r *rand.Rand) slog.Value { return slog.GroupValue(slog.Int("n", r.IntN(10))) },
	}
	rng := rand.New(rand.NewPCG(1, 2))
	same := func(build func(h slog.Handler) error) {
		t.Helper()
		var want, got bytes.Buffer
		is.NoErr(build(slog.NewTextHandler(&want, nil)))
		is.NoErr(build(newTextLines(&got)))
		is.Equal(got.String(), want.String())
	}
	for range 2000 {
		when := time.Unix(rng.Int64N(4e9), rng.Int64N(1e9))
		switch rng.IntN(4) {
		case 0:
			when = time.Time{}
		case 1:
			when = when.In(zone)
		}
		rec := slog.NewRecord(when, slog.Level(rng.IntN(12)-4), words[rng.IntN(len(words))], 0)
		for range rng.IntN(7) {
			key := words[rng.IntN(len(words))]
			if key == "" && rng.IntN(3) > 0 {
				key = "k"
			}
			rec.AddAttrs(slog.Attr{Key: key, Value: values[rng.IntN(len(values))](rng)})
		}
		same(func(h slog.Handler) error { return h.Handle(context.Background(), rec) })
	}
	// The request log's own line.
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", "0a1b2c3d4e5f-1z"), slog.String("method", "GET"), slog.String("route", "GET /health"),
		slog.Int("status", 200), slog.Duration("duration", 1234567*time.Nanosecond))
	same(func(h slog.Handler) error { return h.Handle(context.Background(), rec) })
	same(func(h slog.Handler) error {
		return h.WithAttrs([]slog.Attr{slog.String("a", "b c")}).WithGroup("g").Handle(context.Background(), rec)
	})
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		is.Equal(newTextLines(nil).Enabled(context.Background(), l), slog.NewTextHandler(nil, nil).Enabled(context.Background(), l))
	}
	var out bytes.Buffer
	slog.New(newTextLines(&out)).Info("x", "a", 1)
	is.True(strings.HasSuffix(out.String(), " level=INFO msg=x a=1\n"))
}

// BenchmarkTextLines is the request log's line through textLines and through
// slog.TextHandler.
func BenchmarkTextLines(b *testing.B) {
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", "0a1b2c3d4e5f-1z"), slog.String("method", "GET"), slog.String("route", "GET /api/v1/charge/{id}"),
		slog.Int("status", 200), slog.Duration("duration", 1234567*time.Nanosecond))
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{{"textLines", newTextLines(discard{})}, {"TextHandler", slog.NewTextHandler(discard{}, nil)}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := h.h.Handle(context.Background(), rec); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

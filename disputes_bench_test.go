package payments_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// BenchmarkListDisputes reads one page of 100 disputes of 2,000 on bolt: the newest page
// (GET /dispute), a page deep in the list, and the page of one day's window (start and end),
// which a page's cost must not grow with the disputes outside it.
func BenchmarkListDisputes(b *testing.B) {
	var e env
	for _, st := range stores {
		if st.name == "bolt" {
			e = newEnv(b, st.open(b))
		}
	}
	const n = 2000
	for i := range n {
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "bench"}); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 {
			e.clock.Advance(24 * time.Hour) // 100 disputes a day
		}
	}
	day := t0.Add(10 * 24 * time.Hour)
	for _, bc := range []struct {
		name string
		f    payments.DisputeFilter
	}{
		{"Newest", payments.DisputeFilter{ListParams: payments.ListParams{Limit: 100}}},
		{"Deep", payments.DisputeFilter{ListParams: payments.ListParams{Skip: n - 200, Limit: 100}}},
		{"Day", payments.DisputeFilter{Start: day, End: day.Add(24*time.Hour - time.Millisecond), ListParams: payments.ListParams{Limit: 100}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ds, _, err := e.svc.ListDisputes(ctx, bc.f)
				if err != nil || len(ds) != 100 {
					b.Fatal(err, len(ds))
				}
			}
		})
	}
}

// TestListDisputes_Day: the benchmark's day window holds that day's disputes only.
func TestListDisputes_Day(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	for range 3 {
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000})
		is.NoErr(err)
		_, err = e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.NoErr(err)
		e.clock.Advance(24 * time.Hour)
	}
	day := t0.Add(24 * time.Hour)
	ds, page, err := e.svc.ListDisputes(ctx, payments.DisputeFilter{Start: day, End: day.Add(24*time.Hour - time.Millisecond)})
	is.NoErr(err)
	is.Equal(len(ds), 1) // the second day's
	is.Equal(page.TotalCount, 1)
	is.Equal(ds[0].CreatedAt, day)
}

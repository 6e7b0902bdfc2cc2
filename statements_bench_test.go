package payments_test

import (
	"testing"

	"github.com/pixfoundry/payments"
)

// BenchmarkStatement reads one page of 100 lines of a subaccount statement of 10,000
// movements on bolt: the newest page (what statements are read for), a page in the
// middle, and the oldest page, whose running balances are derived from the 9,900
// movements after it.
func BenchmarkStatement(b *testing.B) {
	var bolt func(testing.TB) env
	for _, st := range stores {
		if st.name == "bolt" {
			bolt = func(tb testing.TB) env { return newEnv(tb, st.open(tb)) }
		}
	}
	e := bolt(b)
	const key, n = "a@example.com", 10_000
	if _, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: key, Name: key}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := e.svc.FundSubaccountForTest(ctx, key, int64(1+i%7)); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		skip int
	}{{"Newest", 0}, {"Middle", n/2 - 50}, {"Oldest", n - 100}} {
		b.Run(bc.name, func(b *testing.B) {
			f := payments.StatementFilter{ListParams: payments.ListParams{Skip: bc.skip, Limit: 100}}
			b.ReportAllocs()
			for b.Loop() {
				lines, _, err := e.svc.SubaccountStatement(ctx, key, f)
				if err != nil || len(lines) != 100 {
					b.Fatal(err, len(lines))
				}
			}
		})
	}
}

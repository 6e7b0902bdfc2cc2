package payments_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/pixfoundry/payments"
)

// BenchmarkPost measures one ledger posting through its public path: a transfer between two
// subaccounts (a correlationID lookup, two subaccount reads, two book writes, a journal entry
// with its indexes, a transfer record), one store transaction each.
func BenchmarkPost(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		fundPair(b, e.svc, "a@example.com", "b@example.com")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			from, to := "a@example.com", "b@example.com"
			if i%2 == 1 {
				from, to = to, from
			}
			if _, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{
				Value: 1, FromPixKey: from, ToPixKey: to, CorrelationID: fmt.Sprintf("t%d", i),
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPostParallel is BenchmarkPost from GOMAXPROCS goroutines at once, each between its
// own pair of subaccounts, so that only the store serializes them.
func BenchmarkPostParallel(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			g := n.Add(1)
			from, to := fmt.Sprintf("a%d@example.com", g), fmt.Sprintf("b%d@example.com", g)
			fundPair(b, e.svc, from, to)
			for i := 0; pb.Next(); i++ {
				if _, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{
					Value: 1, FromPixKey: from, ToPixKey: to, CorrelationID: fmt.Sprintf("g%d-%d", g, i),
				}); err != nil {
					b.Fatal(err)
				}
				from, to = to, from
			}
		})
	})
}

// BenchmarkAudit measures the audit of a journal of 10,000 entries.
func BenchmarkAudit(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		fundPair(b, e.svc, "a@example.com", "b@example.com")
		for i := range 10_000 - 1 {
			if err := e.svc.FundSubaccountForTest(ctx, "b@example.com", int64(1+i%7)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			rep, err := e.svc.Audit(ctx)
			if err != nil || !rep.OK() || rep.Entries != 10_000 {
				b.Fatal(err, rep)
			}
		}
	})
}

func fundPair(b *testing.B, svc *payments.Service, from, to string) {
	b.Helper()
	for _, k := range []string{from, to} {
		if _, _, err := svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: k, Name: k}); err != nil {
			b.Fatal(err)
		}
	}
	if err := svc.FundSubaccountForTest(ctx, from, 1_000_000); err != nil {
		b.Fatal(err)
	}
}

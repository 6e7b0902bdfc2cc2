package payments_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/pixfoundry/payments"
)

// eachStoreB runs a benchmark once per store driver, each on a fresh Service.
func eachStoreB(b *testing.B, fn func(b *testing.B, e env)) {
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) { fn(b, newEnv(b, st.open(b))) })
	}
}

func BenchmarkCreateCustomer(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{
				Name: "Bench", Email: "bench@example.com", CorrelationID: fmt.Sprintf("c%d", i),
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetCustomer(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		const n = 1000
		for i := range n {
			if _, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{
				Name: "Bench", Email: "bench@example.com", CorrelationID: fmt.Sprintf("c%d", i),
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.svc.GetCustomer(ctx, fmt.Sprintf("c%d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkCreateCharge(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{
				CorrelationID: fmt.Sprintf("order-%d", i), Value: 1990, Comment: "Pedido",
				Customer: &payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725"},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetCharge(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		const n = 1000
		for i := range n {
			if _, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("order-%d", i), Value: 1990}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.svc.GetCharge(ctx, fmt.Sprintf("order-%d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreateChargeParallel creates charges from 32 goroutines at once: on bolt,
// group commit carries many of them in one commit.
func BenchmarkCreateChargeParallel(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		var n atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(16) // 16 x GOMAXPROCS goroutines
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("order-%d", n.Add(1)), Value: 1990})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkReceivePix pays a static QR code: one transaction, one ledger entry, one event.
func BenchmarkReceivePix(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: fmt.Sprintf("E99999999202611221200%011d", i), Value: 1000, TxID: q.Identifier})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRefund refunds 1 centavo of a received Pix: the hold, the rail (sandbox, settling
// at once) and the settlement, two store transactions in all.
func BenchmarkRefund(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200BENCHMARK1", Value: 900_000_000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: fmt.Sprintf("r%d", i), Value: 1})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

package payments_test

import (
	"fmt"
	"testing"

	"github.com/pixfoundry/payments"
)

// BenchmarkApprovePayment approves a requested payment: one transaction that checks the
// balance, holds the value and records the order, then the sandbox Rail's answer and the
// transaction that settles it (three store transactions in all). Requesting the payment
// is outside the timer.
func BenchmarkApprovePayment(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		a, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.svc.FundAccountForTest(ctx, a.AccountID, payments.MaxChargeValue); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			corr := fmt.Sprint("p", i)
			if _, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: corr, Value: 100, DestinationAlias: "ana@example.com"}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := e.svc.ApprovePayment(ctx, corr); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWithdrawFromSubaccount withdraws from a subaccount through the order machine.
func BenchmarkWithdrawFromSubaccount(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		if _, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "a@example.com", Name: "a"}); err != nil {
			b.Fatal(err)
		}
		if err := e.svc.FundSubaccountForTest(ctx, "a@example.com", payments.MaxChargeValue); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.svc.WithdrawFromSubaccount(ctx, "a@example.com", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

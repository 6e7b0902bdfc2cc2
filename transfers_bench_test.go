package payments_test

import (
	"fmt"
	"testing"

	"github.com/pixfoundry/payments"
)

// BenchmarkTransferBetweenSubaccounts moves 1 centavo between two subaccounts, each with
// its own correlationID: one transaction, one ledger entry, one transfer record.
func BenchmarkTransferBetweenSubaccounts(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		if _, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "a@example.com", Name: "A"}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "b@example.com", Name: "B"}); err != nil {
			b.Fatal(err)
		}
		if err := e.svc.FundSubaccountForTest(ctx, "a@example.com", 900_000_000); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 1,
				FromPixKey: "a@example.com", FromPixKeyType: "EMAIL", ToPixKey: "b@example.com", ToPixKeyType: "EMAIL",
				CorrelationID: fmt.Sprintf("t%d", i)})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTransferBetweenAccounts moves 1 centavo from the default account to another
// account of the company, each with its own correlationID.
func BenchmarkTransferBetweenAccounts(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		def, err := e.svc.DefaultAccount(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.svc.FundAccountForTest(ctx, def.AccountID, 900_000_000); err != nil {
			b.Fatal(err)
		}
		if _, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@loja.example.com"}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 1,
				FromPixKey: companyKey, ToPixKey: "caixa@loja.example.com", CorrelationID: fmt.Sprintf("t%d", i)})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

package payments_test

import (
	"context"
	"fmt"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// Money that moves inside the company: a second account with its own Pix key, a transfer
// to it by key (a retry with the same correlationID moves nothing), and a subaccount
// credited from the default account and debited back.
func ExampleService_TransferBetweenAccounts() {
	ctx := context.Background()
	svc, err := payments.New(memory.New(), payments.Options{
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"},
	})
	if err != nil {
		panic(err)
	}
	// R$ 100,00 arrives in the default account, less the 0.8% fee.
	if _, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E18236120202611221200EXAMPLE001", Value: 10000}); err != nil {
		panic(err)
	}
	caixa, err := svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@loja.example.com", Name: "Caixa"})
	if err != nil {
		panic(err)
	}
	p := payments.CreateTransferParams{Value: 2500, FromPixKey: "pix@loja.example.com", ToPixKey: "caixa@loja.example.com", CorrelationID: "fechamento-1"}
	for range 2 { // the retry returns the first transfer
		tr, err := svc.TransferBetweenAccounts(ctx, p)
		if err != nil {
			panic(err)
		}
		fmt.Println("transfer", tr.CorrelationID, tr.Value)
	}

	if _, _, err := svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "vendedor@example.com", Name: "Vendedor"}); err != nil {
		panic(err)
	}
	if _, err := svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "vendedor@example.com", Value: 1000}); err != nil {
		panic(err)
	}
	m, err := svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "vendedor@example.com", Value: 400, Description: "ajuste"})
	if err != nil {
		panic(err)
	}
	fmt.Println("subaccount", m.Subaccount.PixKey, m.Subaccount.Balance)

	def, err := svc.DefaultAccount(ctx)
	if err != nil {
		panic(err)
	}
	caixa, err = svc.GetAccount(ctx, caixa.AccountID)
	if err != nil {
		panic(err)
	}
	fmt.Println("account", def.PixKey, def.Balance.Available)
	fmt.Println("account", caixa.PixKey, caixa.Balance.Available)

	_, err = svc.TransferBetweenAccounts(ctx, payments.CreateTransferParams{Value: 2501, FromPixKey: "caixa@loja.example.com", ToPixKey: "pix@loja.example.com"})
	fmt.Println(payments.ErrorCode(err), payments.ErrorField(err), payments.ErrorMessage(err))
	// Output:
	// transfer fechamento-1 2500
	// transfer fechamento-1 2500
	// subaccount vendedor@example.com 600
	// account pix@loja.example.com 6820
	// account caixa@loja.example.com 2500
	// failed_precondition value Account does not have enough balance to complete the operation
}

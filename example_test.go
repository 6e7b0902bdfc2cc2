package payments_test

import (
	"context"
	"fmt"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

func Example() {
	ctx := context.Background()
	svc, err := payments.New(memory.New(), payments.Options{})
	if err != nil {
		panic(err)
	}
	c, err := svc.CreateCustomer(ctx, payments.CreateCustomerParams{
		Name: "Ana Souza", TaxID: "529.982.247-25", Email: "ana@example.com", CorrelationID: "customer-ana",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Name, c.TaxID.Type, c.TaxID.TaxID)

	_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Bad", TaxID: "111.111.111-11"})
	fmt.Println(payments.ErrorCode(err), payments.ErrorField(err))
	// Output:
	// Ana Souza BR:CPF 52998224725
	// invalid taxID
}

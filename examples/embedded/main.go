// Command embedded shows the library in process: it opens a bbolt file, creates two
// customers (once: a second run finds them) and lists them.
//
//	go run ./examples/embedded -db /tmp/payments-example.db
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/pixfoundry/payments"
)

func main() {
	db := flag.String("db", filepath.Join(os.TempDir(), "payments-example.db"), "bbolt database file")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *db); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, path string) error {
	svc, err := payments.Open(path, payments.Options{})
	if err != nil {
		return err
	}
	defer svc.Close()

	for _, p := range []payments.CreateCustomerParams{
		{Name: "Ana Souza", TaxID: "529.982.247-25", Email: "ana@example.com", CorrelationID: "customer-ana"},
		{Name: "ACME Ltda", TaxID: "12.ABC.345/01DE-35", Phone: "+5511999990000", CorrelationID: "customer-acme"},
	} {
		_, err := svc.CreateCustomer(ctx, p)
		switch payments.ErrorCode(err) {
		case "":
			fmt.Fprintf(w, "created %s\n", p.CorrelationID)
		case payments.ECONFLICT:
			fmt.Fprintf(w, "exists  %s\n", p.CorrelationID)
		default:
			return err
		}
	}

	customers, page, err := svc.ListCustomers(ctx, payments.ListParams{Limit: 10})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d customers in %s\n", page.TotalCount, path)
	for _, c := range customers {
		fmt.Fprintf(w, "- %s  %s  %s %s\n", c.CorrelationID, c.Name, c.TaxID.Type, c.TaxID.TaxID)
	}
	return nil
}

// Command embedded shows the library in process, on a bbolt file: it creates a charge,
// writes its QR image, receives the Pix that pays it (as a bank connector would report it),
// refunds part of it and audits the ledger. Every step is idempotent (correlationIDs and the
// Pix's endToEndId), so a second run on the same file finds what the first did and moves no
// money again.
//
//	go run ./examples/embedded -db /tmp/payments-example.db -qr /tmp/order-1.png
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
	qr := flag.String("qr", filepath.Join(os.TempDir(), "order-1.png"), "where to write the charge's QR image")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *db, *qr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, dbPath, qrPath string) error {
	svc, err := payments.Open(dbPath, payments.Options{
		DefaultCompany: payments.CompanyParams{
			Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo",
		},
	})
	if err != nil {
		return err
	}
	defer svc.Close()

	// 1. A charge. ReturnExisting makes a second run get the same charge back.
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{
		CorrelationID: "order-1", Value: 1990, Comment: "Pedido 1", ReturnExisting: true,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "charge %s: R$ %d,%02d\n", c.CorrelationID, c.Value/100, c.Value%100)
	fmt.Fprintf(w, "BR Code: %s\n", c.BRCode)

	// 2. Its QR image, as a PNG the payer scans.
	png, err := svc.QRCodeImage(ctx, c.PaymentLinkID, 600)
	if err != nil {
		return err
	}
	if err := os.WriteFile(qrPath, png, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "QR image: %s\n", qrPath)

	// 3. The Pix that pays it, as the bank reports it: the endToEndId makes it one Pix
	// however often it is reported, and the txid in the code ties it to the charge.
	if _, err := svc.ReceivePix(ctx, payments.ReceivePixParams{
		EndToEndID: "E18236120202611221201s0000000001", Value: c.Value, TxID: c.Identifier,
		Payer: &payments.Payer{Name: "Ana Souza", TaxID: "529.982.247-25"},
	}); err != nil {
		return err
	}
	if c, err = svc.GetCharge(ctx, "order-1"); err != nil {
		return err
	}
	fmt.Fprintf(w, "charge %s: %s, fee %d centavos\n", c.CorrelationID, c.Status, c.Fee)

	// 4. A partial refund, idempotent by its correlationID.
	if _, err := svc.CreateChargeRefund(ctx, "order-1", payments.ChargeRefundParams{
		CorrelationID: "refund-1", Value: 500, Comment: "troca",
	}); err != nil {
		return err
	}
	r, err := svc.GetRefund(ctx, "refund-1")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "refund %s: %s, %d centavos\n", r.CorrelationID, r.Status, r.Value)

	// 5. The balance, and the audit that re-derives it from the journal.
	a, err := svc.DefaultAccount(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "balance: total %d, available %d\n", a.Balance.Total, a.Balance.Available)
	report, err := svc.Audit(ctx)
	if err != nil {
		return err
	}
	if !report.OK() {
		return fmt.Errorf("audit: %v", report.Problems)
	}
	fmt.Fprintf(w, "audit: ok, %d journal entries\n", report.Entries)
	return nil
}

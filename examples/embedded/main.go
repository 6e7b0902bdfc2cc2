// Command embedded shows the library in process, on a bbolt file: it creates a charge,
// writes its QR image, receives the Pix that pays it (as a bank connector would report it),
// refunds part of it and audits the ledger. Service.Run does the background work while it
// goes on: it delivers the charge's CHARGE_COMPLETED webhook to a receiver this program
// serves on 127.0.0.1, as a shop's own endpoint would get it. Every step is idempotent
// (correlationIDs and the Pix's endToEndId), so a second run on the same file finds what
// the first did, moves no money again, and so has no new event to deliver.
//
//	go run ./examples/embedded -db /tmp/payments-example.db -qr /tmp/order-1.png
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

func main() {
	db := flag.String("db", filepath.Join(os.TempDir(), "payments-example.db"), "bbolt database file")
	qr := flag.String("qr", filepath.Join(os.TempDir(), "order-1.png"), "where to write the charge's QR image")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *db, *qr); err != nil {
		log.Fatal(err)
	}
}

// webhookWait bounds how long the example waits for its webhook to arrive.
const webhookWait = 10 * time.Second

func run(ctx context.Context, w io.Writer, dbPath, qrPath string) error {
	// The shop's webhook endpoint, here in process: it hands each event to events.
	events := make(chan event, 8)
	receiver := httptest.NewServer(receive(events))
	defer receiver.Close()

	svc, err := payments.Open(dbPath, payments.Options{
		DefaultCompany: payments.CreateCompanyParams{
			Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo",
		},
		// Webhooks are POSTed over HTTP. The receiver is on 127.0.0.1, which the sender
		// refuses unless told: a real deployment leaves AllowPrivate off.
		WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true}),
	})
	if err != nil {
		return err
	}
	defer svc.Close()

	// The background work (webhook delivery, due work, reconciliation with the bank) is
	// Run's, until its context ends; it is stopped, and waited for, before Close.
	runCtx, stopRun := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(runCtx) }()
	defer func() {
		stopRun()
		<-ran
	}()

	// 0. A webhook for the charge's payment, to the receiver; removed at the end, since the
	// next run's receiver listens elsewhere.
	hook, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{
		Name: "embedded example", URL: receiver.URL + "/webhooks", Event: svc.EventName(payments.EventChargeCompleted),
	})
	if err != nil {
		return err
	}
	defer svc.DeleteWebhook(context.WithoutCancel(ctx), hook.ID)

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
	paid := c.Status != payments.ChargeActive // by an earlier run: no new event
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
	if !paid { // Run's worker delivers the event the payment committed
		select {
		case e := <-events:
			fmt.Fprintf(w, "webhook received: %s for %s\n", e.Event, e.Charge.CorrelationID)
		case <-time.After(webhookWait):
			return errors.New("the webhook did not arrive")
		}
	}

	// 4. A partial refund, idempotent by its correlationID.
	if _, err := svc.CreateChargeRefund(ctx, "order-1", payments.CreateChargeRefundParams{
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

// event is the part of a webhook's payload the example reads.
type event struct {
	Event  string `json:"event"`
	Charge struct {
		CorrelationID string `json:"correlationID"`
	} `json:"charge"`
}

// receive is the shop's webhook endpoint: it hands each charge event to events and
// answers 200. It ignores the test call CreateWebhook makes (it has no charge). A real
// endpoint verifies the signature first (package webhook).
func receive(events chan<- event) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var e event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		if e.Charge.CorrelationID != "" {
			select {
			case events <- e:
			default: // nobody is waiting: the example has what it wanted
			}
		}
		rw.WriteHeader(http.StatusOK)
	})
}

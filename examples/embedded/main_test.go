package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/internal/qrtest"
)

// TestRun runs the example twice on one file, as a user would: the first run's payment
// reaches the in-process receiver as a webhook delivered by Service.Run (the example waits
// on the receiver's channel before it prints the line); the second run finds the charge,
// the Pix and the refund of the first, moves no money again, and so has no event to send.
func TestRun(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	dbPath, qrPath := filepath.Join(dir, "example.db"), filepath.Join(dir, "order-1.png")
	var out bytes.Buffer
	is.NoErr(run(context.Background(), &out, dbPath, qrPath))
	brCode := regexp.MustCompile(`BR Code: (.+)`).FindStringSubmatch(out.String())
	is.True(brCode != nil) // the BR Code is printed
	head := "charge order-1: R$ 19,90\n" +
		"BR Code: " + brCode[1] + "\n" +
		"QR image: " + qrPath + "\n" +
		"charge order-1: COMPLETED, fee 50 centavos\n"
	tail := "refund refund-1: CONFIRMED, 500 centavos\n" +
		"balance: total 1440, available 1440\n" +
		"audit: ok, 3 journal entries\n"
	want := head + "webhook received: OPENPIX:CHARGE_COMPLETED for order-1\n" + tail
	is.Equal(out.String(), want) // the whole flow, the webhook delivered by Run

	image, err := os.ReadFile(qrPath)
	is.NoErr(err)
	text, width, err := qrtest.Decode(image, true)
	is.NoErr(err)
	is.Equal(width, 600)      // the size asked for
	is.Equal(text, brCode[1]) // the image holds the charge's BR Code

	var again bytes.Buffer
	is.NoErr(run(context.Background(), &again, dbPath, qrPath))
	is.Equal(again.String(), head+tail) // a second run finds everything, moves no money again, sends no event
}

package apipix_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/apipix"
)

// liveDriver is a Driver on a real PSP's homologation environment, from the environment:
// PAYMENTS_APIPIX_URL (the API Pix base, e.g. https://pix-h.api.efipay.com.br/v2),
// PAYMENTS_APIPIX_CLIENT_ID, PAYMENTS_APIPIX_CLIENT_SECRET, PAYMENTS_APIPIX_CERT and
// PAYMENTS_APIPIX_KEY (PEM files), PAYMENTS_APIPIX_PIX_KEY (a key of the account), and
// optionally PAYMENTS_APIPIX_TOKEN_URL and PAYMENTS_APIPIX_CA. Without them the live tests
// are skipped: they never run in CI.
func liveDriver(t *testing.T) *apipix.Driver {
	t.Helper()
	env := map[string]string{}
	for _, k := range []string{"URL", "CLIENT_ID", "CLIENT_SECRET", "CERT", "KEY", "PIX_KEY", "TOKEN_URL", "CA"} {
		env[k] = os.Getenv("PAYMENTS_APIPIX_" + k)
	}
	for _, k := range []string{"URL", "CLIENT_ID", "CLIENT_SECRET", "CERT", "KEY", "PIX_KEY"} {
		if env[k] == "" {
			t.Skip("live PSP tests: set PAYMENTS_APIPIX_URL, _CLIENT_ID, _CLIENT_SECRET, _CERT, _KEY and _PIX_KEY to run them")
		}
	}
	cert, pool, err := apipix.LoadCertificate(env["CERT"], env["KEY"], env["CA"])
	if err != nil {
		t.Fatal(err)
	}
	d, err := apipix.New(apipix.Config{BaseURL: env["URL"], TokenURL: env["TOKEN_URL"], ClientID: env["CLIENT_ID"],
		ClientSecret: env["CLIENT_SECRET"], Certificate: cert, RootCAs: pool, PixKey: env["PIX_KEY"]})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestLive_ChargeAndListing registers a charge at the PSP, reads its BR Code, removes it,
// and lists the last day's received Pix to the end: what the Service does with a PSP,
// short of money moving.
func TestLive_ChargeAndListing(t *testing.T) {
	d := liveDriver(t)
	is := is.New(t)
	txid := "paymentslive" + time.Now().UTC().Format("20060102150405") + "x0000000"
	c := rail.Charge{TxID: txid[:32], Key: d.PixKey(), Value: 1, Expires: time.Now().Add(time.Hour), Message: "payments live test"}
	issued, err := d.IssueCharge(ctx, c)
	is.NoErr(err) // the PSP registered it
	code, err := brcode.Parse(issued.BRCode)
	is.NoErr(err)           // with a BR Code that parses
	is.True(code.Dynamic()) // a dynamic one, served by the PSP
	again, err := d.IssueCharge(ctx, c)
	is.NoErr(err)
	is.Equal(again.BRCode, issued.BRCode) // the same charge again: the same code
	is.NoErr(d.RemoveCharge(ctx, c.TxID))
	is.True(errors.Is(d.RemoveCharge(ctx, c.TxID), rail.ErrUnknownCharge)) // removed

	q := rail.ReceivedQuery{From: time.Now().Add(-24 * time.Hour), To: time.Now(), Limit: 50}
	for pages := 0; pages < 100; pages++ {
		p, err := d.ListReceived(ctx, q)
		is.NoErr(err) // a page of what arrived
		if p.Cursor == "" {
			return
		}
		q.Cursor = p.Cursor
	}
	t.Fatal("the listing did not end in 100 pages")
}

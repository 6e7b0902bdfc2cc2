package payments

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// TestChargeRecords_V1File opens a bbolt file written by the version whose charge records
// kept paymentLinkUrl, qrCodeImage and paymentMethods (9068ac3): testdata/charges-v1.db.gz,
// made by testdata/charges-v1.go.txt on that version (charges active, with a customer and
// additional info, paid, expired and overdue), with testdata/charges-v1.json.gz, what that
// version's GetCharge and ListCharges answered at the same time. This version answers the
// same from those records; a charge saved again (paid here) is written without the three
// fields, smaller, and still shows them.
func TestChargeRecords_V1File(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	st := openGzipped(t, "testdata/charges-v1.db.gz")
	var want struct {
		Gets []struct {
			ID  string
			Got Charge
		}
		List []Charge
		Info PageInfo
	}
	is.NoErr(json.Unmarshal(gunzipped(t, "testdata/charges-v1.json.gz"), &want))
	is.Equal(len(want.Gets), 5)

	clock := NewManualClock(time.Date(2026, 11, 29, 12, 6, 0, 0, time.UTC)) // the generator's time at its reads
	svc, err := New(st, Options{Clock: clock})
	is.NoErr(err)
	stored := func(id string) string { // the record of the charge with correlationID id
		var data string
		is.NoErr(st.View(ctx, func(tx store.Tx) error {
			r, err := tx.GetByKey(collCharges, svc.company, correlationKey(id))
			data = string(r.Data)
			return err
		}))
		return data
	}
	same := func(got, want any) {
		t.Helper()
		g, err := json.Marshal(got)
		is.NoErr(err)
		w, err := json.Marshal(want)
		is.NoErr(err)
		if string(g) != string(w) {
			t.Errorf("got  %s\nwant %s", g, w)
		}
	}
	for _, w := range want.Gets {
		is.True(strings.Contains(stored(w.ID), `"paymentMethods"`)) // written by that version
		got, err := svc.GetCharge(ctx, w.ID)
		is.NoErr(err)
		same(got, w.Got)
	}
	list, info, err := svc.ListCharges(ctx, ChargeFilter{})
	is.NoErr(err)
	is.Equal(info, want.Info)
	same(list, want.List)

	before := len(stored("active"))
	_, _, err = svc.ReceiveChargePix(ctx, "active", ReceivePixParams{EndToEndID: "E00000000202611291206000000000001"})
	is.NoErr(err)
	after := stored("active")
	is.True(!strings.Contains(after, `"paymentMethods"`)) // saved by this version: without the three
	is.True(!strings.Contains(after, `"paymentLinkUrl"`))
	is.True(!strings.Contains(after, `"qrCodeImage"`))
	is.True(len(after) < before) // though it now carries its payment (983 bytes before, 892 after)
	paid, err := svc.GetCharge(ctx, "active")
	is.NoErr(err)
	is.Equal(paid.Status, ChargeCompleted)
	is.Equal(paid.PaymentMethods.Pix.Method, "PIX_COB") // derived on reading, as before
	is.Equal(paid.PaymentMethods.Pix.Status, ChargeCompleted)
	is.Equal(paid.PaymentMethods.Pix.BRCode, paid.BRCode)
	is.Equal(paid.PaymentMethods.Pix.TransactionID, paid.TransactionID)
}

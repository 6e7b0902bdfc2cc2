package payments_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/memory"
)

// TestWebhook_StampOnOffsetClock: on the sandbox server's clock (an OffsetClock), moved
// two hours ahead, a delivery's payload carries the moved time and its webhook-timestamp
// the real one, so a receiver verifying it against its own clock accepts it. Stamped with
// the moved time, VerifyWebhook refused every delivery after a move.
func TestWebhook_StampOnOffsetClock(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	wall := payments.NewManualClock(t0) // the receiver's clock, and the server's without the offset
	clock := payments.NewOffsetClock(wall)
	var got []payments.WebhookRequest
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, DefaultCompany: payments.CreateCompanyParams{Name: "Loja"},
		WebhookSender: senderFunc(func(_ context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
			if !strings.Contains(string(r.Body), "teste_webhook") {
				got = append(got, r)
			}
			return payments.WebhookResponse{Status: 200}, nil
		})})
	is.NoErr(err)
	w := createWebhook(t, svc, "https://hooks.example.com/in", payments.EventChargeCreated)
	_, err = svc.AdvanceClock(ctx, clock, 2*time.Hour)
	is.NoErr(err)
	newCharge(t, svc, "c1")
	is.NoErr(svc.RunDue(ctx))
	is.Equal(len(got), 1)
	r := got[0]
	is.Equal(r.Header.Get("webhook-timestamp"), strconv.FormatInt(t0.Unix(), 10)) // the real time
	var body struct {
		Charge struct {
			CreatedAt time.Time `json:"createdAt"`
		} `json:"charge"`
	}
	is.NoErr(json.Unmarshal(r.Body, &body))
	is.Equal(body.Charge.CreatedAt, t0.Add(2*time.Hour))                                  // the payload's time is the moved one
	is.NoErr(httpadapter.VerifyWebhook(w.HMACSecretKey, r.Header, r.Body, wall.Now(), 0)) // and the receiver accepts it
}

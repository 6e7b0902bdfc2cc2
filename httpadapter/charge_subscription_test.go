package httpadapter_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/matryer/is"
)

// TestCharges_SubscriptionObject: a charge made by a subscription carries "subscription"
// as the official document's Subscription object, not the subscription's correlationID
// string: in GET /charge/{id}, GET /charge, the sandbox's pay reply and the CHARGE_CREATED
// and CHARGE_COMPLETED payloads; and it is the subscription as it is now, canceled
// once canceled. A charge made by none has no "subscription".
func TestCharges_SubscriptionObject(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newClockServer(t, true)
	r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"value":2500,"correlationID":"gym","name":"Gym",
		"customer":{"name":"Ana","taxID":"52998224725"},"dayGenerateCharge":10,"dayDue":7}`)
	mustStatus(t, is, r, http.StatusOK)
	globalID := str(r.body, "subscription", "globalID")
	r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"480h"}`) // Dec 12: the first charge
	mustStatus(t, is, r, http.StatusOK)

	r = s.do(t, "GET", "/api/v1/charge?subscription=gym", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	charges := list(r.body, "charges")
	is.Equal(len(charges), 1)
	sub, ok := get(charges[0], "subscription").(map[string]any)
	is.True(ok) // an object, not the correlationID
	is.Equal(sub["correlationID"], "gym")
	is.Equal(sub["globalID"], globalID)
	is.Equal(sub["status"], "ACTIVE")
	is.Equal(sub["value"], 2500.0)
	is.Equal(str(sub, "customer", "name"), "Ana")
	id := str(charges[0], "correlationID")

	r = s.do(t, "GET", "/api/v1/charge/"+id, s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "charge", "subscription", "correlationID"), "gym")

	r = s.do(t, "GET", "/openpix/testing?transactionID="+str(r.body, "charge", "transactionID"), s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "charge", "subscription", "correlationID"), "gym")

	events, err := s.svc.Events(ctx, 0, 100)
	is.NoErr(err)
	seen := map[string]bool{}
	for _, e := range events {
		var body struct {
			Charge struct {
				Subscription json.RawMessage `json:"subscription"`
			} `json:"charge"`
		}
		is.NoErr(json.Unmarshal(e.Data, &body))
		if len(body.Charge.Subscription) == 0 {
			continue
		}
		var obj map[string]any
		is.NoErr(json.Unmarshal(body.Charge.Subscription, &obj)) // an object in the payload too
		is.Equal(obj["correlationID"], "gym")
		seen[e.Name] = true
	}
	is.True(seen["OPENPIX:CHARGE_CREATED"])
	is.True(seen["OPENPIX:CHARGE_COMPLETED"])
	is.True(seen["OPENPIX:TRANSACTION_RECEIVED"])

	r = s.do(t, "PUT", "/api/v1/subscriptions/gym/cancel", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	r = s.do(t, "GET", "/api/v1/charge/"+id, s.appID, "")
	is.Equal(get(r.body, "charge", "subscription", "isActive"), false) // as it is now

	c := s.createCharge(t, s.appID, `{"correlationID":"plain","value":100}`)
	_, has := c["subscription"]
	is.True(!has) // a charge made by no subscription has none
}

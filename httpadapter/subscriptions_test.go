package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestSubscriptions(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	var globalID, corrID string

	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		// The Node SDK's shape: chargeType, no correlationID, no type.
		r := s.do(t, "POST", "/api/v1/subscriptions", s.appID,
			`{"customer":{"name":"Ana","taxID":"52998224725","email":"ana@example.com"},"value":990,"dayGenerateCharge":22,"chargeType":"DYNAMIC","frequency":"MONTHLY"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"subscription"})
		sub := get(r.body, "subscription")
		globalID, corrID = str(sub, "globalID"), str(sub, "correlationID")
		is.True(globalID != "")                       // a globalID
		is.True(corrID != "")                         // a generated correlationID
		is.Equal(num(sub, "value"), 990)              // the value
		is.Equal(num(sub, "dayGenerateCharge"), 22)   // the day
		is.Equal(num(sub, "dayDue"), 7)               // the default dayDue
		is.Equal(str(sub, "frequency"), "MONTHLY")    // the frequency
		is.Equal(str(sub, "chargeType"), "DYNAMIC")   // the charge type
		is.Equal(str(sub, "status"), "ACTIVE")        // active
		is.Equal(get(sub, "isActive"), true)          // active
		is.Equal(str(sub, "customer", "name"), "Ana") // the customer
		is.True(str(sub, "nextChargeDate") != "")     // when it charges next

		// The spec's shape, with the request spelling of the frequency and a type.
		r = s.do(t, "POST", "/api/v1/subscriptions", s.appID,
			`{"customer":{"name":"Bia","email":"bia@example.com"},"value":5000,"correlationID":"plan-2","type":"RECURRENT","frequency":"SEMIANNUALLY","chargeType":"OVERDUE","dayDue":10,"comment":"Plano",
			"name":"Plano Gold","installmentCount":4}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "subscription", "frequency"), "SEMIANNUALY") // stored in one spelling
		is.Equal(str(r.body, "subscription", "name"), "Plano Gold")       // kept
		is.Equal(str(r.body, "subscription", "type"), "RECURRENT")
		is.Equal(r.body["subscription"].(map[string]any)["installmentCount"], 4.0) // four charges in all

		is.Equal(str(r.body, "subscription", "correlationID"), "plan-2")
		r = s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"customer":{"name":"Bia","email":"bia@example.com"},"value":5000,"correlationID":"plan-2"}`)
		mustStatus(t, is, r, http.StatusBadRequest) // correlationID taken
		is.True(strings.Contains(r.errMsg(), "correlationID"))
		// dayGenerateCharge as the reference also allows: the date of the first charge.
		r = s.do(t, "POST", "/api/v1/subscriptions", s.appID,
			`{"customer":{"name":"Bia","email":"bia@example.com"},"value":5000,"correlationID":"plan-3","dayGenerateCharge":"2026-12-15"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "subscription", "dayGenerateCharge"), 15)
		is.Equal(str(r.body, "subscription", "nextChargeDate"), "2026-12-15T03:00:00.000Z")
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{globalID, corrID} {
			r := s.do(t, "GET", "/api/v1/subscriptions/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(str(r.body, "subscription", "globalID"), globalID) // by globalID or correlationID
		}
		r := s.do(t, "GET", "/api/v1/subscriptions/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Subscription not found")
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/subscriptions?limit=1", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pageInfo", "subscriptions"})
		is.Equal(len(list(r.body, "subscriptions")), 1)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 3)
		is.Equal(get(r.body, "pageInfo", "hasNextPage"), true)
	})
	t.Run("Charges", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(s.svc.RunDue(ctx)) // the first period starts today
		r := s.do(t, "GET", "/api/v1/charge?subscription="+corrID, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 1)                                 // the charge list's filter finds it
		is.Equal(str(list(r.body, "charges")[0], "subscription", "correlationID"), corrID) // the Subscription object
		is.Equal(str(list(r.body, "charges")[0], "correlationID"), corrID+":2026-11-22")
	})
	t.Run("Cancel", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "PUT", "/api/v1/subscriptions/"+globalID+"/cancel", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "subscription", "status"), "CANCELED")
		is.Equal(get(r.body, "subscription", "isActive"), false)
		s.clock.Set(s.clock.Now().AddDate(0, 2, 0))
		is.NoErr(s.svc.RunDue(ctx))
		r = s.do(t, "GET", "/api/v1/charge?subscription="+corrID, s.appID, "")
		is.Equal(num(r.body, "pageInfo", "totalCount"), 1) // nothing after cancel
		r = s.do(t, "PUT", "/api/v1/subscriptions/nope/cancel", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		const cust = `"customer":{"name":"Ana","taxID":"52998224725"}`
		for _, tc := range []struct{ field, body string }{
			{"dayGenerateCharge", `{` + cust + `,"value":100,"dayGenerateCharge":0}`},
			{"dayGenerateCharge", `{` + cust + `,"value":100,"dayGenerateCharge":32}`},
			{"dayGenerateCharge", `{` + cust + `,"value":100,"dayGenerateCharge":"5"}`},
			{"dayGenerateCharge", `{` + cust + `,"value":100,"dayGenerateCharge":"2020-01-01"}`}, // a date in the past
			{"dayGenerateCharge", `{` + cust + `,"value":100,"dayGenerateCharge":"next month"}`},
			{"dayDue", `{` + cust + `,"value":100,"dayDue":2}`},
			{"installmentCount", `{` + cust + `,"value":100,"installmentCount":-1}`},
			{"frequency", `{` + cust + `,"value":100,"frequency":"DAILY"}`},
			{"chargeType", `{` + cust + `,"value":100,"chargeType":"STATIC"}`},
			{"value", `{` + cust + `,"value":0}`},
			{"value", `{` + cust + `,"value":-5}`},
			{"value", `{` + cust + `,"value":9.9}`},
			{"customer", `{"value":100}`},
			{"taxID", `{"customer":{"name":"Ana"},"value":100}`}, // "customer needs a taxID, an email or a phone"
			{"customer.name", `{"customer":{"email":"a@example.com"},"value":100}`},
			{"type", `{` + cust + `,"value":100,"type":"IN_INSTALLMENT"}`},
			{"pixRecurringOptions.journey", `{` + cust + `,"value":100,"type":"PIX_RECURRING","pixRecurringOptions":{"journey":"QR"}}`},
		} {
			t.Run(tc.field, func(t *testing.T) {
				is := is.New(t)
				before := s.do(t, "GET", "/api/v1/subscriptions", s.appID, "")
				r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				is.True(strings.Contains(r.errMsg(), tc.field)) // names the field
				after := s.do(t, "GET", "/api/v1/subscriptions", s.appID, "")
				is.Equal(num(after.body, "pageInfo", "totalCount"), num(before.body, "pageInfo", "totalCount")) // nothing created
			})
		}
	})
}

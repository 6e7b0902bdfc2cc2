package httpadapter_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// TestPixAutomatic: a Pix Automático subscription over the wire, on the sandbox: the payer
// approves its mandate, its installment's debit is refused once, retried by hand and paid;
// every answer in the official document's shapes.
func TestPixAutomatic(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newClockServer(t, true)
	r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"value":2500,"correlationID":"gym","type":"PIX_RECURRING",
		"customer":{"name":"Ana","taxID":"52998224725"},"dayGenerateCharge":22,"frequency":"MONTHLY",
		"pixRecurringOptions":{"journey":"ONLY_RECURRENCY","retryPolicy":"THREE_RETRIES_7_DAYS"}}`)
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "subscription", "type"), "PIX_RECURRING")                                      // Pix Automático
	is.Equal(str(r.body, "subscription", "pixRecurring", "status"), "CREATED")                          // waiting for the payer
	is.Equal(str(r.body, "subscription", "pixRecurring", "journey"), "ONLY_RECURRENCY")                 // as asked
	is.Equal(str(r.body, "subscription", "pixRecurringOptions", "retryPolicy"), "THREE_RETRIES_7_DAYS") // as the schema shows it
	is.True(str(r.body, "subscription", "pixRecurring", "recurrencyId") != "")                          // the mandate's id
	is.True(str(r.body, "subscription", "pixRecurring", "emv") != "")                                   // the code the payer reads
	sub := str(r.body, "subscription", "globalID")

	r = s.do(t, "POST", "/openpix/testing/pix-automatic/"+sub+"/approve", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "subscription", "pixRecurring", "status"), "APPROVED") // the payer approved
	r = s.do(t, "POST", "/openpix/testing/pix-automatic/gym/fail-next-debit", s.appID, "")
	mustStatus(t, is, r, http.StatusOK) // the next debit is refused

	r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"1h"}`) // the due pass: today's installment
	mustStatus(t, is, r, http.StatusOK)
	r = s.do(t, "GET", "/api/v1/subscriptions/"+sub+"/installments", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(keys(r.body), []string{"installments", "pageInfo"}) // the document's envelope
	ins := list(r.body, "installments")
	is.Equal(len(ins), 1)                                                   // one period
	is.Equal(str(ins[0], "status"), "SCHEDULED")                            // not paid
	is.Equal(str(ins[0], "cobr", "status"), "FAILED_TRY")                   // refused once
	is.Equal(str(ins[0], "paymentSubscriptionGlobalID"), sub)               // its subscription
	is.Equal(str(ins[0], "dateGenerateCharge"), "2026-11-22T03:00:00.000Z") // its period's start, Brasília's midnight, three digits
	in := str(ins[0], "globalID")

	r = s.do(t, "POST", "/api/v1/installments/"+in+"/cobr/retry", s.appID, `{"value":"x"}`)
	mustStatus(t, is, r, http.StatusBadRequest) // a value is a number
	r = s.do(t, "POST", "/api/v1/installments/"+in+"/cobr/retry", s.appID, `{"value":100}`)
	mustStatus(t, is, r, http.StatusBadRequest) // the mandate's value is fixed
	r = s.do(t, "POST", "/api/v1/installments/"+in+"/cobr/retry", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "installment", "status"), "COMPLETED")         // paid at the retry
	is.Equal(str(r.body, "installment", "cobr", "status"), "COMPLETED") // its cobr
	e2e := str(r.body, "installment", "cobr", "endToEndId")

	r = s.do(t, "GET", "/api/v1/installments/"+e2e, s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "installment", "globalID"), in) // by the Pix's endToEndId
	r = s.do(t, "GET", "/api/v1/transaction/"+e2e, s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(num(r.body, "transaction", "value"), 2500) // received as a Pix
	r = s.do(t, "POST", "/api/v1/installments/"+in+"/cobr", s.appID, "")
	mustStatus(t, is, r, http.StatusBadRequest) // never debited twice

	r = s.do(t, "PUT", "/api/v1/subscriptions/"+sub+"/value", s.appID, `{"value":3000}`)
	mustStatus(t, is, r, http.StatusBadRequest) // a fixed value does not change
	r = s.do(t, "GET", "/api/v1/installments/nope", s.appID, "")
	mustStatus(t, is, r, http.StatusBadRequest)   // no such installment: the real API's 400
	is.Equal(r.errMsg(), "Installment not found") // says so
}

// TestPixAutomatic_VariableValue: PUT /subscriptions/{id}/value changes the value of a
// variable mandate, never below its minimum.
func TestPixAutomatic_VariableValue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newClockServer(t, true)
	r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"value":2500,"correlationID":"power","type":"PIX_RECURRING",
		"customer":{"name":"Ana","taxID":"52998224725"},"pixRecurringOptions":{"minimumValue":1000}}`)
	mustStatus(t, is, r, http.StatusOK)
	r = s.do(t, "PUT", "/api/v1/subscriptions/power/value", s.appID, `{"value":999}`)
	mustStatus(t, is, r, http.StatusBadRequest) // below the minimum
	is.True(r.errMsg() != "")                   // says why
	r = s.do(t, "PUT", "/api/v1/subscriptions/power/value", s.appID, `{"value":4200}`)
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(num(r.body, "subscription", "value"), 4200) // the next installments' value
}

// TestPixAutomatic_NotSandbox: without the sandbox the testing routes do not exist.
func TestPixAutomatic_NotSandbox(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	r := s.do(t, "POST", "/openpix/testing/pix-automatic/x/approve", s.appID, "")
	mustStatus(t, is, r, http.StatusNotFound) // not served
}

// TestPixAutomatic_OtherCompany: another company can neither read nor act on a company's
// Pix Automático subscription and installments; a webhook may subscribe to its events.
func TestPixAutomatic_OtherCompany(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newClockServer(t, true)
	r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"value":2500,"correlationID":"gym","type":"PIX_RECURRING",
		"customer":{"name":"Ana","taxID":"52998224725"},"dayGenerateCharge":22}`)
	mustStatus(t, is, r, http.StatusOK)
	sub := str(r.body, "subscription", "globalID")
	mustStatus(t, is, s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"1h"}`), http.StatusOK)
	in := str(list(s.do(t, "GET", "/api/v1/subscriptions/gym/installments", s.appID, "").body, "installments")[0], "globalID")

	second := s.newCompany(t, "Outra Loja", "11222333000181")
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/installments/" + in, ""},
		{"GET", "/api/v1/subscriptions/" + sub + "/installments", ""},
		{"POST", "/api/v1/installments/" + in + "/cobr", ""},
		{"POST", "/api/v1/installments/" + in + "/cobr/retry", ""},
		{"PUT", "/api/v1/subscriptions/" + sub + "/value", `{"value":100}`},
		{"POST", "/openpix/testing/pix-automatic/" + sub + "/approve", ""},
		{"POST", "/openpix/testing/pix-automatic/gym/reject", ""},
		{"POST", "/openpix/testing/pix-automatic/gym/fail-next-debit", ""},
	} {
		r := s.do(t, tc.method, tc.path, second, tc.body)
		mustStatus(t, is, r, http.StatusBadRequest)         // as if it did not exist
		is.True(strings.HasSuffix(r.errMsg(), "not found")) // says only that
	}
	r = s.do(t, "GET", "/api/v1/subscriptions/gym", s.appID, "")
	is.Equal(str(r.body, "subscription", "pixRecurring", "status"), "CREATED") // untouched
	r = s.do(t, "GET", "/api/v1/installments/"+in, s.appID, "")
	is.Equal(str(r.body, "installment", "status"), "SCHEDULED") // untouched

	r = s.do(t, "GET", "/api/v1/webhook/events", s.appID, "")
	var names []string
	for _, ev := range list(r.body, "events") {
		names = append(names, str(ev, "name"))
	}
	is.True(slices.Contains(names, "PIX_AUTOMATIC_COBR_COMPLETED")) // a webhook may subscribe to its events, named as the real API's
}

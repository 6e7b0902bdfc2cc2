package httpadapter_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// disputedPix pays a charge of value through the sandbox and returns the Pix's endToEndId.
func disputedPix(t *testing.T, s server, appID, corr, value string) string {
	t.Helper()
	c := s.createCharge(t, appID, `{"correlationID":"`+corr+`","value":`+value+`,"customer":{"name":"Ana","email":"ana@example.com","phone":"+5511999990000"}}`)
	return str(s.sandboxPay(t, appID, "transactionID="+str(c, "transactionID")), "endToEndId")
}

// accountBalance is the default account's balance: total, blocked, available.
func accountBalance(t *testing.T, s server, appID string) [3]int {
	t.Helper()
	r := s.do(t, "GET", "/api/v1/account", appID, "")
	mustStatus(t, is.New(t), r, http.StatusOK)
	for _, a := range list(r.body, "accounts") {
		if get(a, "isDefault") == true {
			return [3]int{num(a, "balance", "total"), num(a, "balance", "blocked"), num(a, "balance", "available")}
		}
	}
	t.Fatalf("no default account: %s", r.raw)
	return [3]int{}
}

// TestDisputes_Wire drives a dispute through its life on the wire: the sandbox opens it,
// the company reads it and answers it, the sandbox decides it; the balance shows the
// block and the return.
func TestDisputes_Wire(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	app := s.appID
	disputedPix(t, s, app, "funds", "50000") // money besides the disputed Pix
	e2e := disputedPix(t, s, app, "order", "10000")
	before := accountBalance(t, s, app)

	t.Run("Open", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/openpix/testing/dispute", app, `{"endToEndId":"`+e2e+`","reason":"Produto não recebido"}`)
		mustStatus(t, is, r, http.StatusOK)
		d := get(r.body, "dispute")
		is.Equal(str(d, "status"), "CREATED")
		is.Equal(get(d, "value"), "10000") // the document's GET /dispute/{id} schema: a string
		is.Equal(str(d, "endToEndId"), e2e)
		is.Equal(str(d, "type"), "MED")
		is.Equal(str(d, "disputeReason"), "Produto não recebido")
		is.Equal(str(d, "email"), "ana@example.com")
		is.Equal(str(d, "phoneNumber"), "+5511999990000")
		is.True(str(d, "name") != "")                                                    // the payer's
		is.Equal(accountBalance(t, s, app), [3]int{before[0], 10000, before[2] - 10000}) // blocked

		again := s.do(t, "POST", "/openpix/testing/dispute", app, `{"transactionID":"`+e2e+`","reason":"outra vez"}`)
		mustStatus(t, is, again, http.StatusOK)
		is.Equal(get(again.body, "dispute"), d)                                          // the same dispute
		is.Equal(accountBalance(t, s, app), [3]int{before[0], 10000, before[2] - 10000}) // blocked once
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/dispute/"+e2e, app, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "dispute", "endToEndId"), e2e)
		is.True(strings.HasSuffix(str(r.body, "dispute", "createdAt"), "Z"))
		r = s.do(t, "GET", "/api/openpix/v1/dispute/"+e2e, app, "")
		mustStatus(t, is, r, http.StatusOK) // the legacy prefix too
		r = s.do(t, "GET", "/api/v1/dispute/E00000000202611221200nothere0001", app, "")
		mustStatus(t, is, r, http.StatusBadRequest) // the document's answer
		is.Equal(r.errMsg(), "Dispute not found")
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/dispute", app, "")
		mustStatus(t, is, r, http.StatusOK)
		ds := list(r.body, "disputes")
		is.Equal(len(ds), 1)
		is.Equal(str(ds[0], "status"), "IN_REVIEW")   // the document's list names an open dispute so
		is.Equal(get(ds[0], "value"), float64(10000)) // a number, as its Dispute schema says
		is.Equal(str(ds[0], "endToEndId"), e2e)
		is.Equal(get(r.body, "pageInfo", "hasNextPage"), false)
		is.Equal(num(r.body, "pageInfo", "limit"), 100)
		r = s.do(t, "GET", "/api/v1/dispute?start=2020-01-01T00:00:00Z&end=2020-12-01T17:00:00Z", app, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "disputes")), 0) // none in 2020
		r = s.do(t, "GET", "/api/v1/dispute?start=2026-11-22T00:00:00Z", app, "")
		is.Equal(len(list(r.body, "disputes")), 1)
	})
	t.Run("Evidence", func(t *testing.T) {
		is := is.New(t)
		body := `{"documents":[{"url":"https://loja.example.com/nf/1.pdf","correlationID":"nf-1","description":"nota fiscal"}]}`
		r := s.do(t, "POST", "/api/v1/dispute/"+e2e+"/evidence", app, body)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.raw, `{"documents":[{"url":"https://loja.example.com/nf/1.pdf","correlationID":"nf-1","description":"nota fiscal"}]}`+"\n")
		r = s.do(t, "POST", "/api/v1/dispute/"+e2e+"/evidence", app, body)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "documents")), 1) // sent again: held once
		r = s.do(t, "POST", "/api/v1/dispute/"+e2e+"/evidence", app, `{"documents":[{"url":"https://correios.example.com/t/1"}]}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "documents")), 2) // every document the dispute holds
		r = s.do(t, "GET", "/api/v1/dispute/"+e2e, app, "")
		is.Equal(str(r.body, "dispute", "status"), "CREATED") // open, in the one-dispute schema's name
	})
	t.Run("Decide", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/openpix/testing/dispute/"+e2e+"/decide", app, `{"outcome":"ACCEPTED"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "dispute", "status"), "ACCEPTED")
		is.Equal(accountBalance(t, s, app), [3]int{before[0] - 10000, 0, before[2] - 10000}) // returned to the payer
		refunds := s.do(t, "GET", "/api/v1/refund", app, "")
		is.Equal(len(list(refunds.body, "refunds")), 1)                                                              // as a refund of the Pix
		is.True(slices.Contains([]string{"CONFIRMED", "REFUNDED"}, str(list(refunds.body, "refunds")[0], "status"))) // settled at once

		r = s.do(t, "POST", "/openpix/testing/dispute/"+e2e+"/decide", app, `{"outcome":"ACCEPTED"}`)
		mustStatus(t, is, r, http.StatusOK)                                                  // again: the same answer
		is.Equal(accountBalance(t, s, app), [3]int{before[0] - 10000, 0, before[2] - 10000}) // nothing moved twice
		r = s.do(t, "POST", "/openpix/testing/dispute/"+e2e+"/decide", app, `{"outcome":"REJECTED"}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		r = s.do(t, "POST", "/api/v1/dispute/"+e2e+"/evidence", app, `{"documents":[{"url":"https://late.example.com"}]}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "You cannot send evidence for a accepted dispute") // the document's words
		r = s.do(t, "GET", "/api/v1/dispute", app, "")
		is.Equal(str(list(r.body, "disputes")[0], "status"), "ACCEPTED")
	})
	t.Run("Rejected", func(t *testing.T) {
		is := is.New(t)
		pix := disputedPix(t, s, app, "rejected", "2000")
		was := accountBalance(t, s, app)
		mustStatus(t, is, s.do(t, "POST", "/openpix/testing/dispute", app, `{"endToEndId":"`+pix+`","reason":"r"}`), http.StatusOK)
		is.Equal(accountBalance(t, s, app), [3]int{was[0], 2000, was[2] - 2000})
		r := s.do(t, "POST", "/openpix/testing/dispute/"+pix+"/decide", app, `{"outcome":"rejected"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "dispute", "status"), "REJECTED")
		is.Equal(accountBalance(t, s, app), was) // released
	})
	t.Run("Events", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/webhook/events", app, "")
		mustStatus(t, is, r, http.StatusOK)
		is.True(strings.Contains(r.raw, `"OPENPIX:DISPUTE_CREATED"`)) // registrable
		is.True(strings.Contains(r.raw, `"OPENPIX:DISPUTE_ACCEPTED"`))
		is.True(strings.Contains(r.raw, `"OPENPIX:DISPUTE_REJECTED"`))
		is.True(strings.Contains(r.raw, `"OPENPIX:DISPUTE_CANCELED"`))
	})
}

// TestDisputes_BadInput: bad bodies and queries are 400s naming the field, and change
// nothing.
func TestDisputes_BadInput(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	app := s.appID
	e2e := disputedPix(t, s, app, "order", "1000")
	mustStatus(t, is.New(t), s.do(t, "POST", "/openpix/testing/dispute", app, `{"endToEndId":"`+e2e+`","reason":"r"}`), http.StatusOK)
	before := accountBalance(t, s, app)
	for _, tc := range []struct{ method, path, body, field string }{
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{}`, "documents"},
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{"documents":[]}`, "documents"},
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{"documents":{"url":"https://a.example.com"}}`, "documents"},
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{"documents":[{"url":5}]}`, "documents[0].url"},
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{"documents":[{"url":"nope"}]}`, "documents[0].url"},
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{"documents":[{"url":"https://a.example.com","url":"https://b.example.com"}]}`, "documents[0].url"},
		{"POST", "/openpix/testing/dispute", `{"reason":"r"}`, "endToEndId"},
		{"POST", "/openpix/testing/dispute", `{"endToEndId":"` + e2e + `","transactionID":"x","reason":"r"}`, "endToEndId"},
		{"POST", "/openpix/testing/dispute", `{"endToEndId":"` + e2e + `"}`, "reason"},
		{"POST", "/openpix/testing/dispute/" + e2e + "/decide", `{"outcome":"MAYBE"}`, "outcome"},
		{"POST", "/openpix/testing/dispute/" + e2e + "/decide", `{}`, "outcome"},
		{"GET", "/api/v1/dispute?start=x", "", "start"},
		{"GET", "/api/v1/dispute?limit=0", "", "limit"},
		{"GET", "/api/v1/dispute?start=2026-11-23T00:00:00Z&end=2026-11-22T00:00:00Z", "", "end"},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.body, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, tc.method, tc.path, app, tc.body)
			mustStatus(t, is, r, http.StatusBadRequest)
			is.True(strings.Contains(r.errMsg(), tc.field)) // names the field
		})
	}
	is := is.New(t)
	is.Equal(accountBalance(t, s, app), before) // nothing moved
	r := s.do(t, "GET", "/api/v1/dispute/"+e2e, app, "")
	is.Equal(str(r.body, "dispute", "status"), "CREATED") // nothing changed
}

// TestDisputes_OtherCompany: another company can neither read, list, answer, decide nor
// open a dispute of the first company's, by its endToEndId.
func TestDisputes_OtherCompany(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	first := s.appID
	e2e := disputedPix(t, s, first, "order", "1000")
	mustStatus(t, is.New(t), s.do(t, "POST", "/openpix/testing/dispute", first, `{"endToEndId":"`+e2e+`","reason":"r"}`), http.StatusOK)
	second := s.newCompany(t, "Outra Loja", "11222333000181")
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/dispute/" + e2e, ""},
		{"POST", "/api/v1/dispute/" + e2e + "/evidence", `{"documents":[{"url":"https://evil.example.com"}]}`},
		{"POST", "/openpix/testing/dispute/" + e2e + "/decide", `{"outcome":"ACCEPTED"}`},
		{"POST", "/openpix/testing/dispute", `{"endToEndId":"` + e2e + `","reason":"r"}`},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, tc.method, tc.path, second, tc.body)
			mustStatus(t, is, r, http.StatusBadRequest) // as if it did not exist
			is.True(strings.Contains(r.errMsg(), "not found"))
		})
	}
	is := is.New(t)
	r := s.do(t, "GET", "/api/v1/dispute", second, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(len(list(r.body, "disputes")), 0) // none of the first's
	r = s.do(t, "GET", "/api/v1/dispute/"+e2e, first, "")
	is.Equal(str(r.body, "dispute", "status"), "CREATED") // the first's, untouched
	is.Equal(len(list(s.do(t, "POST", "/api/v1/dispute/"+e2e+"/evidence", first, `{"documents":[{"url":"https://a.example.com"}]}`).body, "documents")), 1)
}

// TestDisputes_SandboxRoutesOnlyInSandbox: without Options.Sandbox the routes that open
// and decide disputes do not exist; the company's dispute routes do.
func TestDisputes_SandboxRoutesOnlyInSandbox(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	r := s.do(t, "POST", "/openpix/testing/dispute", s.appID, `{"endToEndId":"E00000000202611221200nothere0001","reason":"r"}`)
	is.True(slices.Contains([]int{http.StatusNotFound, http.StatusMethodNotAllowed}, r.status)) // no such route
	r = s.do(t, "POST", "/openpix/testing/dispute/x/decide", s.appID, `{"outcome":"ACCEPTED"}`)
	is.True(slices.Contains([]int{http.StatusNotFound, http.StatusMethodNotAllowed}, r.status))
	r = s.do(t, "GET", "/api/v1/dispute", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(r.raw, `{"disputes":[],"pageInfo":{"skip":0,"limit":100,"totalCount":0,"hasPreviousPage":false,"hasNextPage":false}}`+"\n")
	r = s.do(t, "GET", "/api/v1/dispute", "", "")
	mustStatus(t, is, r, http.StatusUnauthorized) // behind the App ID
}

package payments_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// disputePayloadKeys are the keys of a dispute event's "dispute": the official document's
// DisputePayload, as the wire reference gives it.
var disputePayloadKeys = []string{"status", "endToEndId", "name", "email", "phoneNumber", "value", "disputeReason"}

// produceDisputeEvents opens three disputes and decides one each way, for the catalogue
// test: DISPUTE_CREATED, _ACCEPTED, _REJECTED and _CANCELED.
func produceDisputeEvents(t *testing.T, e env) {
	t.Helper()
	for i, outcome := range []payments.DisputeStatus{payments.DisputeAccepted, payments.DisputeRejected, payments.DisputeCanceled} {
		x := pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("disputed-%d", i), Value: 1000}))
		d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "golpe"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.DecideDispute(ctx, d.EndToEndID, outcome); err != nil {
			t.Fatal(err)
		}
	}
}

// fundDisputed pays a charge of value so the account has money beyond the disputed Pix.
func fundDisputed(t *testing.T, e env, corr string, value int64) payments.Transaction {
	t.Helper()
	return pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: corr, Value: value,
		Customer: &payments.CreateCustomerParams{Name: "Ana", Email: "ana@example.com", Phone: "+5511999990000"}}))
}

func TestService_CreateDispute(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		x := fundDisputed(t, e, "order", 10000)
		fundDisputed(t, e, "other", 10000)
		before := balance(t, e)

		d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "Produto não recebido"})
		is.NoErr(err)
		is.Equal(d.Status, payments.DisputeCreated)
		is.Equal(d.Type, payments.DisputeMED)
		is.Equal(d.EndToEndID, x.EndToEndID)
		is.Equal(d.Value, int64(10000))        // the Pix's value
		is.Equal(d.BlockedValue, int64(10000)) // all of it blocked
		is.Equal(d.Name, "Payer")              // the payer the bank reported
		is.Equal(d.Email, "ana@example.com")   // the charge's customer's
		is.Equal(d.PhoneNumber, "+5511999990000")
		is.Equal(d.Documents, []payments.DisputeDocument{})
		is.Equal(balance(t, e), payments.Balance{Total: before.Total, Blocked: 10000, Available: before.Available - 10000}) // blocked, not gone

		again, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.TransactionID, Reason: "de novo"})
		is.NoErr(err)
		is.Equal(again, d)                                                                                                  // the same Pix, by its transactionID: the first dispute
		is.Equal(balance(t, e), payments.Balance{Total: before.Total, Blocked: 10000, Available: before.Available - 10000}) // blocked once

		got, err := e.svc.GetDispute(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(got, d) // by the Pix's endToEndId
		got, err = e.svc.GetDispute(ctx, d.ID)
		is.NoErr(err)
		is.Equal(got, d) // by its id

		ps := eventPayloads[struct {
			Dispute map[string]any `json:"dispute"`
		}](t, e.svc, payments.EventDisputeCreated)
		is.Equal(len(ps), 1) // one event, for the one dispute
		is.Equal(ps[0].Dispute, map[string]any{"status": "CREATED", "endToEndId": x.EndToEndID, "name": "Payer",
			"email": "ana@example.com", "phoneNumber": "+5511999990000", "value": float64(10000), "disputeReason": "Produto não recebido"})
		audit(t, e.svc)
	})
}

func TestService_CreateDispute_Errors(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		x := fundDisputed(t, e, "order", 1000)
		for _, tc := range []struct {
			p     payments.CreateDisputeParams
			code  payments.Code
			field string
		}{
			{payments.CreateDisputeParams{Transaction: x.EndToEndID}, payments.EINVALID, "reason"},
			{payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: strings.Repeat("a", payments.MaxDisputeReason+1)}, payments.EINVALID, "reason"},
			{payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "a\x00b"}, payments.EINVALID, "reason"},
			{payments.CreateDisputeParams{Reason: "r"}, payments.EINVALID, "transaction"},
			{payments.CreateDisputeParams{Transaction: "E00000000202611221200nothere0001", Reason: "r"}, payments.ENOTFOUND, ""},
		} {
			_, err := e.svc.CreateDispute(ctx, tc.p)
			is.Equal(payments.ErrorCode(err), tc.code)
			is.Equal(payments.ErrorField(err), tc.field)
		}
		fundDisputed(t, e, "funds", 1000)
		_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "all"})
		is.NoErr(err)
		_, err = e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // refunded in full: nothing to dispute
		refunds, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionRefund})
		is.NoErr(err)
		is.Equal(len(refunds), 1)
		_, err = e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: refunds[0].TransactionID, Reason: "r"})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // not a received Pix
		ds, page, err := e.svc.ListDisputes(ctx, payments.DisputeFilter{})
		is.NoErr(err)
		is.Equal(len(ds), 0) // nothing was opened
		is.Equal(page.TotalCount, 0)
		audit(t, e.svc)
	})
}

// TestService_CreateDispute_ShortBalance: an account with less available than the disputed
// value blocks what it has, and the record says so; accepting returns what was blocked.
func TestService_CreateDispute_ShortBalance(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		x := fundDisputed(t, e, "order", 10000) // less the fee
		avail := balance(t, e).Available
		is.True(avail < 10000)
		d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "fraude"})
		is.NoErr(err)
		is.Equal(d.Value, int64(10000))
		is.Equal(d.BlockedValue, avail) // all there was
		is.Equal(balance(t, e), payments.Balance{Total: avail, Blocked: avail, Available: 0})

		d, err = e.svc.DecideDispute(ctx, d.EndToEndID, payments.DisputeAccepted)
		is.NoErr(err)
		is.Equal(d.ReturnedValue, avail) // what the account had
		is.Equal(balance(t, e), payments.Balance{})
		audit(t, e.svc)
	})
}

func TestService_DecideDispute(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		fundDisputed(t, e, "funds", 50000)
		t.Run("Accepted", func(t *testing.T) {
			is := is.New(t)
			x := fundDisputed(t, e, "accepted", 10000)
			before := balance(t, e)
			d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "golpe do falso vendedor"})
			is.NoErr(err)
			d, err = e.svc.DecideDispute(ctx, x.EndToEndID, payments.DisputeAccepted)
			is.NoErr(err)
			is.Equal(d.Status, payments.DisputeAccepted)
			is.Equal(d.ReturnedValue, int64(10000))
			r, err := e.svc.GetRefund(ctx, d.RefundID)
			is.NoErr(err)
			is.Equal(r.Status, payments.RefundConfirmed) // sent back; the sandbox settles at once
			is.Equal(r.Value, int64(10000))
			is.Equal(r.TransactionEndToEndID, x.EndToEndID) // a return of the disputed Pix
			is.Equal(r.CorrelationID, "MED:"+d.ID)
			is.Equal(r.Comment, "MED: golpe do falso vendedor")
			is.Equal(balance(t, e), payments.Balance{Total: before.Total - 10000, Available: before.Available - 10000}) // gone, nothing blocked

			again, err := e.svc.DecideDispute(ctx, d.ID, payments.DisputeAccepted)
			is.NoErr(err)
			is.Equal(again, d)                                                                                          // decided already: the same
			is.Equal(balance(t, e), payments.Balance{Total: before.Total - 10000, Available: before.Available - 10000}) // nothing moved twice
			_, err = e.svc.DecideDispute(ctx, d.ID, payments.DisputeRejected)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // another outcome after the decision
			is.Equal(countEvents(t, e.svc, payments.EventDisputeAccepted), 1)
			ps := eventPayloads[struct {
				Dispute struct {
					Status string `json:"status"`
					Value  int64  `json:"value"`
				} `json:"dispute"`
			}](t, e.svc, payments.EventDisputeAccepted)
			is.Equal(ps[0].Dispute.Status, "ACCEPTED")
			is.Equal(ps[0].Dispute.Value, int64(10000))
			audit(t, e.svc)
		})
		for _, outcome := range []payments.DisputeStatus{payments.DisputeRejected, payments.DisputeCanceled} {
			t.Run(string(outcome), func(t *testing.T) {
				is := is.New(t)
				x := fundDisputed(t, e, "pix-"+string(outcome), 10000)
				before := balance(t, e)
				_, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
				is.NoErr(err)
				d, err := e.svc.DecideDispute(ctx, x.EndToEndID, outcome)
				is.NoErr(err)
				is.Equal(d.Status, outcome)
				is.Equal(d.RefundID, "")        // nothing sent back
				is.Equal(balance(t, e), before) // released
				_, err = e.svc.DecideDispute(ctx, x.EndToEndID, outcome)
				is.NoErr(err)
				is.Equal(balance(t, e), before) // released once
				is.Equal(countEvents(t, e.svc, map[payments.DisputeStatus]string{
					payments.DisputeRejected: payments.EventDisputeRejected, payments.DisputeCanceled: payments.EventDisputeCanceled}[outcome]), 1)
				audit(t, e.svc)
			})
		}
		t.Run("Errors", func(t *testing.T) {
			is := is.New(t)
			x := fundDisputed(t, e, "errors", 1000)
			_, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
			is.NoErr(err)
			for _, outcome := range []payments.DisputeStatus{"", "CREATED", "IN_REVIEW", "accepted", "MAYBE"} {
				_, err = e.svc.DecideDispute(ctx, x.EndToEndID, outcome)
				is.Equal(payments.ErrorField(err), "outcome") // not a decision
			}
			_, err = e.svc.DecideDispute(ctx, "nope", payments.DisputeAccepted)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		})
	})
}

// TestService_DecideDispute_RefundedMeanwhile: the company refunds part of a disputed Pix
// from its available balance; accepting the dispute returns no more than the rest.
func TestService_DecideDispute_RefundedMeanwhile(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fundDisputed(t, e, "funds", 50000)
		x := fundDisputed(t, e, "order", 10000)
		_, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.NoErr(err)
		_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "part", Value: 4000})
		is.NoErr(err)
		d, err := e.svc.DecideDispute(ctx, x.EndToEndID, payments.DisputeAccepted)
		is.NoErr(err)
		is.Equal(d.ReturnedValue, int64(6000)) // the Pix is never returned past its value
		got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(got.RefundedValue, int64(10000))
		audit(t, e.svc)
	})
}

func TestService_AddDisputeEvidence(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		x := fundDisputed(t, e, "order", 1000)
		d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.NoErr(err)
		nf := payments.DisputeDocument{URL: "https://loja.example.com/nf/123.pdf", CorrelationID: "nf-123", Description: "nota fiscal"}
		d, err = e.svc.AddDisputeEvidence(ctx, x.EndToEndID, []payments.DisputeDocument{nf})
		is.NoErr(err)
		is.Equal(d.Status, payments.DisputeInReview) // answered
		is.Equal(len(d.Documents), 1)
		is.Equal(d.Documents[0].URL, nf.URL)
		is.Equal(d.Documents[0].CreatedAt, e.clock.Now())

		e.clock.Advance(time.Minute)
		again, err := e.svc.AddDisputeEvidence(ctx, d.ID, []payments.DisputeDocument{nf})
		is.NoErr(err)
		is.Equal(again, d) // sent again: nothing changes
		track := payments.DisputeDocument{URL: " http://correios.example.com/track?id=1 "}
		d, err = e.svc.AddDisputeEvidence(ctx, d.ID, []payments.DisputeDocument{nf, track})
		is.NoErr(err)
		is.Equal(len(d.Documents), 2)                                          // the new one added
		is.Equal(d.Documents[1].URL, "http://correios.example.com/track?id=1") // trimmed
		_, err = e.svc.AddDisputeEvidence(ctx, d.ID, []payments.DisputeDocument{{URL: "https://other.example.com", CorrelationID: "nf-123"}})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // the correlationID of another document
		is.Equal(payments.ErrorField(err), "correlationID")

		for _, tc := range []struct {
			docs  []payments.DisputeDocument
			field string
		}{
			{nil, "documents"},
			{make([]payments.DisputeDocument, payments.MaxEvidencePerCall+1), "documents"},
			{[]payments.DisputeDocument{{}}, "documents[0].url"},
			{[]payments.DisputeDocument{nf, {URL: "ftp://example.com/x"}}, "documents[1].url"},
			{[]payments.DisputeDocument{{URL: "javascript:alert(1)"}}, "documents[0].url"},
			{[]payments.DisputeDocument{{URL: "/relative"}}, "documents[0].url"},
			{[]payments.DisputeDocument{{URL: "https://example.com/" + strings.Repeat("a", payments.MaxEvidenceURL)}}, "documents[0].url"},
			{[]payments.DisputeDocument{{URL: "https://example.com", Description: strings.Repeat("a", payments.MaxEvidenceDescription+1)}}, "documents[0].description"},
			{[]payments.DisputeDocument{{URL: "https://example.com", CorrelationID: "a\x01"}}, "documents[0].correlationID"},
		} {
			_, err := e.svc.AddDisputeEvidence(ctx, d.ID, tc.docs)
			is.Equal(payments.ErrorCode(err), payments.EINVALID)
			is.Equal(payments.ErrorField(err), tc.field)
		}
		got, err := e.svc.GetDispute(ctx, d.ID)
		is.NoErr(err)
		is.Equal(got, d) // no bad call changed it

		_, err = e.svc.AddDisputeEvidence(ctx, "nope", []payments.DisputeDocument{nf})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		_, err = e.svc.DecideDispute(ctx, d.ID, payments.DisputeRejected)
		is.NoErr(err)
		_, err = e.svc.AddDisputeEvidence(ctx, d.ID, []payments.DisputeDocument{{URL: "https://late.example.com"}})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // decided: no more evidence
	})
}

func TestService_AddDisputeEvidence_Limit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	x := fundDisputed(t, e, "order", 1000)
	d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
	is.NoErr(err)
	for i := 0; i < payments.MaxEvidencePerDispute; i += 10 {
		docs := make([]payments.DisputeDocument, 10)
		for j := range docs {
			docs[j].URL = fmt.Sprintf("https://example.com/%d", i+j)
		}
		_, err := e.svc.AddDisputeEvidence(ctx, d.ID, docs)
		is.NoErr(err)
	}
	_, err = e.svc.AddDisputeEvidence(ctx, d.ID, []payments.DisputeDocument{{URL: "https://example.com/more"}})
	is.Equal(payments.ErrorField(err), "documents") // full
	_, err = e.svc.AddDisputeEvidence(ctx, d.ID, []payments.DisputeDocument{{URL: "https://example.com/0"}})
	is.NoErr(err) // one it holds: still fine
}

func TestService_ListDisputes(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		var ids []string
		for i := range 3 {
			x := fundDisputed(t, e, fmt.Sprintf("order-%d", i), 1000)
			d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
			is.NoErr(err)
			ids = append(ids, d.ID)
			e.clock.Advance(time.Hour)
		}
		ds, page, err := e.svc.ListDisputes(ctx, payments.DisputeFilter{})
		is.NoErr(err)
		is.Equal(disputeIDs(ds), []string{ids[2], ids[1], ids[0]}) // newest first
		is.Equal(page, payments.PageInfo{Skip: 0, Limit: payments.DefaultLimit, TotalCount: 3})
		ds, page, err = e.svc.ListDisputes(ctx, payments.DisputeFilter{ListParams: payments.ListParams{Skip: 1, Limit: 1}})
		is.NoErr(err)
		is.Equal(disputeIDs(ds), []string{ids[1]})
		is.True(page.HasNextPage && page.HasPreviousPage)
		ds, _, err = e.svc.ListDisputes(ctx, payments.DisputeFilter{Start: t0.Add(time.Hour), End: t0.Add(time.Hour)})
		is.NoErr(err)
		is.Equal(disputeIDs(ds), []string{ids[1]}) // created in the window, bounds inclusive
		_, _, err = e.svc.ListDisputes(ctx, payments.DisputeFilter{Start: t0.Add(time.Hour), End: t0})
		is.Equal(payments.ErrorField(err), "end")
		_, _, err = e.svc.ListDisputes(ctx, payments.DisputeFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit + 1}})
		is.Equal(payments.ErrorField(err), "limit")
	})
}

func disputeIDs(ds []payments.Dispute) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// TestService_Disputes_OtherCompany: another company can neither see, answer, decide nor
// open a dispute on the first company's Pix, by any id.
func TestService_Disputes_OtherCompany(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		x := fundDisputed(t, e, "order", 1000)
		d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.NoErr(err)
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		for _, id := range []string{d.ID, x.EndToEndID} {
			_, err = other.GetDispute(ctx, id)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			_, err = other.AddDisputeEvidence(ctx, id, []payments.DisputeDocument{{URL: "https://evil.example.com"}})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
			_, err = other.DecideDispute(ctx, id, payments.DisputeAccepted)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		}
		_, err = other.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not its Pix
		ds, _, err := other.ListDisputes(ctx, payments.DisputeFilter{})
		is.NoErr(err)
		is.Equal(len(ds), 0)
		got, err := e.svc.GetDispute(ctx, d.ID)
		is.NoErr(err)
		is.Equal(got, d) // untouched
	})
}

// TestService_CreateDispute_Concurrent: reports of one Pix arriving at once open one
// dispute and block its value once.
func TestService_CreateDispute_Concurrent(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fundDisputed(t, e, "funds", 50000)
		x := fundDisputed(t, e, "order", 10000)
		before := balance(t, e)
		const n = 8
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				d, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
				ids[i], errs[i] = d.ID, err
			})
		}
		wg.Wait()
		for i := range n {
			is.NoErr(errs[i])
			is.Equal(ids[i], ids[0]) // one dispute
		}
		is.Equal(balance(t, e), payments.Balance{Total: before.Total, Blocked: 10000, Available: before.Available - 10000}) // blocked once
		is.Equal(countEvents(t, e.svc, payments.EventDisputeCreated), 1)
		audit(t, e.svc)
	})
}

// TestService_DecideDispute_Concurrent: decisions of one dispute arriving at once return
// the money once.
func TestService_DecideDispute_Concurrent(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fundDisputed(t, e, "funds", 50000)
		x := fundDisputed(t, e, "order", 10000)
		_, err := e.svc.CreateDispute(ctx, payments.CreateDisputeParams{Transaction: x.EndToEndID, Reason: "r"})
		is.NoErr(err)
		before := balance(t, e)
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = e.svc.DecideDispute(ctx, x.EndToEndID, payments.DisputeAccepted)
			})
		}
		wg.Wait()
		for i := range n {
			is.NoErr(errs[i])
		}
		is.Equal(balance(t, e), payments.Balance{Total: before.Total - 10000, Available: before.Available}) // returned once
		rs, _, err := e.svc.ListRefunds(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(rs), 1) // one return
		is.Equal(countEvents(t, e.svc, payments.EventDisputeAccepted), 1)
		audit(t, e.svc)
	})
}

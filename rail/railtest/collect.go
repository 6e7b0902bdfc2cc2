package railtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

func testIssueChargeIdempotent(t *testing.T, h Harness) {
	is := is.New(t)
	c := h.Rail.(rail.Collector)
	first, err := c.IssueCharge(ctx, h.Charge)
	is.NoErr(err)                       // the harness's charge is registered
	is.Equal(first.TxID, h.Charge.TxID) // under its txid
	_, err = brcode.Parse(first.BRCode)
	is.NoErr(err) // with a valid BR Code to show the payer

	again, err := c.IssueCharge(ctx, h.Charge)
	is.NoErr(err)          // issuing the same charge again is no error
	is.Equal(again, first) // and gives the same code

	// The same charge as the Service reads it back from its store: the same instant in
	// another time zone, without a monotonic clock reading.
	same := h.Charge
	same.Expires = same.Expires.In(time.FixedZone("BRT", -3*60*60))
	again, err = c.IssueCharge(ctx, same)
	is.NoErr(err)          // the same expiry instant is the same charge
	is.Equal(again, first) // and gives the same code
}

func testRemoveChargeTwice(t *testing.T, h Harness) {
	is := is.New(t)
	c := h.Rail.(rail.Collector)
	err := c.RemoveCharge(ctx, h.Charge.TxID)
	is.True(errors.Is(err, rail.ErrUnknownCharge)) // a charge never issued is unknown
	_, err = c.IssueCharge(ctx, h.Charge)
	is.NoErr(err)
	is.NoErr(c.RemoveCharge(ctx, h.Charge.TxID)) // an issued charge is removed
	err = c.RemoveCharge(ctx, h.Charge.TxID)
	is.True(errors.Is(err, rail.ErrUnknownCharge)) // removing it again: the bank no longer knows it
}

// listFrom is where the listing tests' windows start; they last listWindow.
var listFrom = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const listWindow = time.Hour

// receivedPix is the n-th Pix a listing test has the bank receive, at at: an endToEndId
// of the network's shape (E, an ISPB, yyyyMMddHHmm, 11 characters), unique by n.
func receivedPix(h Harness, n int, at time.Time) rail.ReceivedPix {
	return rail.ReceivedPix{
		EndToEndID: fmt.Sprintf("E12345678%s%011d", at.UTC().Format("200601021504"), n),
		TxID:       fmt.Sprintf("railtest%d", n),
		Key:        h.Key,
		Value:      int64(100 + n),
		At:         at,
		PayerName:  "Pagador Railtest",
		PayerTaxID: "52998224725",
		Message:    fmt.Sprintf("pix %d", n),
	}
}

// listAll lists the window of q page by page until the last, checking each page's size,
// and calls between (if not nil) after every page that has a next one.
func listAll(t *testing.T, c rail.Collector, q rail.ReceivedQuery, between func()) []rail.ReceivedPix {
	t.Helper()
	is := is.New(t)
	var all []rail.ReceivedPix
	for pages := 0; ; pages++ {
		is.True(pages < 1000) // the cursor moves on: the listing ends
		p, err := c.ListReceived(ctx, q)
		is.NoErr(err) // a page of the window
		if q.Limit > 0 {
			is.True(len(p.Pix) <= q.Limit) // a page holds at most Limit
		}
		all = append(all, p.Pix...)
		if p.Cursor == "" {
			return all
		}
		if between != nil {
			between()
		}
		q.Cursor = p.Cursor
	}
}

// checkListed checks that got lists every Pix of want once, as received, oldest first,
// and nothing else, apart from the Pix of maybe, each of which it lists at most once.
func checkListed(t *testing.T, got, want, maybe []rail.ReceivedPix) {
	t.Helper()
	is := is.New(t)
	count := map[string]int{}
	for _, p := range got {
		count[p.EndToEndID]++
	}
	optional := map[string]bool{}
	for _, p := range maybe {
		optional[p.EndToEndID] = true
		is.True(count[p.EndToEndID] <= 1) // a Pix received while paging is not listed twice
	}
	var last time.Time
	for _, p := range got {
		if optional[p.EndToEndID] {
			continue
		}
		is.True(!p.At.Before(last)) // oldest first
		last = p.At
	}
	byID := map[string]rail.ReceivedPix{}
	for _, p := range got {
		byID[p.EndToEndID] = p
	}
	for _, w := range want {
		is.Equal(count[w.EndToEndID], 1) // every Pix of the window is listed once
		p := byID[w.EndToEndID]
		is.True(p.At.Equal(w.At)) // at the time it was received
		p.At = w.At
		is.Equal(p, w) // as it was received
	}
	n := 0
	for id := range count {
		if !optional[id] {
			n++
		}
	}
	is.Equal(n, len(want)) // nothing outside the window is listed
}

func testListReceivedPages(t *testing.T, h Harness) {
	if h.Receive == nil {
		t.Skip("the harness cannot make the bank receive a Pix")
	}
	is := is.New(t)
	c := h.Rail.(rail.Collector)
	from, to := listFrom, listFrom.Add(listWindow)
	brt := time.FixedZone("BRT", -3*60*60)
	times := []time.Time{
		from.Add(-time.Hour), from.Add(-time.Nanosecond), to, to.Add(time.Nanosecond), to.Add(time.Hour), // outside
		from, from.In(brt), // at the start, which is in
		to.Add(-time.Nanosecond), to.Add(-time.Nanosecond), to.Add(-time.Nanosecond), // at the end, in
	}
	for range 5 {
		times = append(times, from.Add(10*time.Minute)) // five at one instant
	}
	for k := range 10 {
		times = append(times, from.Add(20*time.Minute+time.Duration(k)*3*time.Minute).In(brt))
	}
	var all, want []rail.ReceivedPix
	for n, at := range times {
		p := receivedPix(h, n, at)
		all = append(all, p)
		if !at.Before(from) && at.Before(to) {
			want = append(want, p)
		}
	}
	is.Equal(len(all), 25)  // the Pix of the test
	is.Equal(len(want), 20) // of which these are in the window
	for i := range all {
		h.Receive(t, all[i*7%len(all)]) // received out of time order
	}
	h.Receive(t, all[12]) // and one delivered twice: one Pix

	for _, limit := range []int{4, 1, 7, 0} {
		t.Run(fmt.Sprintf("Limit%d", limit), func(t *testing.T) {
			got := listAll(t, c, rail.ReceivedQuery{From: from, To: to, Limit: limit}, nil)
			checkListed(t, got, want, nil)
		})
	}
}

func testListReceivedWhileReceiving(t *testing.T, h Harness) {
	if h.Receive == nil {
		t.Skip("the harness cannot make the bank receive a Pix")
	}
	c := h.Rail.(rail.Collector)
	from, to := listFrom, listFrom.Add(listWindow)
	var want []rail.ReceivedPix
	for n := range 12 {
		p := receivedPix(h, n, from.Add(time.Duration(n)*4*time.Minute))
		want = append(want, p)
		h.Receive(t, p)
	}
	early := receivedPix(h, 100, from.Add(time.Minute)) // before the cursor once a page is listed
	late := receivedPix(h, 101, to.Add(-time.Minute))   // after it
	pages := 0
	got := listAll(t, c, rail.ReceivedQuery{From: from, To: to, Limit: 4}, func() {
		pages++
		if pages == 1 {
			h.Receive(t, early)
			h.Receive(t, late)
			h.Receive(t, want[0]) // delivered again after it was listed
		}
	})
	checkListed(t, got, append(want, late), []rail.ReceivedPix{early})
}

func testListReceivedEmpty(t *testing.T, h Harness) {
	is := is.New(t)
	c := h.Rail.(rail.Collector)
	from := listFrom.Add(-24 * time.Hour)
	if h.Receive != nil {
		h.Receive(t, receivedPix(h, 1, from.Add(-time.Nanosecond))) // just before the window
		h.Receive(t, receivedPix(h, 2, from.Add(time.Hour)))        // at its end, which is out
	}
	p, err := c.ListReceived(ctx, rail.ReceivedQuery{From: from, To: from.Add(time.Hour), Limit: 4})
	is.NoErr(err)           // a window without Pix
	is.Equal(len(p.Pix), 0) // lists none
	is.Equal(p.Cursor, "")  // on its only page
}

func testCollectorContextDone(t *testing.T, h Harness) {
	c := h.Rail.(rail.Collector)
	for _, want := range []error{context.Canceled, context.DeadlineExceeded} {
		t.Run(fmt.Sprint(want), func(t *testing.T) {
			is := is.New(t)
			done := doneContext(t, want)
			_, err := c.IssueCharge(done, h.Charge)
			is.True(errors.Is(err, want)) // IssueCharge reports the ended context
			err = c.RemoveCharge(done, h.Charge.TxID)
			is.True(errors.Is(err, want)) // RemoveCharge reports the ended context
			_, err = c.ListReceived(done, rail.ReceivedQuery{From: listFrom, To: listFrom.Add(listWindow)})
			is.True(errors.Is(err, want)) // ListReceived reports the ended context
		})
	}
}

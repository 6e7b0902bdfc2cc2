package sandbox

import (
	"context"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// maxTxID is the longest txid a charge may have: the API Pix's 35.
const maxTxID = 35

// defaultPage is how many Pix a page of ListReceived holds when the query sets no limit.
const defaultPage = 100

// IssueCharge registers the charge and returns a static BR Code carrying its key, value
// and txid, built in process (the sandbox serves no payload). A txid has 1 to 35 letters
// and digits, as the API Pix allows; a static code carries at most 25, so a longer txid
// goes into it cut to its first 25 (the part a charge's route is kept under). Issuing a
// txid again with the same charge returns the same code; with another charge it is a
// *rail.InvalidError on "txid".
func (r *Rail) IssueCharge(ctx context.Context, c rail.Charge) (rail.IssuedCharge, error) {
	if err := ctx.Err(); err != nil {
		return rail.IssuedCharge{}, err
	}
	switch {
	case c.TxID == "" || len(c.TxID) > maxTxID || !alphanumeric(c.TxID):
		return rail.IssuedCharge{}, rail.Invalid("txid", "txid must be 1 to 35 letters and digits")
	case c.Value <= 0:
		return rail.IssuedCharge{}, rail.Invalid("value", "value must be a positive number of centavos")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.charges[c.TxID]; ok {
		if !sameCharge(prev.charge, c) {
			return rail.IssuedCharge{}, rail.Invalid("txid", "txid "+c.TxID+" was issued for another charge")
		}
		return rail.IssuedCharge{TxID: c.TxID, BRCode: prev.code}, nil
	}
	code, err := brcode.EncodeStatic(brcode.Static{Key: c.Key, Name: c.MerchantName, City: c.MerchantCity,
		TxID: c.TxID[:min(len(c.TxID), brcode.MaxTxIDLen)], Amount: c.Value, Info: c.Message, TruncateInfo: true})
	if err != nil {
		return rail.IssuedCharge{}, rail.Invalid("charge", err.Error())
	}
	r.charges[c.TxID] = issued{charge: c, code: code}
	return rail.IssuedCharge{TxID: c.TxID, BRCode: code}, nil
}

// alphanumeric reports whether s is ASCII letters and digits only, as a txid is.
func alphanumeric(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune(Alphanumerics, c) {
			return false
		}
	}
	return true
}

// sameCharge reports whether a and b are one charge: equal fields, Expires the same
// instant (whatever its location or monotonic reading, which a charge read back from a
// store does not keep).
func sameCharge(a, b rail.Charge) bool {
	if !a.Expires.Equal(b.Expires) || !reflect.DeepEqual(a.Due, b.Due) {
		return false
	}
	a.Expires, b.Expires = time.Time{}, time.Time{}
	a.Due, b.Due = nil, nil
	return a == b
}

// RemoveCharge forgets an issued charge; an unknown txid is rail.ErrUnknownCharge.
func (r *Rail) RemoveCharge(ctx context.Context, txid string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.charges[txid]; !ok {
		return rail.ErrUnknownCharge
	}
	delete(r.charges, txid)
	return nil
}

// Receive records a Pix the sandbox bank received for the company, as a payer's bank
// would deliver it; ListReceived lists it from then on. The same endToEndId again changes
// nothing. A Pix without an endToEndId, a positive value or a time is a
// *rail.InvalidError.
func (r *Rail) Receive(p rail.ReceivedPix) error {
	switch {
	case p.EndToEndID == "":
		return rail.Invalid("endToEndId", "endToEndId is required")
	case p.Value <= 0:
		return rail.Invalid("value", "value must be a positive number of centavos")
	case p.At.IsZero():
		return rail.Invalid("at", "the Pix has no time")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.received[p.EndToEndID]; !ok {
		p.At = p.At.UTC()
		r.received[p.EndToEndID] = p
	}
	return nil
}

// ListReceived lists the Pix received in the window, oldest first (by time, then
// endToEndId), from just after the cursor: the cursor is the last listed Pix's time and
// endToEndId, so a Pix received meanwhile into an earlier part of the window is not listed
// twice, and none is skipped.
func (r *Rail) ListReceived(ctx context.Context, q rail.ReceivedQuery) (rail.ReceivedPage, error) {
	if err := ctx.Err(); err != nil {
		return rail.ReceivedPage{}, err
	}
	if !q.To.IsZero() && q.To.Before(q.From) {
		return rail.ReceivedPage{}, rail.Invalid("to", "the window ends before it starts")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultPage
	}
	after := ""
	if q.Cursor != "" {
		after = q.Cursor
	}
	r.mu.Lock()
	var all []rail.ReceivedPix
	for _, p := range r.received {
		if p.At.Before(q.From) || (!q.To.IsZero() && !p.At.Before(q.To)) {
			continue
		}
		if after != "" && cursor(p) <= after {
			continue
		}
		all = append(all, p)
	}
	r.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return cursor(all[i]) < cursor(all[j]) })
	page := rail.ReceivedPage{}
	if len(all) > limit {
		all = all[:limit]
		page.Cursor = cursor(all[limit-1])
	}
	page.Pix = all
	return page, nil
}

// cursor is a Pix's place in a listing: its time as fixed-width nanoseconds since 1970
// (bytewise order is time order for the years a Pix can have), then its endToEndId.
func cursor(p rail.ReceivedPix) string {
	n := strconv.FormatInt(p.At.UnixNano(), 10)
	for len(n) < 20 {
		n = "0" + n
	}
	return n + "|" + p.EndToEndID
}

var _ rail.Collector = (*Rail)(nil)
var _ rail.Sandboxed = (*Rail)(nil)

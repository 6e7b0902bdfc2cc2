package payments

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/matryer/is"
)

// A charge's transactionID and paymentLinkID grow with every id made, within one
// millisecond (a stopped clock), past the counter's room, and when the clock goes back;
// they begin with the clock's time while it moves; the UUID stays a valid
// version 7, and the transactionID implies its txid.
func TestIDs_TimeOrdered(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	g := newIDSource(rand.NewChaCha8([32]byte{7}))
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var lastTx, lastLink string
	check := func(now time.Time) *chargeIDs {
		t.Helper()
		ids := g.chargeIDs(now)
		is.True(ids.transactionID > lastTx)   // grows
		is.True(ids.paymentLinkID > lastLink) // grows
		is.True(txidImplied(ids.transactionID))
		u, err := uuid.Parse(ids.paymentLinkID)
		is.NoErr(err)
		is.Equal(u.Version(), uuid.Version(7))
		is.Equal(u.Variant(), uuid.RFC4122)
		lastTx, lastLink = ids.transactionID, ids.paymentLinkID
		return ids
	}
	for range 5000 { // more than uuid7's 4096 per millisecond
		check(at)
	}
	check(at.Add(-time.Hour)) // the clock went back: still growing
	later := at.Add(time.Minute)
	ids := check(later)
	u, _ := uuid.Parse(ids.paymentLinkID)
	sec, nsec := u.Time().UnixTime()
	is.Equal(time.Unix(sec, nsec).UnixMilli(), later.UnixMilli()) // the clock's milliseconds again
	sec, err := strconv.ParseInt(ids.transactionID[:8], 16, 64)
	is.NoErr(err)
	is.Equal(sec, later.Unix()) // the transactionID, the clock's seconds
}

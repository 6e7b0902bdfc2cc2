package payments

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store/memory"
)

// Charges made by a subscription carry its correlationID; subscriptions themselves come
// later, so this test sets the unexported field the way they will.
func TestListCharges_SubscriptionFilter(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, err := New(memory.New(), Options{})
	is.NoErr(err)
	for _, p := range []CreateChargeParams{
		{CorrelationID: "s1", Value: 100, subscription: "sub-a"},
		{CorrelationID: "s2", Value: 100, subscription: "sub-b"},
		{CorrelationID: "s3", Value: 100, subscription: "sub-a"},
		{CorrelationID: "none", Value: 100},
	} {
		_, err := svc.CreateCharge(ctx, p)
		is.NoErr(err)
	}
	cs, page, err := svc.ListCharges(ctx, ChargeFilter{Subscription: "sub-a"})
	is.NoErr(err)
	is.Equal(page.TotalCount, 2) // only sub-a's charges
	is.Equal(cs[0].Subscription, "sub-a")
	_, page, err = svc.ListCharges(ctx, ChargeFilter{Subscription: "sub-a", Status: ChargeActive})
	is.NoErr(err)
	is.Equal(page.TotalCount, 2) // combined with status
	_, _, err = svc.ListCharges(ctx, ChargeFilter{Subscription: "sub-a", Customer: "x"})
	is.Equal(ErrorField(err), "subscription") // one of customer or subscription
}

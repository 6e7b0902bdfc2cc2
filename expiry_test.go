package payments_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// A charge list after the expiry time shows the charge EXPIRED, in every filter, and
// records nothing: the CHARGE_EXPIRED event comes from the periodic pass, once.
func TestService_ListCharges_WritesNothing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "short", Value: 100, ExpiresIn: 900})
		e.clock.Advance(900 * time.Second)
		for _, f := range []payments.ChargeFilter{{}, {Status: payments.ChargeExpired}} {
			cs, page, err := e.svc.ListCharges(ctx, f)
			is.NoErr(err)
			is.Equal(len(cs), 1)                           // listed
			is.Equal(cs[0].Status, payments.ChargeExpired) // as EXPIRED, by the clock
			is.Equal(page.TotalCount, 1)
		}
		cs, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{Status: payments.ChargeActive})
		is.NoErr(err)
		is.Equal(len(cs), 0) // no longer ACTIVE
		is.Equal(page.TotalCount, 0)
		is.Equal(countEvents(t, e.svc, payments.EventChargeExpired), 0) // the lists recorded nothing

		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(countEvents(t, e.svc, payments.EventChargeExpired), 1) // the pass records it
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(countEvents(t, e.svc, payments.EventChargeExpired), 1) // once
		cs, page, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Status: payments.ChargeExpired})
		is.NoErr(err)
		is.Equal(len(cs), 1) // and the list is the same once recorded
		is.Equal(page.TotalCount, 1)
	})
}

// ListCharges with a status filter pages what a read shows, with charges past their expiry
// recorded or not: every page and total agree with the unfiltered list filtered by the
// status each charge shows.
func TestService_ListCharges_StatusByClock(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		customers := []*payments.CreateCustomerParams{
			{Name: "Ana", Email: "ana@example.com", CorrelationID: "ana"},
			{Name: "Bia", Email: "bia@example.com", CorrelationID: "bia"},
			nil,
		}
		const n = 18
		for i := range n {
			c := createCharge(t, e, payments.CreateChargeParams{
				CorrelationID: fmt.Sprintf("c%02d", i), Value: 100,
				ExpiresIn: int64(900 * (1 + i*7%5)), // expiry order differs from creation order
				Customer:  customers[i%3],
			})
			if i%5 == 4 {
				pay(t, e, c) // COMPLETED: in neither list
			}
			e.clock.Advance(time.Minute)
		}
		filters := []payments.ChargeFilter{
			{},
			{Customer: "ana"},
			{Start: t0.Add(4 * time.Minute), End: t0.Add(13 * time.Minute)},
			{Customer: "bia", Start: t0.Add(3 * time.Minute)},
		}
		check := func(when string) {
			for _, f := range filters {
				f.Limit = payments.MaxLimit
				all, _, err := e.svc.ListCharges(ctx, f)
				is.NoErr(err)
				for _, status := range []payments.ChargeStatus{payments.ChargeActive, payments.ChargeExpired} {
					var want []string
					for _, c := range all {
						if c.Status == status {
							want = append(want, c.CorrelationID)
						}
					}
					for _, limit := range []int{1, 3, 100} {
						for skip := 0; skip <= len(want)+1 && (limit < 100 || skip < 2); skip++ {
							g := f
							g.Status, g.Skip, g.Limit = status, skip, limit
							cs, page, err := e.svc.ListCharges(ctx, g)
							is.NoErr(err)
							got := []string{}
							for _, c := range cs {
								is.Equal(c.Status, status) // every charge shows the status filtered
								got = append(got, c.CorrelationID)
							}
							exp := want[min(skip, len(want)):min(skip+limit, len(want))]
							if fmt.Sprint(got) != fmt.Sprint(exp) || page.TotalCount != len(want) {
								t.Fatalf("%s: %+v: got %v of %d, want %v of %d", when, g, got, page.TotalCount, exp, len(want))
							}
						}
					}
				}
			}
		}
		check("none due")
		e.clock.Advance(20 * time.Minute) // the 900 s charges are due, none recorded
		check("some due")
		_, err := e.svc.ExpireCharges(ctx)
		is.NoErr(err)
		e.clock.Advance(30 * time.Minute) // some recorded, more due
		check("some recorded, more due")
		e.clock.Advance(time.Hour) // all due, some recorded
		check("all due")
	})
}

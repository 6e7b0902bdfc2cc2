package payments_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// countEvents counts the company's events named name (without the vendor prefix).
func countEvents(t *testing.T, svc *payments.Service, name string) int {
	t.Helper()
	evs, err := svc.Events(ctx, 0, payments.MaxLimit)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Name == svc.EventName(name) {
			n++
		}
	}
	return n
}

// refundStatus reads a refund's status.
func refundStatus(t *testing.T, svc *payments.Service, id string) payments.RefundStatus {
	t.Helper()
	r, err := svc.GetRefund(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

func TestService_RunDue(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			clock := payments.NewManualClock(t0)
			s := st.open(t)
			t.Cleanup(func() { s.Close() })
			// A rail that settles a minute after sending, so refunds wait for RunDue.
			svc, err := payments.New(s, payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, time.Minute)})
			is.NoErr(err)
			co, err := svc.CreateCompany(ctx, payments.CompanyParams{Name: "Second"})
			is.NoErr(err)
			other, err := svc.Company(ctx, co.ID)
			is.NoErr(err)

			companies := []*payments.Service{svc, other}
			for _, c := range companies {
				e := env{svc: c, clock: clock, store: s}
				x := pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: "paid", Value: 10000}))
				createCharge(t, e, payments.CreateChargeParams{CorrelationID: "short", Value: 100, ExpiresIn: payments.MinChargeExpiresIn})
				r, err := c.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r1", Value: 100})
				is.NoErr(err)
				is.Equal(r.Status, payments.RefundInProcessing) // waiting for the bank
			}

			is.NoErr(svc.RunDue(ctx))
			for _, c := range companies {
				is.Equal(countEvents(t, c, payments.EventChargeExpired), 0)     // nothing has expired yet
				is.Equal(refundStatus(t, c, "r1"), payments.RefundInProcessing) // the bank has not settled
			}

			clock.Advance(payments.MinChargeExpiresIn*time.Second + time.Second)
			is.NoErr(svc.RunDue(ctx))
			for _, c := range companies {
				is.Equal(countEvents(t, c, payments.EventChargeExpired), 1)  // each company's due charge, recorded once
				is.Equal(refundStatus(t, c, "r1"), payments.RefundConfirmed) // each company's refund, settled
				audit(t, c)
			}

			is.NoErr(other.RunDue(ctx)) // again, from another company's Service
			for _, c := range companies {
				is.Equal(countEvents(t, c, payments.EventChargeExpired), 1) // nothing twice
			}
		})
	}
}

// TestService_RunDue_Pages: RunDue reaches every company when there are more than one
// page of them.
func TestService_RunDue_Pages(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	companies := []*payments.Service{e.svc}
	for i := range 120 {
		co, err := e.svc.CreateCompany(ctx, payments.CompanyParams{Name: fmt.Sprintf("Company %d", i)})
		is.NoErr(err)
		c, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		companies = append(companies, c)
	}
	for _, c := range companies {
		_, err := c.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "short", Value: 100, ExpiresIn: payments.MinChargeExpiresIn})
		is.NoErr(err)
	}
	e.clock.Advance(time.Hour)
	is.NoErr(e.svc.RunDue(ctx))
	for _, c := range companies {
		is.Equal(countEvents(t, c, payments.EventChargeExpired), 1) // every company, past the first page
	}
}

package payments_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
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
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			clock := payments.NewManualClock(t0)
			s := st.open(t)
			t.Cleanup(func() { s.Close() })
			// A rail that settles a minute after sending, so refunds wait for RunDue.
			svc, err := payments.New(s, payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, time.Minute)})
			is.NoErr(err)
			co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second"})
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
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	companies := []*payments.Service{e.svc}
	for i := range 120 {
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: fmt.Sprintf("Company %d", i)})
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

// TestService_AdvanceClock: moving the clock three months through AdvanceClock is the
// time passing with the Service running: each month's charge is generated on its period's
// first moment and expires, with its event, dayDue days later, before the next is
// generated; a charge made before the move expires at its own time among them. Moving
// the clock and running one pass, instead, makes every late period's charge at the end
// (TestService_Subscription_Outage).
func TestService_AdvanceClock(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "gym", DayDue: intp(7)}) // from Dec 5
		_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "one-off", Value: 500, ExpiresIn: 30 * 86400})
		is.NoErr(err)
		before, err := e.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)

		now, err := e.svc.AdvanceClock(ctx, e.clock, 90*24*time.Hour) // Nov 22 → Feb 20
		is.NoErr(err)
		is.Equal(now, t0.Add(90*24*time.Hour)) // where it was asked to go
		is.Equal(e.clock.Now(), now)

		brt := time.FixedZone("BRT", -3*3600)
		period := func(y int, m time.Month) time.Time { return time.Date(y, m, 5, 0, 0, 0, 0, brt).UTC() }
		cs := subCharges(t, e.svc, "gym")
		is.Equal(periodDays(cs, "gym"), []string{"2026-12-05", "2027-01-05", "2027-02-05"})
		for i, p := range []time.Time{period(2026, 12), period(2027, 1), period(2027, 2)} {
			is.Equal(cs[i].CreatedAt, p)                    // generated at its period's start
			is.Equal(cs[i].ExpiresDate, p.AddDate(0, 0, 7)) // payable for dayDue days
			is.Equal(cs[i].Status, payments.ChargeExpired)  // all three expired by Feb 20
		}

		evs, err := e.svc.Events(ctx, before[len(before)-1].Seq, payments.MaxLimit)
		is.NoErr(err)
		type step struct {
			name string
			at   time.Time
			corr string
		}
		var got []step
		for _, ev := range evs {
			var d struct {
				Charge struct {
					CorrelationID string `json:"correlationID"`
				} `json:"charge"`
			}
			is.NoErr(json.Unmarshal(ev.Data, &d))
			got = append(got, step{ev.Name, ev.Time, d.Charge.CorrelationID})
		}
		created, expired := e.svc.EventName(payments.EventChargeCreated), e.svc.EventName(payments.EventChargeExpired)
		is.Equal(got, []step{ // in the order the time made them, at their times
			{created, period(2026, 12), "gym:2026-12-05"},
			{expired, period(2026, 12).AddDate(0, 0, 7), "gym:2026-12-05"},
			{expired, t0.Add(30 * 24 * time.Hour), "one-off"},
			{created, period(2027, 1), "gym:2027-01-05"},
			{expired, period(2027, 1).AddDate(0, 0, 7), "gym:2027-01-05"},
			{created, period(2027, 2), "gym:2027-02-05"},
			{expired, period(2027, 2).AddDate(0, 0, 7), "gym:2027-02-05"},
		})

		again, err := e.svc.AdvanceClock(ctx, e.clock, 0)
		is.NoErr(err)
		is.Equal(again, now) // zero moves nothing
		after, err := e.svc.Events(ctx, evs[len(evs)-1].Seq, payments.MaxLimit)
		is.NoErr(err)
		is.Equal(len(after), 0) // and does nothing twice
	})
}

// TestService_AdvanceClock_Refused: a negative move, or one an OffsetClock cannot make,
// is an error naming "advance" and moves nothing; a clock that is not the Service's is an
// error, not a loop.
func TestService_AdvanceClock_Refused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, memory.New())
	createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "gym"})

	_, err := e.svc.AdvanceClock(ctx, e.clock, -time.Second)
	is.Equal(payments.ErrorCode(err), payments.EINVALID)
	is.Equal(payments.ErrorField(err), "advance")
	is.True(!errors.Is(err, payments.ErrDueFailed)) // not a move made
	is.Equal(e.clock.Now(), t0)                     // not moved

	other := payments.NewManualClock(t0)
	_, err = e.svc.AdvanceClock(ctx, other, 60*24*time.Hour)
	is.Equal(payments.ErrorField(err), "clock")                 // refused, naming it
	is.True(strings.Contains(err.Error(), "not the Service's")) // saying why
	is.True(!errors.Is(err, payments.ErrDueFailed))             // not a move made
	is.Equal(len(subCharges(t, e.svc, "gym")), 0)               // nothing generated
	is.Equal(countEvents(t, e.svc, payments.EventChargeCreated), 0)
	elsewhere := payments.NewManualClock(t0.Add(time.Hour)) // another clock at another time
	_, err = e.svc.AdvanceClock(ctx, elsewhere, time.Hour)
	is.Equal(payments.ErrorField(err), "clock")
	is.Equal(elsewhere.Now(), t0.Add(time.Hour)) // told before it moves

	offset := payments.NewOffsetClock(payments.NewManualClock(t0))
	svc, err := payments.New(memory.New(), payments.Options{Clock: offset})
	is.NoErr(err)
	_, err = svc.AdvanceClock(ctx, offset, payments.MaxClockOffset+time.Hour)
	is.Equal(payments.ErrorField(err), "advance") // beyond the furthest offset
	is.Equal(offset.Now(), t0)                    // not moved
	now, err := svc.AdvanceClock(ctx, offset, time.Hour)
	is.NoErr(err)
	is.Equal(now, t0.Add(time.Hour))
}

// TestService_AdvanceClock_Failing: passes that fail do not stop the move: the clock gets
// to the end and the failure is returned; once the store writes again, the next pass
// catches up, each period once.
func TestService_AdvanceClock_Failing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fs := &failingStore{Store: memory.New()}
	e := newEnv(t, fs)
	createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "gym"})
	fs.fail.Store(true) // every write fails

	now, err := e.svc.AdvanceClock(ctx, e.clock, 60*24*time.Hour)
	is.True(errors.Is(err, errCrash))              // the failure, returned
	is.True(errors.Is(err, payments.ErrDueFailed)) // saying the move was made
	is.Equal(now, t0.Add(60*24*time.Hour))         // and the clock at the end
	is.Equal(e.clock.Now(), now)
	is.Equal(len(subCharges(t, e.svc, "gym")), 0) // nothing written

	fs.fail.Store(false)
	_, err = e.svc.AdvanceClock(ctx, e.clock, 0)
	is.NoErr(err)
	is.Equal(periodDays(subCharges(t, e.svc, "gym"), "gym"), []string{"2026-12-05", "2027-01-05"}) // caught up, once each
}

// TestService_AdvanceClock_AtOnce: two moves asked for at once run one after the other
// and add up, as a client that sends two expects.
func TestService_AdvanceClock_AtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, memory.New())
	createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "gym"})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			_, err := e.svc.AdvanceClock(ctx, e.clock, 31*24*time.Hour)
			is.NoErr(err)
		})
	}
	wg.Wait()
	is.Equal(e.clock.Now(), t0.Add(62*24*time.Hour))                                               // both moves
	is.Equal(periodDays(subCharges(t, e.svc, "gym"), "gym"), []string{"2026-12-05", "2027-01-05"}) // each period once
}

// TestService_AdvanceClock_RunningClock: moving a clock that runs (an OffsetClock, as the
// sandbox server's) by d adds exactly d to its offset, however long the move takes:
// here a webhook delivery during the move takes 48 s of wall time. Before, the move ended
// at the time fixed when it started, so the 48 s were taken off: a server whose clock was
// moved stood behind the others on one database and saw their webhook leases run out
// early, sending their events twice.
func TestService_AdvanceClock_RunningClock(t *testing.T) {
	t.Parallel()
	for _, stt := range stores {
		t.Run(stt.name, func(t *testing.T) {
			is := is.New(t)
			st := stt.open(t)
			t.Cleanup(func() { st.Close() })
			wall := payments.NewManualClock(t0)
			clock := payments.NewOffsetClock(wall)
			slow := senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
				if !strings.Contains(string(r.Body), "teste_webhook") {
					wall.Advance(48 * time.Second) // the receiver takes its time
				}
				return payments.WebhookResponse{Status: 200}, nil
			})
			svc := process(t, st, clock, slow)
			createWebhook(t, svc, "https://hooks.example.com/slow", payments.EventChargeCreated)
			newCharge(t, svc, "c1")
			_, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100, ExpiresIn: 1800}) // due work on the way: its expiry
			is.NoErr(err)
			_, err = svc.AdvanceClock(ctx, clock, time.Hour)
			is.NoErr(err)
			is.True(wall.Now().Sub(t0) >= 96*time.Second)    // the deliveries took wall time
			is.Equal(clock.Now().Sub(wall.Now()), time.Hour) // and the clock is still exactly an hour ahead of it
		})
	}
}

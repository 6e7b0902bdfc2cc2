package payments_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
)

func intp(n int) *int { return &n }

var subCustomer = payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725", Email: "ana@example.com"}

func createSubscription(t testing.TB, svc *payments.Service, p payments.CreateSubscriptionParams) payments.Subscription {
	t.Helper()
	if p.Customer == nil {
		c := subCustomer
		p.Customer = &c
	}
	if p.Value == 0 {
		p.Value = 990
	}
	s, err := svc.CreateSubscription(ctx, p)
	if err != nil {
		t.Fatalf("create subscription: %v", err)
	}
	return s
}

// subCharges lists every charge of the subscription, oldest first.
func subCharges(t *testing.T, svc *payments.Service, corr string) []payments.Charge {
	t.Helper()
	cs, page, err := svc.ListCharges(ctx, payments.ChargeFilter{Subscription: corr, ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalCount != len(cs) {
		t.Fatalf("total %d, listed %d", page.TotalCount, len(cs))
	}
	slices.Reverse(cs)
	return cs
}

// periodDays are the period days of the subscription's charges, from their correlationIDs.
func periodDays(cs []payments.Charge, corr string) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.CorrelationID[len(corr)+1:])
	}
	slices.Sort(out)
	return out
}

func TestService_CreateSubscription(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			s := createSubscription(t, e.svc, payments.CreateSubscriptionParams{Comment: "Plano", Name: "Plano Gold", AdditionalInfo: []payments.AdditionalInfo{{Key: "plano", Value: "basic"}}})
			is.True(s.GlobalID != "")                                                 // a globalID
			is.Equal(s.Name, "Plano Gold")                                            // its name
			is.Equal(s.Type, payments.SubscriptionRecurrent)                          // a charge each period
			is.True(s.CorrelationID != "")                                            // generated when absent
			is.Equal(s.DayGenerateCharge, 5)                                          // default day
			is.Equal(s.DayDue, 7)                                                     // default dayDue
			is.Equal(s.Frequency, payments.FrequencyMonthly)                          // default frequency
			is.Equal(s.ChargeType, payments.ChargeDynamic)                            // default charge type
			is.Equal(s.Status, payments.SubscriptionActive)                           // active
			is.True(s.IsActive)                                                       // active
			is.Equal(s.Customer.Name, "Ana")                                          // customer linked
			is.Equal(*s.NextChargeDate, time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)) // Dec 5, 00:00 in Brasília

			g, err := e.svc.GetSubscription(ctx, s.GlobalID)
			is.NoErr(err)
			is.Equal(g.CorrelationID, s.CorrelationID) // by globalID
			g, err = e.svc.GetSubscription(ctx, s.CorrelationID)
			is.NoErr(err)
			is.Equal(g.GlobalID, s.GlobalID) // by correlationID
			g, err = e.svc.GetSubscription(ctx, s.ID)
			is.NoErr(err)
			is.Equal(g.GlobalID, s.GlobalID) // by its ID, as the doc says
			_, err = e.svc.GetSubscription(ctx, "nope")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // unknown id

			s2 := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "sub-2", Frequency: "annually", DayGenerateCharge: intp(22)})
			is.Equal(s2.Frequency, payments.FrequencyAnnual)                            // ANNUALLY spelling accepted
			is.Equal(*s2.NextChargeDate, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)) // the creation day counts
			_, err = e.svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{CorrelationID: "sub-2", Value: 1, Customer: &subCustomer})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // correlationID taken
			is.Equal(payments.ErrorField(err), "correlationID")   // named

			list, page, err := e.svc.ListSubscriptions(ctx, payments.ListParams{Limit: 1})
			is.NoErr(err)
			is.Equal(page.TotalCount, 2)             // both
			is.True(page.HasNextPage)                // paged
			is.Equal(list[0].CorrelationID, "sub-2") // newest first
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			for _, tc := range []struct {
				field string
				p     payments.CreateSubscriptionParams
			}{
				{"dayGenerateCharge", payments.CreateSubscriptionParams{DayGenerateCharge: intp(0)}},
				{"dayGenerateCharge", payments.CreateSubscriptionParams{DayGenerateCharge: intp(32)}},
				{"dayDue", payments.CreateSubscriptionParams{DayDue: intp(2)}},
				{"frequency", payments.CreateSubscriptionParams{Frequency: "DAILY"}},
				{"chargeType", payments.CreateSubscriptionParams{ChargeType: "STATIC"}},
				{"value", payments.CreateSubscriptionParams{Value: -1}},
				{"installmentCount", payments.CreateSubscriptionParams{InstallmentCount: -1}},
				{"correlationID", payments.CreateSubscriptionParams{CorrelationID: strings.Repeat("c", payments.MaxSubscriptionCorrelationID+1)}},
				{"correlationID", payments.CreateSubscriptionParams{CorrelationID: strings.Repeat("c", payments.MaxCorrelationID+1)}}, // the same message either way
				{"installmentCount", payments.CreateSubscriptionParams{InstallmentCount: payments.MaxInstallments + 1}},
				{"name", payments.CreateSubscriptionParams{Name: strings.Repeat("n", payments.MaxSubscriptionName+1)}},
				{"customer.name", payments.CreateSubscriptionParams{Customer: &payments.CreateCustomerParams{TaxID: "52998224725"}}},
				{"customer.taxID", payments.CreateSubscriptionParams{Customer: &payments.CreateCustomerParams{Name: "Ana"}}}, // no taxID, email or phone
			} {
				t.Run(tc.field, func(t *testing.T) {
					is := is.New(t)
					_, before, err := e.svc.ListSubscriptions(ctx, payments.ListParams{})
					is.NoErr(err)
					p := tc.p
					if p.Customer == nil {
						p.Customer = &subCustomer
					}
					if p.Value == 0 {
						p.Value = 100
					}
					_, err = e.svc.CreateSubscription(ctx, p)
					is.Equal(payments.ErrorCode(err), payments.EINVALID) // bad input
					is.Equal(payments.ErrorField(err), tc.field)         // names the field
					_, after, err := e.svc.ListSubscriptions(ctx, payments.ListParams{})
					is.NoErr(err)
					is.Equal(after.TotalCount, before.TotalCount) // nothing created
				})
			}
		})
	})
}

// TestService_Subscription_MonthEnds runs the pass every day for 17 months and checks each
// period's charge is generated on its day, clamped to short months (November 2026 too:
// created on Nov 22, day 31 starts on Nov 30), in common and leap years.
func TestService_Subscription_MonthEnds(t *testing.T) {
	t.Parallel()
	want := map[int][]string{
		31: {"2026-11-30", "2026-12-31", "2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31", "2027-06-30",
			"2027-07-31", "2027-08-31", "2027-09-30", "2027-10-31", "2027-11-30", "2027-12-31", "2028-01-31",
			"2028-02-29", "2028-03-31", "2028-04-30"},
		29: {"2026-11-29", "2026-12-29", "2027-01-29", "2027-02-28", "2027-03-29", "2027-04-29", "2027-05-29",
			"2027-06-29", "2027-07-29", "2027-08-29", "2027-09-29", "2027-10-29", "2027-11-29", "2027-12-29",
			"2028-01-29", "2028-02-29", "2028-03-29", "2028-04-29"},
	}
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for day := range want {
			createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("day-", day), DayGenerateCharge: intp(day)})
		}
		end := time.Date(2028, 5, 1, 0, 0, 0, 0, time.UTC)
		for e.clock.Now().Before(end) {
			is.NoErr(e.svc.RunDue(ctx))
			e.clock.Advance(24 * time.Hour)
		}
		for day, days := range want {
			corr := fmt.Sprint("day-", day)
			cs := subCharges(t, e.svc, corr)
			is.Equal(periodDays(cs, corr), days) // each period once, on its (clamped) day
			for _, c := range cs {
				is.Equal(c.CreatedAt.In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly), c.CorrelationID[len(corr)+1:]) // generated on the period's day
			}
		}
	})
}

// TestService_Subscription_Outage: after 13 months without a pass, one pass generates the
// 13 monthly charges, each once, linked and expiring dayDue days later.
func TestService_Subscription_Outage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		s := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "gym", Value: 9900, DayDue: intp(10), Comment: "Academia"})
		e.clock.Advance(24 * time.Hour)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(subCharges(t, e.svc, "gym")), 0) // nothing before the first period

		e.clock.Set(time.Date(2027, 12, 22, 12, 0, 0, 0, time.UTC))
		is.NoErr(e.svc.RunDue(ctx))
		cs := subCharges(t, e.svc, "gym")
		is.Equal(len(cs), 13) // Dec 5 2026 .. Dec 5 2027
		is.Equal(periodDays(cs, "gym")[0], "2026-12-05")
		is.Equal(periodDays(cs, "gym")[12], "2027-12-05")
		for _, c := range cs {
			is.Equal(c.Subscription, "gym")                                   // linked
			is.Equal(c.Value, int64(9900))                                    // the subscription's value
			is.Equal(c.Comment, "Academia")                                   // and comment
			is.Equal(c.Customer.TaxID.TaxID, "52998224725")                   // and customer
			is.Equal(c.ExpiresDate, e.clock.Now().UTC().Add(10*24*time.Hour)) // dayDue days after generation
			is.Equal(c.Status, payments.ChargeActive)                         // payable
		}
		is.Equal(countEvents(t, e.svc, payments.EventChargeCreated), 13)

		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(subCharges(t, e.svc, "gym")), 13) // a second pass adds nothing
		g, err := e.svc.GetSubscription(ctx, s.GlobalID)
		is.NoErr(err)
		is.Equal(*g.NextChargeDate, time.Date(2028, 1, 5, 3, 0, 0, 0, time.UTC)) // next period

		e.clock.Advance(10 * 24 * time.Hour)
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(countEvents(t, e.svc, payments.EventChargeExpired), 13) // all expired, once
		is.Equal(len(subCharges(t, e.svc, "gym")), 13)                   // Jan 5 is not due yet
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(countEvents(t, e.svc, payments.EventChargeExpired), 13) // nothing twice
	})
}

func TestService_Subscription_Frequencies(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, f := range []string{"WEEKLY", "MONTHLY", "BIMONTHLY", "TRIMONTHLY", "SEMIANNUALY", "SEMIANNUALLY", "ANNUALY"} {
			createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: f, Frequency: f, DayGenerateCharge: intp(22)})
		}
		e.clock.Set(time.Date(2027, 11, 21, 12, 0, 0, 0, time.UTC)) // a day short of a year
		is.NoErr(e.svc.RunDue(ctx))
		for f, n := range map[string]int{"WEEKLY": 53, "MONTHLY": 12, "BIMONTHLY": 6, "TRIMONTHLY": 4, "SEMIANNUALY": 2, "SEMIANNUALLY": 2, "ANNUALY": 1} {
			is.Equal(len(subCharges(t, e.svc, f)), n) // periods started in the year, from the creation day
		}
		w := periodDays(subCharges(t, e.svc, "WEEKLY"), "WEEKLY")
		is.Equal(w[:3], []string{"2026-11-22", "2026-11-29", "2026-12-06"}) // every 7 days from creation
	})
}

func TestService_Subscription_Overdue(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "o", ChargeType: payments.ChargeOverdue, DayDue: intp(5), DayGenerateCharge: intp(22)})
		is.NoErr(e.svc.RunDue(ctx))
		cs := subCharges(t, e.svc, "o")
		is.Equal(len(cs), 1)                                // created on its generation day
		is.Equal(cs[0].Type, payments.ChargeOverdue)        // OVERDUE
		is.Equal(*cs[0].DueDate, t0.Add(4*24*time.Hour))    // due the day before dayDue days
		is.Equal(cs[0].ExpiresDate, t0.Add(5*24*time.Hour)) // and payable through it: it expires dayDue days after it is generated, as the spec has it
		createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "d", DayDue: intp(5), DayGenerateCharge: intp(22)})
		is.NoErr(e.svc.RunDue(ctx))
		d := subCharges(t, e.svc, "d")
		is.Equal(len(d), 1)
		is.Equal(d[0].ExpiresDate.Sub(d[0].CreatedAt), cs[0].ExpiresDate.Sub(cs[0].CreatedAt)) // as long as a DYNAMIC one
	})
}

// TestService_Subscription_LongNameTaken: when an ordinary charge has taken the name of a
// period's charge, the period gets a unique name, and for a subscription whose
// correlationID is as long as allowed the name is cut to fit, instead of being refused on
// every pass and stopping the subscription there for good.
func TestService_Subscription_LongNameTaken(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		corr := strings.Repeat("s", payments.MaxSubscriptionCorrelationID-1) + "ç" // the longest, one character of two bytes
		createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: corr, DayGenerateCharge: intp(5)})
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: corr + ":2026-12-05", Value: 100}) // takes December's name
		_, err := e.svc.AdvanceClock(ctx, e.clock, 75*24*time.Hour)                                      // to 5 February
		is.NoErr(err)
		cs := subCharges(t, e.svc, corr)
		is.Equal(len(cs), 3) // December, January, February
		names := map[string]bool{}
		for _, c := range cs {
			names[c.CorrelationID] = true
			is.True(utf8.RuneCountInString(c.CorrelationID) <= payments.MaxCorrelationID)
		}
		is.True(names[corr+":2027-01-05"] && names[corr+":2027-02-05"]) // the usual names where free
		var december string
		for n := range names {
			if strings.Contains(n, ":2026-12-05:") {
				december = n
			}
		}
		is.True(strings.HasPrefix(december, strings.Repeat("s", 200))) // cut from the subscription's part, keeping the date
		is.Equal(utf8.RuneCountInString(december), payments.MaxCorrelationID)
	})
}

func TestService_CancelSubscription(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		s := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "c", DayGenerateCharge: intp(22)})
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(subCharges(t, e.svc, "c")), 1) // today's period
		c, err := e.svc.CancelSubscription(ctx, s.GlobalID)
		is.NoErr(err)
		is.Equal(c.Status, payments.SubscriptionCanceled) // canceled
		is.True(!c.IsActive)                              // inactive
		is.True(c.NextChargeDate == nil)                  // no next charge
		_, err = e.svc.CancelSubscription(ctx, "c")
		is.NoErr(err) // again: no change
		e.clock.Set(e.clock.Now().AddDate(1, 0, 0))
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(subCharges(t, e.svc, "c")), 1) // nothing generated after cancel
		_, err = e.svc.CancelSubscription(ctx, "nope")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
	})
}

// TestService_Subscription_Installments: a subscription of InstallmentCount charges
// generates that many, one a period, through an outage too, and is then COMPLETED: it
// generates nothing more, has no next charge and no due entry, and cancel leaves it so.
func TestService_Subscription_Installments(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "three", InstallmentCount: 3})
		createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "one", InstallmentCount: 1, DayGenerateCharge: intp(22)})
		is.NoErr(e.svc.RunDue(ctx)) // Nov 22: the creation day is "one"'s first period
		one, err := e.svc.GetSubscription(ctx, "one")
		is.NoErr(err)
		is.Equal(periodDays(subCharges(t, e.svc, "one"), "one"), []string{"2026-11-22"})
		is.Equal(one.Status, payments.SubscriptionCompleted) // its only charge generated
		is.True(!one.IsActive)
		is.True(one.NextChargeDate == nil)

		e.clock.Set(t0.AddDate(0, 1, 0)) // Dec 22: December's period of "three"
		is.NoErr(e.svc.RunDue(ctx))
		three, err := e.svc.GetSubscription(ctx, "three")
		is.NoErr(err)
		is.Equal(three.Status, payments.SubscriptionActive) // one of three
		e.clock.Set(t0.AddDate(2, 0, 0))                    // two years of outage
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(periodDays(subCharges(t, e.svc, "three"), "three"), []string{"2026-12-05", "2027-01-05", "2027-02-05"}) // three, not 24
		three, err = e.svc.GetSubscription(ctx, "three")
		is.NoErr(err)
		is.Equal(three.Status, payments.SubscriptionCompleted)
		is.Equal(three.InstallmentCount, 3)
		c, err := e.svc.CancelSubscription(ctx, "three")
		is.NoErr(err)
		is.Equal(c.Status, payments.SubscriptionCompleted) // cancel changes nothing
		e.clock.Set(t0.AddDate(3, 0, 0))
		_, err = e.svc.AdvanceClock(ctx, e.clock, 400*24*time.Hour)
		is.NoErr(err)
		is.Equal(len(subCharges(t, e.svc, "three")), 3) // nothing more, ever
		is.Equal(len(subCharges(t, e.svc, "one")), 1)
	})
}

// TestService_Subscription_FirstChargeDate: a first charge date starts the first period
// on that day, later periods on its day of the month (or every 7 days); a past date, a bad
// one or a day that disagrees is refused, naming the field.
func TestService_Subscription_FirstChargeDate(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		s := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "feb", FirstChargeDate: time.Date(2027, 2, 14, 0, 0, 0, 0, time.FixedZone("BRT", -3*3600))})
		is.Equal(s.DayGenerateCharge, 14)                                         // its day of the month
		is.Equal(*s.NextChargeDate, time.Date(2027, 2, 14, 3, 0, 0, 0, time.UTC)) // 00:00 in Brasília
		w := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "wk", Frequency: "WEEKLY", FirstChargeDate: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)})
		is.Equal(*w.NextChargeDate, time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)) // the date in Brasília: still Nov 30 there
		e.clock.Set(t0.AddDate(0, 5, 0))
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(periodDays(subCharges(t, e.svc, "feb"), "feb"), []string{"2027-02-14", "2027-03-14", "2027-04-14"})
		is.Equal(len(subCharges(t, e.svc, "wk")), 21) // Nov 30 and every 7 days to Apr 19 (Apr 22 is the clock)

		for _, tc := range []struct {
			p     payments.CreateSubscriptionParams
			field string
		}{
			{payments.CreateSubscriptionParams{FirstChargeDate: time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC)}, "firstChargeDate"}, // past
			{payments.CreateSubscriptionParams{FirstChargeDate: e.clock.Now().Add(-10 * time.Hour)}, "firstChargeDate"},           // today in UTC, yesterday in Brasília
			{payments.CreateSubscriptionParams{FirstChargeDate: time.Date(2040, 1, 1, 12, 0, 0, 0, time.UTC)}, "firstChargeDate"}, // beyond MaxOverdueDays
			{payments.CreateSubscriptionParams{FirstChargeDate: time.Date(2027, 6, 14, 12, 0, 0, 0, time.UTC), DayGenerateCharge: intp(5)}, "dayGenerateCharge"},
			{payments.CreateSubscriptionParams{FirstChargeDate: time.Date(2027, 6, 15, 2, 0, 0, 0, time.UTC), DayGenerateCharge: intp(15)}, "dayGenerateCharge"}, // the 14th in Brasília
		} {
			tc.p.Customer, tc.p.Value = &subCustomer, 100
			_, err := e.svc.CreateSubscription(ctx, tc.p)
			is.Equal(payments.ErrorCode(err), payments.EINVALID)
			is.Equal(payments.ErrorField(err), tc.field)
		}
	})
}

// TestService_RunDue_Overlap runs two passes at once over many due subscriptions.
func TestService_RunDue_Overlap(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		const n = 150
		for i := range n {
			createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i)})
		}
		e.clock.Set(e.clock.Now().AddDate(0, 3, 0)) // Dec 5, Jan 5, Feb 5
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = e.svc.RunDue(ctx) })
		}
		wg.Wait()
		is.NoErr(errs[0])
		is.NoErr(errs[1])
		_, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 3*n) // each period once
		is.Equal(countEvents(t, e.svc, payments.EventChargeCreated), 3*n)
	})
}

// failingStore fails every Update once armed, as a process that dies would stop writing.
type failingStore struct {
	store.Store
	fail  atomic.Bool
	after atomic.Int64 // Updates that still succeed once armed
}

var errCrash = errors.New("crash")

func (s *failingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if s.fail.Load() && s.after.Add(-1) < 0 {
		return errCrash
	}
	return s.Store.Update(ctx, fn)
}

// TestService_RunDue_Crash: a pass that stops half way leaves whole periods, and a later
// pass generates the rest, each once.
func TestService_RunDue_Crash(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			fs := &failingStore{Store: st.open(t)}
			e := newEnv(t, fs)
			const n = 250
			for i := range n {
				createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i)})
			}
			e.clock.Set(e.clock.Now().AddDate(0, 2, 0))
			fs.after.Store(1) // the first page commits, then every write fails
			fs.fail.Store(true)
			is.True(e.svc.RunDue(ctx) != nil) // the pass fails
			_, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 2*100) // the first page's subscriptions, both periods

			fs.fail.Store(false)
			is.NoErr(e.svc.RunDue(ctx))
			_, page, err = e.svc.ListCharges(ctx, payments.ChargeFilter{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 2*n) // the rest, each period once
			for _, i := range []int{0, 99, 100, 249} {
				is.Equal(len(subCharges(t, e.svc, fmt.Sprint("s", i))), 2)
			}
		})
	}
}

// TestService_Subscription_CorrelationIDSpaces: the length limit of a subscription's
// correlationID counts it as kept, spaces at its ends too, so that each period's charge
// (correlationID ":yyyy-mm-dd") fits. Before, 244 characters and five spaces were
// accepted, and every pass then failed to generate its charges.
func TestService_Subscription_CorrelationIDSpaces(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		long := strings.Repeat("s", payments.MaxSubscriptionCorrelationID) + "     "
		_, err := e.svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{CorrelationID: long, Value: 990, Customer: &subCustomer, DayGenerateCharge: intp(22)})
		is.Equal(payments.ErrorField(err), "correlationID") // refused up front
		fits := strings.Repeat("s", payments.MaxSubscriptionCorrelationID-5) + "     "
		_, err = e.svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{CorrelationID: fits, Value: 990, Customer: &subCustomer, DayGenerateCharge: intp(22)})
		is.NoErr(err)
		_, err = e.svc.AdvanceClock(ctx, e.clock, 40*24*time.Hour)
		is.NoErr(err)                                // the due work succeeds
		is.Equal(len(subCharges(t, e.svc, fits)), 2) // Nov 22 and Dec 22
	})
}

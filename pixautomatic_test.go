package payments_test

import (
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// createPixAutomatic creates a monthly PIX_RECURRING subscription whose first period starts
// today (in Brasília), with options o.
func createPixAutomatic(t *testing.T, e env, corr string, o payments.PixRecurringOptions) payments.Subscription {
	t.Helper()
	day := e.clock.Now().In(time.FixedZone("BRT", -3*60*60)).Day()
	return createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: corr, Value: 2500, DayGenerateCharge: intp(day),
		Type: payments.SubscriptionPixRecurring, PixRecurring: &o})
}

// installments lists the subscription's installments, oldest first.
func installments(t *testing.T, svc *payments.Service, id string) []payments.Installment {
	t.Helper()
	ins, page, err := svc.ListInstallments(ctx, id, payments.ListParams{Limit: payments.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalCount != len(ins) {
		t.Fatalf("total %d, listed %d", page.TotalCount, len(ins))
	}
	slices.Reverse(ins)
	return ins
}

// advance moves the clock as the sandbox's clock route does, running the due pass on the
// way.
func advance(t *testing.T, e env, d time.Duration) {
	t.Helper()
	if _, err := e.svc.AdvanceClock(ctx, e.clock, d); err != nil {
		t.Fatal(err)
	}
}

// since returns the names of the events after the first n.
func since(t *testing.T, svc *payments.Service, n int) []string {
	t.Helper()
	return eventNames(t, svc)[n:]
}

func TestService_PixAutomatic_Debit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		s := createPixAutomatic(t, e, "gym", payments.PixRecurringOptions{})
		is.Equal(s.Type, payments.SubscriptionPixRecurring)                        // Pix Automático
		is.Equal(s.PixRecurring.Status, payments.MandateCreated)                   // waiting for the payer
		is.Equal(s.PixRecurring.Journey, payments.JourneyOnlyRecurrency)           // default journey
		is.Equal(s.PixRecurringOptions.RetryPolicy, payments.RetryNotPermitted)    // default policy
		is.Equal(len(s.PixRecurring.RecurrencyID), 29)                             // the Central Bank's idRec
		is.True(len(s.PixRecurring.EMV) > 0 && s.PixRecurring.EMV[:6] == "000201") // a BR Code

		is.NoErr(e.svc.RunDue(ctx))
		ins := installments(t, e.svc, s.GlobalID)
		is.Equal(len(ins), 1)                                    // today's period
		is.Equal(ins[0].Status, payments.InstallmentScheduled)   // not debited:
		is.True(ins[0].Cobr == nil)                              // the mandate is not approved
		is.Equal(ins[0].PaymentSubscriptionGlobalID, s.GlobalID) // its subscription
		is.Equal(ins[0].Expiration, int64(7*86400))              // dayDue in seconds
		is.Equal(balance(t, e), payments.Balance{})              // nothing received

		n := len(eventNames(t, e.svc))
		a, err := e.svc.ApprovePixAutomatic(ctx, s.CorrelationID)
		is.NoErr(err)
		is.Equal(a.PixRecurring.Status, payments.MandateApproved)                  // approved
		is.Equal(since(t, e.svc, n), []string{payments.EventPixAutomaticApproved}) // its event
		again, err := e.svc.ApprovePixAutomatic(ctx, s.CorrelationID)
		is.NoErr(err)
		is.Equal(again.PixRecurring.Status, payments.MandateApproved) // approving again changes nothing
		is.Equal(len(eventNames(t, e.svc)), n+1)                      // and emits nothing

		n = len(eventNames(t, e.svc))
		advance(t, e, 31*24*time.Hour) // past Dec 22
		ins = installments(t, e.svc, s.GlobalID)
		is.Equal(len(ins), 2) // December's
		dec := ins[1]
		is.Equal(dec.InstallmentNumber, 2)                      // the second
		is.Equal(dec.Status, payments.InstallmentCompleted)     // debited without a scan
		is.Equal(dec.Cobr.Status, payments.CobrCompleted)       // its cobr
		is.Equal(len(dec.Cobr.Tries), 1)                        // at the first try
		is.Equal(dec.Cobr.Tries[0].TryStatus, payments.TryPaid) // paid
		is.True(dec.Cobr.EndToEndID != "")                      // by a Pix
		is.Equal(since(t, e.svc, n), []string{
			payments.EventPixAutomaticCobrCreated, payments.EventPixAutomaticCobrApproved,
			"OPENPIX:TRANSACTION_RECEIVED", payments.EventPixAutomaticCobrCompleted,
		}) // each step's event, in order

		x, err := e.svc.GetTransaction(ctx, dec.Cobr.EndToEndID)
		is.NoErr(err)
		is.Equal(x.Value, int64(2500))                             // the installment's value
		is.Equal(balance(t, e).Total, 2500-x.Fee)                  // credited, less the fee
		got, err := e.svc.GetInstallment(ctx, dec.Cobr.EndToEndID) // by the Pix's endToEndId
		is.NoErr(err)
		is.Equal(got.GlobalID, dec.GlobalID) // the same installment
		got, err = e.svc.GetInstallment(ctx, dec.GlobalID)
		is.NoErr(err)
		is.Equal(got.Status, payments.InstallmentCompleted) // by its globalID
		audit(t, e.svc)

		n = len(eventNames(t, e.svc))
		is.NoErr(e.svc.RunDue(ctx))
		is.Equal(len(installments(t, e.svc, s.GlobalID)), 2) // running the pass again generates nothing
		is.Equal(balance(t, e).Total, 2500-x.Fee)            // and debits nothing twice
		is.Equal(len(eventNames(t, e.svc)), n)               // nor emits

		_, err = e.svc.CreateInstallmentCobr(ctx, dec.GlobalID, 0)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a debited installment is not sent again

		// November's, generated before the approval, is sent by hand.
		nov, err := e.svc.CreateInstallmentCobr(ctx, ins[0].GlobalID, 0)
		is.NoErr(err)
		is.Equal(nov.Status, payments.InstallmentCompleted) // debited
		_, err = e.svc.CreateInstallmentCobr(ctx, ins[0].GlobalID, 0)
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // once
		is.Equal(balance(t, e).Total, 2*(2500-x.Fee))             // two installments received
		audit(t, e.svc)
	})
}

func TestService_PixAutomatic_Retries(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("ThreeIn7Days", func(t *testing.T) {
			is := is.New(t)
			s := createPixAutomatic(t, e, "retry", payments.PixRecurringOptions{RetryPolicy: "THREE_RETRIES_7_DAYS"})
			_, err := e.svc.ApprovePixAutomatic(ctx, s.GlobalID)
			is.NoErr(err)
			_, err = e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "")
			is.NoErr(err)
			_, err = e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "AC06")
			is.NoErr(err)
			n := len(eventNames(t, e.svc))
			is.NoErr(e.svc.RunDue(ctx)) // today's installment: refused
			in := installments(t, e.svc, s.GlobalID)[0]
			is.Equal(in.Status, payments.InstallmentScheduled)                     // still to be paid
			is.Equal(in.Cobr.Status, payments.CobrFailedTry)                       // waiting for a retry
			is.Equal(in.Cobr.Tries[0].RejectCode, payments.DefaultDebitRejectCode) // the sandbox's reason
			is.Equal(since(t, e.svc, n), []string{payments.EventPixAutomaticCobrCreated, payments.EventPixAutomaticTryRejected})
			is.Equal(balance(t, e), payments.Balance{}) // nothing received

			advance(t, e, 24*time.Hour) // the first retry, a day later: refused too
			in, err = e.svc.GetInstallment(ctx, in.GlobalID)
			is.NoErr(err)
			is.Equal(len(in.Cobr.Tries), 2)                  // retried
			is.Equal(in.Cobr.Tries[1].RejectCode, "AC06")    // refused
			is.Equal(in.Cobr.Status, payments.CobrFailedTry) // another may follow

			n = len(eventNames(t, e.svc))
			in, err = e.svc.RetryInstallmentCobr(ctx, in.GlobalID, 0) // asked for: paid
			is.NoErr(err)
			is.Equal(in.Status, payments.InstallmentCompleted) // paid at the third try
			is.Equal(len(in.Cobr.Tries), 3)                    // three tries
			is.Equal(since(t, e.svc, n), []string{payments.EventPixAutomaticTryRequested, payments.EventPixAutomaticCobrApproved,
				"OPENPIX:TRANSACTION_RECEIVED", payments.EventPixAutomaticCobrCompleted})
			_, err = e.svc.RetryInstallmentCobr(ctx, in.GlobalID, 0)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // nothing to retry: paid once
			advance(t, e, 7*24*time.Hour)
			in, err = e.svc.GetInstallment(ctx, in.GlobalID)
			is.NoErr(err)
			is.Equal(len(in.Cobr.Tries), 3) // no retry after it was paid
			audit(t, e.svc)
		})
		t.Run("Exhausted", func(t *testing.T) {
			is := is.New(t)
			s := createPixAutomatic(t, e, "broke", payments.PixRecurringOptions{RetryPolicy: "THREE_RETRIES_7_DAYS"})
			_, err := e.svc.ApprovePixAutomatic(ctx, s.GlobalID)
			is.NoErr(err)
			for range 4 {
				_, err = e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "AM04")
				is.NoErr(err)
			}
			before := balance(t, e)
			advance(t, e, 8*24*time.Hour) // the first try and three retries, all refused
			in := installments(t, e.svc, s.GlobalID)[0]
			is.Equal(len(in.Cobr.Tries), 4)                   // a try and three retries
			is.Equal(in.Cobr.Status, payments.CobrRejected)   // refused for good
			is.Equal(in.Cobr.RejectCode, "AM04")              // why
			is.Equal(in.Status, payments.InstallmentCanceled) // failed
			is.Equal(balance(t, e), before)                   // nothing received
			_, err = e.svc.RetryInstallmentCobr(ctx, in.GlobalID, 0)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // no retry left
		})
		t.Run("NotPermitted", func(t *testing.T) {
			is := is.New(t)
			s := createPixAutomatic(t, e, "once", payments.PixRecurringOptions{})
			_, err := e.svc.ApprovePixAutomatic(ctx, s.GlobalID)
			is.NoErr(err)
			_, err = e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "AC05")
			is.NoErr(err)
			n := len(eventNames(t, e.svc))
			is.NoErr(e.svc.RunDue(ctx))
			in := installments(t, e.svc, s.GlobalID)[0]
			is.Equal(in.Cobr.Status, payments.CobrRejected)   // no retry allowed
			is.Equal(in.Status, payments.InstallmentCanceled) // failed at once
			is.Equal(since(t, e.svc, n), []string{payments.EventPixAutomaticCobrCreated, payments.EventPixAutomaticTryRejected, payments.EventPixAutomaticCobrRejected})
			_, err = e.svc.RetryInstallmentCobr(ctx, in.GlobalID, 0)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // NON_PERMITED
		})
	})
}

func TestService_PixAutomatic_Mandate(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("PaymentOnApproval", func(t *testing.T) {
			is := is.New(t)
			s := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "first", Value: 1000, DayGenerateCharge: intp(5),
				Type: payments.SubscriptionPixRecurring, PixRecurring: &payments.PixRecurringOptions{Journey: "PAYMENT_ON_APPROVAL"}})
			n := len(eventNames(t, e.svc))
			a, err := e.svc.ApprovePixAutomatic(ctx, s.GlobalID) // its first period starts Dec 5
			is.NoErr(err)
			is.Equal(since(t, e.svc, n), []string{payments.EventPixAutomaticApproved, "OPENPIX:TRANSACTION_RECEIVED", payments.EventPixAutomaticCobrCompleted})
			ins := installments(t, e.svc, s.GlobalID)
			is.Equal(len(ins), 1)                                                    // the first installment
			is.Equal(ins[0].Status, payments.InstallmentCompleted)                   // paid on approval
			is.Equal(*a.NextChargeDate, time.Date(2027, 1, 5, 3, 0, 0, 0, time.UTC)) // the next is January's
			advance(t, e, 20*24*time.Hour)                                           // past Dec 5
			is.Equal(len(installments(t, e.svc, s.GlobalID)), 1)                     // December's is not charged again
		})
		t.Run("Rejected", func(t *testing.T) {
			is := is.New(t)
			s := createPixAutomatic(t, e, "no", payments.PixRecurringOptions{})
			is.NoErr(e.svc.RunDue(ctx))
			r, err := e.svc.RejectPixAutomatic(ctx, s.GlobalID)
			is.NoErr(err)
			is.Equal(r.PixRecurring.Status, payments.MandateRejected)                            // refused
			is.Equal(r.Status, payments.SubscriptionCanceled)                                    // the subscription ended
			is.Equal(installments(t, e.svc, s.GlobalID)[0].Status, payments.InstallmentCanceled) // and its installment
			_, err = e.svc.ApprovePixAutomatic(ctx, s.GlobalID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // too late to approve
			advance(t, e, 40*24*time.Hour)
			is.Equal(len(installments(t, e.svc, s.GlobalID)), 1) // nothing more generated
		})
		t.Run("Canceled", func(t *testing.T) {
			is := is.New(t)
			s := createPixAutomatic(t, e, "bye", payments.PixRecurringOptions{})
			c, err := e.svc.CancelSubscription(ctx, s.GlobalID)
			is.NoErr(err)
			is.Equal(c.PixRecurring.Status, payments.MandateCanceled) // the mandate with it
			_, err = e.svc.RejectPixAutomatic(ctx, s.GlobalID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // canceled already
			_, err = e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "")
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // nothing to fail
		})
		t.Run("Value", func(t *testing.T) {
			is := is.New(t)
			fixed := createPixAutomatic(t, e, "fixed", payments.PixRecurringOptions{})
			_, err := e.svc.UpdateSubscriptionValue(ctx, fixed.GlobalID, 3000)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a fixed value stays
			plain := createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "plain"})
			_, err = e.svc.UpdateSubscriptionValue(ctx, plain.GlobalID, 3000)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // so does a RECURRENT one's

			v := createPixAutomatic(t, e, "var", payments.PixRecurringOptions{MinimumValue: 1000})
			is.Equal(v.PixRecurringOptions.MinimumValue, int64(1000)) // variable
			_, err = e.svc.UpdateSubscriptionValue(ctx, v.GlobalID, 999)
			is.Equal(payments.ErrorCode(err), payments.EINVALID) // below the minimum
			is.Equal(payments.ErrorField(err), "value")          // named
			u, err := e.svc.UpdateSubscriptionValue(ctx, v.GlobalID, 4000)
			is.NoErr(err)
			is.Equal(u.Value, int64(4000)) // changed
			_, err = e.svc.ApprovePixAutomatic(ctx, v.GlobalID)
			is.NoErr(err)
			is.NoErr(e.svc.RunDue(ctx))
			in := installments(t, e.svc, v.GlobalID)[0]
			is.Equal(in.Value, int64(4000))                    // the next installment takes it
			is.Equal(in.Status, payments.InstallmentCompleted) // and is debited
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			for _, tc := range []struct {
				field string
				p     payments.CreateSubscriptionParams
			}{
				{"type", payments.CreateSubscriptionParams{Type: "IN_INSTALLMENT"}},
				{"pixRecurringOptions.journey", payments.CreateSubscriptionParams{Type: "PIX_RECURRING", PixRecurring: &payments.PixRecurringOptions{Journey: "QR"}}},
				{"pixRecurringOptions.retryPolicy", payments.CreateSubscriptionParams{Type: "PIX_RECURRING", PixRecurring: &payments.PixRecurringOptions{RetryPolicy: "ALWAYS"}}},
				{"pixRecurringOptions.minimumValue", payments.CreateSubscriptionParams{Type: "PIX_RECURRING", PixRecurring: &payments.PixRecurringOptions{MinimumValue: 5000}}},
				{"pixRecurringOptions.minimumValue", payments.CreateSubscriptionParams{Type: "PIX_RECURRING", PixRecurring: &payments.PixRecurringOptions{MinimumValue: -1}}},
				{"pixRecurringOptions", payments.CreateSubscriptionParams{PixRecurring: &payments.PixRecurringOptions{Journey: "ONLY_RECURRENCY"}}},
				{"frequency", payments.CreateSubscriptionParams{Type: "PIX_RECURRING", Frequency: "BIMONTHLY"}},
			} {
				t.Run(tc.field, func(t *testing.T) {
					is := is.New(t)
					tc.p.Value, tc.p.Customer = 2500, &subCustomer
					_, err := e.svc.CreateSubscription(ctx, tc.p)
					is.Equal(payments.ErrorCode(err), payments.EINVALID) // refused
					is.Equal(payments.ErrorField(err), tc.field)         // naming the field
				})
			}
			is := is.New(t)
			s := createPixAutomatic(t, e, "codes", payments.PixRecurringOptions{})
			_, err := e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "no!")
			is.Equal(payments.ErrorField(err), "rejectCode") // a reason is four capitals or digits
			_, err = e.svc.CreateInstallmentCobr(ctx, "nope", 0)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such installment
			_, err = e.svc.ApprovePixAutomatic(ctx, createSubscription(t, e.svc, payments.CreateSubscriptionParams{CorrelationID: "rec"}).GlobalID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a RECURRENT subscription has no mandate
		})
	})
}

// TestService_PixAutomatic_OtherCompany: another company cannot see, approve, fail or
// debit a company's Pix Automático subscription or installments.
func TestService_PixAutomatic_OtherCompany(t *testing.T) {
	t.Parallel()
	e := newEnv(t, memory.New())
	is := is.New(t)
	s := createPixAutomatic(t, e, "mine", payments.PixRecurringOptions{})
	is.NoErr(e.svc.RunDue(ctx))
	in := installments(t, e.svc, s.GlobalID)[0]
	co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Other"})
	is.NoErr(err)
	other, err := e.svc.Company(ctx, co.ID)
	is.NoErr(err)
	_, err = other.GetInstallment(ctx, in.GlobalID)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not theirs
	_, _, err = other.ListInstallments(ctx, s.GlobalID, payments.ListParams{})
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor the subscription
	_, err = other.ApprovePixAutomatic(ctx, s.GlobalID)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot approve it
	_, err = other.FailNextPixAutomaticDebit(ctx, s.GlobalID, "")
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor fail it
	_, err = other.CreateInstallmentCobr(ctx, in.GlobalID, 0)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor debit it
	_, err = other.UpdateSubscriptionValue(ctx, s.GlobalID, 100)
	is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor change it
}

// TestService_PixAutomatic_RealBank: with a bank that is not the sandbox, Pix Automático
// is not offered, and says so.
func TestService_PixAutomatic_RealBank(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.New(memory.New(), payments.Options{Rail: sendOnly{}, Clock: payments.NewManualClock(t0),
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	_, err = svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{Value: 100, Customer: &subCustomer, Type: "PIX_RECURRING"})
	is.Equal(payments.ErrorCode(err), payments.ENOTIMPLEMENTED) // the bank driver speaks no /rec
	s, err := svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{Value: 100, Customer: &subCustomer})
	is.NoErr(err) // RECURRENT still is offered
	_, err = svc.ApprovePixAutomatic(ctx, s.GlobalID)
	is.Equal(payments.ErrorCode(err), payments.ENOTIMPLEMENTED) // nor is the sandbox's payer
}

// The top-level keys of the Pix Automático events (wireKeys): the mandate's carry the
// subscription, the cobr's the installment, as the real API's bodies.
var (
	pixAutomaticSubscriptionKeys = []string{"event", "globalID", "correlationID", "type", "value", "customer", "comment",
		"additionalInfo", "dayGenerateCharge", "frequency", "chargeType", "dayDue", "status", "isActive", "createdAt",
		"updatedAt", "pixRecurring", "pixRecurringOptions"}
	pixAutomaticApprovedKeys    = append([]string{"nextChargeDate"}, pixAutomaticSubscriptionKeys...) // ACTIVE: its next period
	pixAutomaticInstallmentKeys = []string{"event", "globalID", "correlationID", "paymentSubscriptionGlobalID",
		"installmentNumber", "dateGenerateCharge", "expiration", "value", "status", "cobr", "createdAt"}
)

// producePixAutomaticEvents emits every Pix Automático event (produceEveryEvent).
func producePixAutomaticEvents(t *testing.T, e env) {
	t.Helper()
	is := is.New(t)
	retry := createPixAutomatic(t, e, "pa-retry", payments.PixRecurringOptions{RetryPolicy: "THREE_RETRIES_7_DAYS"})
	once := createPixAutomatic(t, e, "pa-once", payments.PixRecurringOptions{})
	for _, s := range []payments.Subscription{retry, once} {
		_, err := e.svc.ApprovePixAutomatic(ctx, s.GlobalID) // APPROVED
		is.NoErr(err)
		_, err = e.svc.FailNextPixAutomaticDebit(ctx, s.GlobalID, "")
		is.NoErr(err)
	}
	is.NoErr(e.svc.RunDue(ctx)) // COBR_CREATED and TRY_REJECTED for both; COBR_REJECTED for once
	in := installments(t, e.svc, retry.GlobalID)[0]
	_, err := e.svc.RetryInstallmentCobr(ctx, in.GlobalID, 0) // TRY_REQUESTED, COBR_APPROVED, COBR_COMPLETED
	is.NoErr(err)
	_, err = e.svc.RejectPixAutomatic(ctx, once.GlobalID) // REJECTED
	is.NoErr(err)
}

package payments

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

// A Pix Automático debit: an installment's cobr sent to the payer's bank, its tries, their
// outcome and the retries the mandate's policy allows (see pixautomatic.go for the rules).

// sendCobr sends the cobr of in for value, and its first try; onApproval is the payment of
// the PAYMENT_ON_APPROVAL journey, which the payer made themselves: it is paid, with no
// cobr events but COMPLETED, and no failure. The caller saves r.
func (t *txn) sendCobr(r *subscriptionRecord, in *installmentRecord, value int64, onApproval bool) error {
	day := t.now.In(brasilia)
	day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, brasilia)
	expiry := day
	if r.Mandate.RetryPolicy == RetryThreeIn7Days {
		expiry = day.AddDate(0, 0, retryDays[len(retryDays)-1])
	}
	in.Value = value
	in.Cobr = &Cobr{
		IdentifierID: strings.ToUpper(t.svc.core.ids.hex32()), RecurrencyID: r.Mandate.RecurrencyID, InstallmentID: in.ID,
		Status: CobrCreated, Value: value, ChargeDate: day.Format(time.DateOnly), ExpiryDate: expiry.Format(time.DateOnly),
		Description: r.Comment, CreatedAt: t.now,
	}
	in.Cobr.Tries = []CobrTry{{TryStatus: TryRequested, FinalityPurpose: "AGND", Value: value, RequestedExecutionDate: t.now, CreatedAt: t.now, UpdatedAt: t.now}}
	if onApproval {
		return t.debitOutcome(r, in, true)
	}
	if err := t.emitInstallment(EventPixAutomaticCobrCreated, *in); err != nil {
		return err
	}
	return t.debitOutcome(r, in, false)
}

// debitOutcome settles the last try of in's cobr as the payer's bank answers it: paid (the
// money credited as a received Pix) or, when the sandbox was told to fail it, refused, and
// then retried later or the cobr REJECTED as the retry policy allows. It saves in.
func (t *txn) debitOutcome(r *subscriptionRecord, in *installmentRecord, onApproval bool) error {
	c := in.Cobr
	try := &c.Tries[len(c.Tries)-1]
	try.UpdatedAt = t.now
	if !onApproval && len(r.Mandate.FailNext) > 0 {
		code := r.Mandate.FailNext[0]
		r.Mandate.FailNext = r.Mandate.FailNext[1:]
		try.TryStatus, try.RejectCode, c.Status = TryRejected, code, CobrFailedTry
		in.NextTry = t.nextTry(r, *in)
		if in.NextTry == nil { // no retry left
			c.Status, c.RejectCode, in.Status = CobrRejected, code, InstallmentCanceled
		}
		if err := t.saveInstallment(*in, false); err != nil {
			return err
		}
		if err := t.emitInstallment(EventPixAutomaticTryRejected, *in); err != nil {
			return err
		}
		if in.NextTry != nil {
			return t.schedule(dueInstallment, in.ID, *in.NextTry, false)
		}
		if err := t.unschedule(dueInstallment, in.ID); err != nil {
			return err
		}
		return t.emitInstallment(EventPixAutomaticCobrRejected, *in)
	}
	try.TryStatus, c.Status, in.Status, in.NextTry = TryScheduled, CobrActive, InstallmentActive, nil
	if !onApproval {
		if err := t.emitInstallment(EventPixAutomaticCobrApproved, *in); err != nil {
			return err
		}
	}
	p := ReceivePixParams{
		EndToEndID: "E" + SandboxISPB + t.now.Format("200601021504") + t.svc.core.ids.alphanumerics(11),
		Value:      in.Value, TxID: c.IdentifierID, InfoPagador: "Pix Automático " + r.CorrelationID,
	}
	if cust := r.Customer; cust != nil {
		p.Payer = &Payer{Name: cust.Name}
		if cust.TaxID != nil {
			p.Payer.TaxID = cust.TaxID.TaxID
		}
	}
	x, err := t.receivePix(p)
	if err != nil {
		return err
	}
	try.TryStatus, c.Status, c.EndToEndID, in.Status = TryPaid, CobrCompleted, x.EndToEndID, InstallmentCompleted
	c.PaymentDate = x.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	if err := t.saveInstallment(*in, false); err != nil {
		return err
	}
	if err := t.unschedule(dueInstallment, in.ID); err != nil {
		return err
	}
	return t.emitInstallment(EventPixAutomaticCobrCompleted, *in)
}

// nextTry is when the next retry of in's cobr runs, or nil when none may: under
// THREE_RETRIES_7_DAYS, retryDays after the cobr's date, while tries are left; never
// before now.
func (t *txn) nextTry(r *subscriptionRecord, in installmentRecord) *time.Time {
	n := len(in.Cobr.Tries)
	if r.Mandate.RetryPolicy != RetryThreeIn7Days || n >= maxCobrTries {
		return nil
	}
	day, err := time.ParseInLocation(time.DateOnly, in.Cobr.ChargeDate, brasilia)
	if err != nil || !t.now.Before(retryEnd(*in.Cobr)) {
		return nil // past the window
	}
	at := day.AddDate(0, 0, retryDays[n-1]).UTC()
	at = maxTime(at, t.now.Add(time.Millisecond))
	return &at
}

// retryEnd is the end of the last day a retry of c may run: 7 days after its date.
func retryEnd(c Cobr) time.Time {
	day, err := time.ParseInLocation(time.DateOnly, c.ChargeDate, brasilia)
	if err != nil {
		return time.Time{}
	}
	return day.AddDate(0, 0, retryDays[len(retryDays)-1]+1)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// retryDue is the due pass's work on an installment's retry: when its cobr is waiting for
// one (FAILED_TRY) and its time has come, the next try runs.
func (t *txn) retryDue(id string) error {
	in, err := t.installmentByID(id)
	if ok, err := found(err); err != nil {
		return err
	} else if !ok || in.Cobr == nil || in.Cobr.Status != CobrFailedTry || in.NextTry == nil {
		return t.unschedule(dueInstallment, id)
	}
	if in.NextTry.After(t.now) {
		return t.schedule(dueInstallment, id, *in.NextTry, false)
	}
	r, err := t.subscriptionByID(in.Subscription)
	if err != nil {
		return err
	}
	if r.Mandate == nil || r.Mandate.Status != MandateApproved {
		return t.unschedule(dueInstallment, id)
	}
	if err := t.retryCobr(&r, &in, in.Cobr.Value); err != nil {
		return err
	}
	return t.saveSubscription(r)
}

// retryCobr runs the next try of in's cobr now, for value. The caller saves r.
func (t *txn) retryCobr(r *subscriptionRecord, in *installmentRecord, value int64) error {
	in.Value, in.Cobr.Value, in.NextTry = value, value, nil
	in.Cobr.Tries = append(in.Cobr.Tries, CobrTry{TryStatus: TryRequested, FinalityPurpose: "AGND", Value: value, RequestedExecutionDate: t.now, CreatedAt: t.now, UpdatedAt: t.now})
	if err := t.emitInstallment(EventPixAutomaticTryRequested, *in); err != nil {
		return err
	}
	return t.debitOutcome(r, in, false)
}

// payFirstInstallment pays the first installment of r, whose mandate was just approved
// with the PAYMENT_ON_APPROVAL journey: generated first when its period has not started.
// It saves r and returns it as saved.
func (t *txn) payFirstInstallment(r subscriptionRecord) (subscriptionRecord, error) {
	if r.Periods == 0 {
		if _, _, err := t.insertInstallment(r, r.periodStart(0)); err != nil {
			return r, err
		}
		r.Periods = 1
		var err error
		if r, err = t.advanceSubscription(r); err != nil {
			return r, err
		}
	}
	var in installmentRecord
	id, err := t.getByKey(collInstallments, "number:"+r.ID+":"+fmt.Sprintf("%08d", 1), "installment", &in)
	if ok, err := found(err); err != nil || !ok {
		return r, err
	}
	in.ID = id
	if in.Status != InstallmentScheduled || in.Cobr != nil {
		return r, nil // sent already
	}
	if err := t.sendCobr(&r, &in, in.Value, true); err != nil {
		return r, err
	}
	return r, t.saveSubscription(r)
}

// advanceSubscription moves r, whose Periods changed, to its next period: COMPLETED when
// it has none, or its due entry at the next period's start. It saves r.
func (t *txn) advanceSubscription(r subscriptionRecord) (subscriptionRecord, error) {
	if r.done() {
		r.Status, r.IsActive, r.NextChargeDate = SubscriptionCompleted, false, nil
		if err := t.saveSubscription(r); err != nil {
			return r, err
		}
		return r, t.unschedule(dueSubscription, r.ID)
	}
	next := r.periodStart(r.Periods).UTC()
	r.NextChargeDate = &next
	if err := t.saveSubscription(r); err != nil {
		return r, err
	}
	return r, t.schedule(dueSubscription, r.ID, next, false)
}

// cancelInstallments cancels the installments of r not paid, and their cobrs: its mandate
// has ended.
func (t *txn) cancelInstallments(r subscriptionRecord) error {
	for {
		ins, _, err := list(t, collInstallments, store.Query{Index: "open:" + r.ID, Limit: MaxLimit, NoTotal: true},
			func(in *installmentRecord, id string) { in.ID = id })
		if err != nil {
			return err
		}
		for _, in := range ins {
			in.Status, in.NextTry = InstallmentCanceled, nil
			if in.Cobr != nil && in.Cobr.Status != CobrCompleted && in.Cobr.Status != CobrRejected {
				in.Cobr.Status = CobrCanceled
			}
			if err := t.saveInstallment(in, false); err != nil {
				return err
			}
			if err := t.unschedule(dueInstallment, in.ID); err != nil {
				return err
			}
		}
		if len(ins) < MaxLimit {
			return nil
		}
	}
}

// cobrTarget finds the installment id and its subscription for a cobr sent or retried by
// hand, with the value it is to be charged (0 means the installment's).
func (t *txn) cobrTarget(id string, value int64) (installmentRecord, subscriptionRecord, int64, error) {
	if !t.svc.Sandbox() {
		return installmentRecord{}, subscriptionRecord{}, 0, errPixAutomaticBank()
	}
	in, err := t.findInstallment(id)
	if err != nil {
		return in, subscriptionRecord{}, 0, err
	}
	r, err := t.subscriptionByID(in.Subscription)
	if err != nil {
		return in, r, 0, err
	}
	if r.Mandate == nil || r.Mandate.Status != MandateApproved {
		status := MandateStatus("none")
		if r.Mandate != nil {
			status = r.Mandate.Status
		}
		return in, r, 0, precondition("id", "the mandate of subscription %s is %s: only an APPROVED mandate is debited", r.CorrelationID, status)
	}
	if value == 0 {
		value = in.Value
	}
	return in, r, value, r.Mandate.checkValue("value", value, r.Value)
}

// CreateInstallmentCobr sends the cobr of the installment id (any id GetInstallment takes)
// now, for value (0 means the installment's): the payer's bank debits it at once, as the
// due pass's. It is for an installment generated before its mandate was approved, which is
// still SCHEDULED without a cobr; any other is EPRECONDITION, so a repeated request never
// debits twice. value follows the mandate: the subscription's value when fixed, at least
// its minimumValue when variable (EINVALID on "value"). Sandbox bank only (ENOTIMPLEMENTED
// otherwise). It returns the installment as the debit left it.
func (s *Service) CreateInstallmentCobr(ctx context.Context, id string, value int64) (Installment, error) {
	var out Installment
	err := s.update(ctx, func(t *txn) error {
		in, r, v, err := t.cobrTarget(id, value)
		if err != nil {
			return err
		}
		if in.Cobr != nil || in.Status != InstallmentScheduled {
			return precondition("id", "installment %d of subscription %s has a cobr already", in.InstallmentNumber, r.CorrelationID)
		}
		if err := t.sendCobr(&r, &in, v, false); err != nil {
			return err
		}
		out = in.Installment
		return t.saveSubscription(r)
	})
	return out, err
}

// RetryInstallmentCobr runs a retry of the refused cobr of the installment id now, for
// value (0 means the cobr's), as the due pass's retries do, using up one of them: only
// under the THREE_RETRIES_7_DAYS policy (the Central Bank's IRNT otherwise), with a retry
// left (QUNT) and within 7 days of the cobr's date (DTNT), all EPRECONDITION. value is as
// for CreateInstallmentCobr. Sandbox bank only. It returns the installment as the retry
// left it.
func (s *Service) RetryInstallmentCobr(ctx context.Context, id string, value int64) (Installment, error) {
	var out Installment
	err := s.update(ctx, func(t *txn) error {
		in, r, v, err := t.cobrTarget(id, value)
		if err != nil {
			return err
		}
		if value == 0 && in.Cobr != nil {
			v = in.Cobr.Value
		}
		switch {
		case r.Mandate.RetryPolicy != RetryThreeIn7Days:
			return precondition("id", "the mandate of subscription %s allows no retry (retryPolicy NON_PERMITED)", r.CorrelationID)
		case in.Cobr == nil || in.Cobr.Status != CobrFailedTry:
			return precondition("id", "installment %d of subscription %s has no refused cobr to retry", in.InstallmentNumber, r.CorrelationID)
		case in.NextTry == nil || len(in.Cobr.Tries) >= maxCobrTries:
			return precondition("id", "installment %d of subscription %s has no retry left (three within 7 days)", in.InstallmentNumber, r.CorrelationID)
		case !t.now.Before(retryEnd(*in.Cobr)):
			return precondition("id", "installment %d of subscription %s is past the 7 days its retries may run in", in.InstallmentNumber, r.CorrelationID)
		}
		if err := t.retryCobr(&r, &in, v); err != nil {
			return err
		}
		out = in.Installment
		return t.saveSubscription(r)
	})
	return out, err
}

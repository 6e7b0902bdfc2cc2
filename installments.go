package payments

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

// An installment is one period of a Pix Automático subscription (see pixautomatic.go), in
// the real API's shape: generated SCHEDULED by the due pass when its period starts, with
// its cobr (the collection request sent to the payer's bank) once one is sent. Its
// globalID is base64("PaymentSubscriptionInstallment:<id>"), as the real API's; it is also
// found by the endToEndId of the Pix that paid it.
const (
	collInstallments = "installments"
	// dueInstallment is the due-queue kind of an installment's next debit retry.
	dueInstallment = "installment"
)

// InstallmentStatus is where an installment stands.
type InstallmentStatus string

// Installment statuses, the real API's.
const (
	InstallmentScheduled InstallmentStatus = "SCHEDULED" // generated; no debit accepted yet
	InstallmentActive    InstallmentStatus = "ACTIVE"    // its cobr was accepted by the payer's bank
	InstallmentCompleted InstallmentStatus = "COMPLETED" // paid
	InstallmentCanceled  InstallmentStatus = "CANCELED"  // its cobr was refused for good, or the mandate ended
)

// CobrStatus is where an installment's collection request stands.
type CobrStatus string

// Cobr statuses, as the real API's webhooks show them.
const (
	CobrCreated   CobrStatus = "CREATED"
	CobrActive    CobrStatus = "ACTIVE"     // accepted by the payer's bank
	CobrCompleted CobrStatus = "COMPLETED"  // debited
	CobrFailedTry CobrStatus = "FAILED_TRY" // the last try was refused; a retry may follow
	CobrRejected  CobrStatus = "REJECTED"   // refused, with no retry left
	CobrCanceled  CobrStatus = "CANCELED"   // the mandate ended first
)

// CobrTryStatus is where one debit attempt stands.
type CobrTryStatus string

// Try statuses.
const (
	TryRequested CobrTryStatus = "REQUESTED"
	TryScheduled CobrTryStatus = "SCHEDULED"
	TryPaid      CobrTryStatus = "PAID"
	TryRejected  CobrTryStatus = "REJECTED"
)

// maxCobrTries is a cobr's first try and the three retries THREE_RETRIES_7_DAYS allows.
const maxCobrTries = 4

// retryDays are the days after a cobr's date its retries run, under THREE_RETRIES_7_DAYS.
var retryDays = [maxCobrTries - 1]int{1, 4, 7}

// Installment is one period's charge of a PIX_RECURRING subscription.
type Installment struct {
	ID       string `json:"-"`
	GlobalID string `json:"globalID"`
	// CorrelationID is the subscription's, as the real API's installments carry it.
	CorrelationID               string `json:"correlationID"`
	PaymentSubscriptionGlobalID string `json:"paymentSubscriptionGlobalID"`
	InstallmentNumber           int    `json:"installmentNumber"` // 1 for the first period
	// DateGenerateCharge is when its period starts, and its debit is due.
	DateGenerateCharge time.Time `json:"dateGenerateCharge"`
	// Expiration is the subscription's dayDue in seconds, as the real API gives it.
	Expiration int64             `json:"expiration"`
	Value      int64             `json:"value"`
	Status     InstallmentStatus `json:"status"`
	Cobr       *Cobr             `json:"cobr"` // null until one is sent
	CreatedAt  time.Time         `json:"createdAt"`
}

// Cobr is an installment's collection request, with every debit attempt.
type Cobr struct {
	IdentifierID  string     `json:"identifierId"` // its txid, the received Pix's too
	RecurrencyID  string     `json:"recurrencyId"`
	InstallmentID string     `json:"installmentId"`
	EndToEndID    string     `json:"endToEndId,omitempty"` // of the Pix that paid it
	RejectCode    string     `json:"rejectCode,omitempty"` // why it was REJECTED
	Status        CobrStatus `json:"status"`
	Value         int64      `json:"value"`
	Tries         []CobrTry  `json:"tries"`
	PaymentDate   string     `json:"paymentDate,omitempty"` // when it was paid
	ChargeDate    string     `json:"chargeDate"`            // the day of its first try, YYYY-MM-DD (Brasília)
	// ExpiryDate is the last day a retry may run: ChargeDate for NON_PERMITED, 7 days
	// after it for THREE_RETRIES_7_DAYS.
	ExpiryDate  string    `json:"expiryDate"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// CobrTry is one debit attempt.
type CobrTry struct {
	TryStatus              CobrTryStatus `json:"tryStatus"`
	FinalityPurpose        string        `json:"finalityPurpose"` // AGND: a scheduled debit
	RejectCode             string        `json:"rejectCode,omitempty"`
	Value                  int64         `json:"value"`
	RequestedExecutionDate time.Time     `json:"requestedExecutionDate"`
	CreatedAt              time.Time     `json:"createdAt"`
	UpdatedAt              time.Time     `json:"updatedAt"`
}

// installmentRecord is an installment as stored: with its subscription's id and when its
// next retry runs.
type installmentRecord struct {
	Installment
	Subscription string     `json:"subscription"`
	NextTry      *time.Time `json:"nextTry,omitempty"`
}

func (in installmentRecord) number() string { return fmt.Sprintf("%08d", in.InstallmentNumber) }

func (in installmentRecord) keys() []string {
	k := []string{"number:" + in.Subscription + ":" + in.number()}
	if in.Cobr != nil && in.Cobr.EndToEndID != "" {
		k = append(k, "endToEndId:"+in.Cobr.EndToEndID)
	}
	return k
}

// open reports whether the installment may still be paid.
func (in installmentRecord) open() bool {
	return in.Status == InstallmentScheduled || in.Status == InstallmentActive
}

func (in installmentRecord) indexes() []store.Index {
	ix := []store.Index{{Name: "subscription:" + in.Subscription, Sort: in.number()}}
	if in.open() {
		ix = append(ix, store.Index{Name: "open:" + in.Subscription, Sort: in.number()})
	}
	return ix
}

func (t *txn) saveInstallment(in installmentRecord, insert bool) error {
	if insert {
		return t.insert(collInstallments, in.ID, "installment", in, in.keys(), in.indexes())
	}
	return t.put(collInstallments, in.ID, "installment", in, in.keys(), in.indexes())
}

// generateInstallment generates the installment of r's period starting at start, the
// next one (r.Periods+1), unless it exists, and sends its cobr when the mandate is
// APPROVED. It leaves r to be saved by the caller.
func (t *txn) generateInstallment(r *subscriptionRecord, start time.Time) error {
	in, created, err := t.insertInstallment(*r, start)
	if err != nil || !created || r.Mandate.Status != MandateApproved {
		return err
	}
	return t.sendCobr(r, &in, in.Value, false)
}

// insertInstallment records the installment of r's period starting at start, the next
// one (r.Periods+1); created is false when it exists already.
func (t *txn) insertInstallment(r subscriptionRecord, start time.Time) (in installmentRecord, created bool, err error) {
	in = installmentRecord{Subscription: r.ID, Installment: Installment{
		ID: t.newID(), CorrelationID: r.CorrelationID, PaymentSubscriptionGlobalID: r.GlobalID,
		InstallmentNumber: r.Periods + 1, DateGenerateCharge: start.UTC(), Expiration: int64(r.DayDue) * 86400,
		Value: r.Value, Status: InstallmentScheduled, CreatedAt: t.now,
	}}
	in.GlobalID = installmentGlobalID(in.ID)
	if err := t.saveInstallment(in, true); err != nil {
		if ErrorCode(err) == ECONFLICT {
			return in, false, nil // generated already
		}
		return in, false, err
	}
	return in, true, nil
}

func installmentGlobalID(id string) string {
	return base64.StdEncoding.EncodeToString([]byte("PaymentSubscriptionInstallment:" + id))
}

// emitInstallment emits a cobr event with the installment as its body, as the real API's.
func (t *txn) emitInstallment(name string, in installmentRecord) error {
	return t.emit(name, in.Installment)
}

func (t *txn) installmentByID(id string) (installmentRecord, error) {
	var in installmentRecord
	err := t.get(collInstallments, id, "installment", &in)
	in.ID = id
	return in, err
}

// findInstallment finds an installment by its globalID, the endToEndId of the Pix that
// paid it, or its ID.
func (t *txn) findInstallment(id string) (installmentRecord, error) {
	if raw, err := base64.StdEncoding.DecodeString(id); err == nil {
		if rid, ok := strings.CutPrefix(string(raw), "PaymentSubscriptionInstallment:"); ok && rid != "" {
			return t.installmentByID(rid)
		}
	}
	var in installmentRecord
	rid, err := t.getByKey(collInstallments, "endToEndId:"+id, "installment", &in)
	if ok, err := found(err); err != nil {
		return in, err
	} else if ok {
		in.ID = rid
		return in, nil
	}
	if in, err := t.installmentByID(id); err == nil {
		return in, nil
	} else if ErrorCode(err) != ENOTFOUND {
		return in, err
	}
	return in, notFound("Installment not found")
}

// GetInstallment returns the installment with the id: its globalID, the endToEndId of the
// Pix that paid it, or its ID.
func (s *Service) GetInstallment(ctx context.Context, id string) (Installment, error) {
	var out Installment
	err := s.view(ctx, func(t *txn) error {
		in, err := t.findInstallment(id)
		out = in.Installment
		return err
	})
	return out, err
}

// ListInstallments returns the installments of the subscription id (any id GetSubscription
// takes), newest first. A subscription that is not PIX_RECURRING has none.
func (s *Service) ListInstallments(ctx context.Context, id string, lp ListParams) ([]Installment, PageInfo, error) {
	p, err := lp.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Installment
	var total int
	err = s.view(ctx, func(t *txn) error {
		r, err := t.findSubscription(id)
		if err != nil {
			return err
		}
		var ins []installmentRecord
		ins, total, err = list(t, collInstallments, p.query("subscription:"+r.ID), func(in *installmentRecord, id string) { in.ID = id })
		out = make([]Installment, len(ins))
		for i, in := range ins {
			out[i] = in.Installment
		}
		return err
	})
	return out, p.info(total), err
}

package payments

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/pixfoundry/payments/brcode"
)

// Pix Automático is the Central Bank's recurring Pix, offered as the real API offers it: a
// subscription of type PIX_RECURRING. On creation it holds a mandate (the Central Bank's
// "rec"), CREATED, with a recurrence BR Code (its emv) for the payer to approve in their
// bank's app. The payer approves it once (APPROVED) or refuses it (REJECTED); canceling the
// subscription cancels it (CANCELED). From then on:
//
//   - Each period (the periods of every subscription, see subscriptions.go) the due pass
//     generates an installment (installments.go), SCHEDULED. When the mandate is APPROVED
//     the pass also sends its collection request (the Central Bank's "cobr") and the payer's
//     bank debits it at once: the money is credited to the company's default account as a
//     received Pix (a transaction, less the fee, through a balanced ledger entry), in the
//     same transaction as the installment's state change. No scan, no payer action.
//   - A debit the payer's bank refuses is retried as the mandate's retryPolicy allows:
//     NON_PERMITED, none (the cobr is REJECTED and its installment CANCELED at once);
//     THREE_RETRIES_7_DAYS, up to three retries within the Central Bank's 7 days after the
//     installment's date, one day after it, four days after it and seven days after it (the
//     real API's "one day after, half way, at the end"); after the third fails, the same.
//     A retry may also be asked for (RetryInstallmentCobr); it uses up one of the three.
//   - An installment generated while the mandate is not APPROVED stays SCHEDULED without a
//     cobr: the company may send it once the mandate is approved (CreateInstallmentCobr).
//     With the PAYMENT_ON_APPROVAL journey the approval pays the first installment, as the
//     payer's QR payment does in the real journey 3.
//   - A mandate REJECTED (the payer withdrew it) or CANCELED ends the subscription:
//     it generates nothing more and its installments not yet paid are CANCELED.
//
// Every step emits its event (PIX_AUTOMATIC_APPROVED, _REJECTED, _COBR_CREATED,
// _COBR_APPROVED, _COBR_COMPLETED, _COBR_TRY_REQUESTED, _COBR_TRY_REJECTED, _COBR_REJECTED)
// in the same transaction: the subscription's body for the mandate's, the installment's
// for the cobr's, as the real API's webhooks carry them.
//
// With a real PSP the mandate's approval and each debit's outcome come from the payer's
// bank through the company's PSP (the API Pix's /rec, /solicrec and /cobr, and their
// callbacks). The bank driver of this version (rail/apipix) does not speak them yet: on a
// Service whose bank is not the sandbox, creating a PIX_RECURRING subscription, sending or
// retrying a cobr and the sandbox's approval, rejection and failure are ENOTIMPLEMENTED. On
// the sandbox bank, ApprovePixAutomatic, RejectPixAutomatic and FailNextPixAutomaticDebit
// play the payer and the payer's bank, so an embedder's tests drive every path in process.

// SubscriptionPixRecurring is the subscription type of Pix Automático.
const SubscriptionPixRecurring = "PIX_RECURRING"

// PixRecurringJourney is how the payer authorizes the mandate (the Central Bank's
// journeys 2 and 3).
type PixRecurringJourney string

// Journeys.
const (
	// JourneyOnlyRecurrency: the payer approves the recurrence alone; the first debit is
	// the first installment's.
	JourneyOnlyRecurrency PixRecurringJourney = "ONLY_RECURRENCY"
	// JourneyPaymentOnApproval: approving pays the first installment at once.
	JourneyPaymentOnApproval PixRecurringJourney = "PAYMENT_ON_APPROVAL"
)

// PixRetryPolicy is whether a refused debit is retried (the Central Bank's
// politicaRetentativa).
type PixRetryPolicy string

// Retry policies, spelled as the real API spells them.
const (
	RetryNotPermitted PixRetryPolicy = "NON_PERMITED"         // NAO_PERMITE
	RetryThreeIn7Days PixRetryPolicy = "THREE_RETRIES_7_DAYS" // PERMITE_3R_7D
)

// MandateStatus is where a Pix Automático mandate stands.
type MandateStatus string

// Mandate statuses (the real API's; the Central Bank's EXPIRED is never reached here: a
// mandate stays CREATED until the payer answers or the subscription is canceled).
const (
	MandateCreated  MandateStatus = "CREATED"
	MandateApproved MandateStatus = "APPROVED"
	MandateRejected MandateStatus = "REJECTED"
	MandateCanceled MandateStatus = "CANCELED"
)

// Pix Automático events. Their real names have no vendor prefix.
const (
	EventPixAutomaticApproved      = "PIX_AUTOMATIC_APPROVED"
	EventPixAutomaticRejected      = "PIX_AUTOMATIC_REJECTED"
	EventPixAutomaticCobrCreated   = "PIX_AUTOMATIC_COBR_CREATED"
	EventPixAutomaticCobrApproved  = "PIX_AUTOMATIC_COBR_APPROVED"
	EventPixAutomaticCobrRejected  = "PIX_AUTOMATIC_COBR_REJECTED"
	EventPixAutomaticCobrCompleted = "PIX_AUTOMATIC_COBR_COMPLETED"
	EventPixAutomaticTryRejected   = "PIX_AUTOMATIC_COBR_TRY_REJECTED"
	EventPixAutomaticTryRequested  = "PIX_AUTOMATIC_COBR_TRY_REQUESTED"
)

// DefaultDebitRejectCode is the reason a debit made to fail in the sandbox is refused with
// when none is given: AM04, insufficient funds.
const DefaultDebitRejectCode = "AM04"

// PixRecurringOptions are the Pix Automático options of a PIX_RECURRING subscription.
type PixRecurringOptions struct {
	// Journey is ONLY_RECURRENCY (default) or PAYMENT_ON_APPROVAL.
	Journey string
	// RetryPolicy is NON_PERMITED (default, as the Central Bank's) or THREE_RETRIES_7_DAYS.
	RetryPolicy string
	// MinimumValue, when above 0, makes the mandate's value variable (the Central Bank's
	// valorMinimoRecebedor): each installment may be charged any value from it up (the
	// payer's bank holds the payer's own maximum), and UpdateSubscriptionValue may change
	// the value of the next ones. 0 fixes every installment at the subscription's value.
	MinimumValue int64
}

// PixRecurring is a subscription's mandate as the real API shows it (pixRecurring).
type PixRecurring struct {
	RecurrencyID string              `json:"recurrencyId"`
	EMV          string              `json:"emv"`
	Journey      PixRecurringJourney `json:"journey"`
	Status       MandateStatus       `json:"status"`
}

// PixRecurringSettings is the mandate as the official document's Subscription schema
// shows it (pixRecurringOptions), with the minimumValue it was created with.
type PixRecurringSettings struct {
	EMV          string              `json:"emv"`
	Status       MandateStatus       `json:"status"`
	RetryPolicy  PixRetryPolicy      `json:"retryPolicy"`
	Journey      PixRecurringJourney `json:"journey"`
	MinimumValue int64               `json:"minimumValue,omitempty"`
}

// mandate is a subscription's mandate as stored.
type mandate struct {
	RecurrencyID string              `json:"recurrencyId"`
	EMV          string              `json:"emv"`
	Journey      PixRecurringJourney `json:"journey"`
	RetryPolicy  PixRetryPolicy      `json:"retryPolicy"`
	MinimumValue int64               `json:"minimumValue,omitempty"`
	Status       MandateStatus       `json:"status"`
	// FailNext are the reasons the next debits are refused with, in order: the sandbox's
	// FailNextPixAutomaticDebit.
	FailNext []string `json:"failNext,omitempty"`
}

// variable reports whether the mandate lets each installment's value vary.
func (m *mandate) variable() bool { return m.MinimumValue > 0 }

// checkValue checks a value an installment is to be charged: the subscription's own for a
// fixed mandate, at least MinimumValue for a variable one.
func (m *mandate) checkValue(field string, v, fixed int64) error {
	if err := checkCentavos(field, v, false); err != nil {
		return err
	}
	if !m.variable() && v != fixed {
		return invalid(field, "the mandate's value is fixed at %d centavos: %s must be that or absent", fixed, field)
	}
	if m.variable() && v < m.MinimumValue {
		return invalid(field, "%s must be at least the mandate's minimumValue, %d centavos", field, m.MinimumValue)
	}
	return nil
}

// errPixAutomaticBank is the answer of the Pix Automático paths on a bank that is not the
// sandbox.
func errPixAutomaticBank() error {
	return &Error{Code: ENOTIMPLEMENTED, Message: "Pix Automático is offered on the sandbox bank only in this version: the bank driver does not speak the API Pix's /rec and /cobr"}
}

// sandboxRecHost is the location the sandbox bank gives its recurrences' payloads: a name
// that resolves nowhere, as the sandbox's money is make-believe.
const sandboxRecHost = "pix.sandbox.example/qr/v2/rec/"

// newMandate builds the mandate of a new PIX_RECURRING subscription r, from o.
func (t *txn) newMandate(r subscriptionRecord, o PixRecurringOptions) (*mandate, error) {
	m := &mandate{Journey: JourneyOnlyRecurrency, RetryPolicy: RetryNotPermitted, Status: MandateCreated}
	switch j := PixRecurringJourney(strings.ToUpper(strings.TrimSpace(o.Journey))); j {
	case "":
	case JourneyOnlyRecurrency, JourneyPaymentOnApproval:
		m.Journey = j
	default:
		return nil, invalid("pixRecurringOptions.journey", "pixRecurringOptions.journey must be ONLY_RECURRENCY or PAYMENT_ON_APPROVAL")
	}
	switch p := PixRetryPolicy(strings.ToUpper(strings.TrimSpace(o.RetryPolicy))); p {
	case "":
	case RetryNotPermitted, RetryThreeIn7Days:
		m.RetryPolicy = p
	default:
		return nil, invalid("pixRecurringOptions.retryPolicy", "pixRecurringOptions.retryPolicy must be NON_PERMITED or THREE_RETRIES_7_DAYS")
	}
	if o.MinimumValue < 0 || o.MinimumValue > r.Value {
		return nil, invalid("pixRecurringOptions.minimumValue", "pixRecurringOptions.minimumValue must be from 0 (a fixed value) to the subscription's value, %d centavos", r.Value)
	}
	m.MinimumValue = o.MinimumValue
	if r.Frequency == FrequencyBimonthly {
		return nil, invalid("frequency", "frequency BIMONTHLY is not one of Pix Automático's (WEEKLY, MONTHLY, QUARTERLY, SEMIANNUALLY, ANNUALLY)")
	}
	m.RecurrencyID = "RN" + SandboxISPB + t.now.In(brasilia).Format("20060102") + t.svc.core.ids.alphanumerics(11)
	co, err := t.loadCompany()
	if err != nil {
		return nil, err
	}
	// The composite code of the real API: the company's key (with the first value when the
	// approval pays it) and the recurrence's location (template 80).
	st := brcode.Static{Key: co.PixKey, Name: co.MerchantName, City: co.MerchantCity}
	if m.Journey == JourneyPaymentOnApproval {
		st.Amount = r.Value
	}
	base, err := brcode.EncodeStatic(st)
	if err != nil {
		return nil, internal(err)
	}
	code, err := brcode.Parse(base)
	if err != nil {
		return nil, internal(err)
	}
	url := sandboxRecHost + m.RecurrencyID
	code.Templates = []brcode.Field{{ID: "80", Value: "0014" + brcode.PixGUI + "25" + twoDigits(len(url)) + url}}
	if m.EMV, err = code.Encode(); err != nil {
		return nil, internal(err)
	}
	return m, nil
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// wire fills the subscription's pixRecurring and pixRecurringOptions from its mandate.
func (m *mandate) wire(s *Subscription) {
	if m == nil {
		return
	}
	s.PixRecurring = &PixRecurring{RecurrencyID: m.RecurrencyID, EMV: m.EMV, Journey: m.Journey, Status: m.Status}
	s.PixRecurringOptions = &PixRecurringSettings{EMV: m.EMV, Status: m.Status, RetryPolicy: m.RetryPolicy, Journey: m.Journey, MinimumValue: m.MinimumValue}
}

// pixAutomatic finds the PIX_RECURRING subscription id for a sandbox step, on the sandbox
// bank only.
func (t *txn) pixAutomatic(id string) (subscriptionRecord, error) {
	if !t.svc.Sandbox() {
		return subscriptionRecord{}, errPixAutomaticBank()
	}
	r, err := t.findSubscription(id)
	if err != nil {
		return r, err
	}
	if r.Mandate == nil {
		return r, precondition("id", "subscription %s is not a Pix Automático (PIX_RECURRING) subscription", r.CorrelationID)
	}
	return r, nil
}

// ApprovePixAutomatic records that the payer approved the mandate of the PIX_RECURRING
// subscription id (any id GetSubscription takes): CREATED becomes APPROVED, with its
// PIX_AUTOMATIC_APPROVED event, and the installments of the periods to come are debited
// when they are generated. With the PAYMENT_ON_APPROVAL journey the first installment is
// paid at once (generated first if its period has not started), with its
// PIX_AUTOMATIC_COBR_COMPLETED. A mandate APPROVED already is returned as it is; a
// REJECTED or CANCELED one cannot be approved (EPRECONDITION). It stands for the payer's
// answer in their bank's app: sandbox bank only (ENOTIMPLEMENTED otherwise; a real PSP
// reports the approval).
func (s *Service) ApprovePixAutomatic(ctx context.Context, id string) (Subscription, error) {
	var sub Subscription
	err := s.update(ctx, func(t *txn) error {
		r, err := t.pixAutomatic(id)
		if err != nil {
			return err
		}
		switch r.Mandate.Status {
		case MandateApproved:
			sub = r.public()
			return nil
		case MandateRejected, MandateCanceled:
			return precondition("id", "the mandate of subscription %s is %s: it can no longer be approved", r.CorrelationID, r.Mandate.Status)
		}
		r.Mandate.Status = MandateApproved
		if err := t.saveSubscription(r); err != nil {
			return err
		}
		r.UpdatedAt = t.now
		if err := t.emit(EventPixAutomaticApproved, r.public()); err != nil {
			return err
		}
		if r.Mandate.Journey == JourneyPaymentOnApproval {
			if r, err = t.payFirstInstallment(r); err != nil {
				return err
			}
		}
		sub = r.public()
		return nil
	})
	return sub, err
}

// RejectPixAutomatic records that the payer refused the mandate of the PIX_RECURRING
// subscription id, or withdrew an approved one: it becomes REJECTED, with its
// PIX_AUTOMATIC_REJECTED event, and the subscription ends as CancelSubscription ends it
// (its unpaid installments CANCELED). A REJECTED mandate is returned as it is; a CANCELED
// one cannot be rejected (EPRECONDITION). Sandbox bank only, as ApprovePixAutomatic.
func (s *Service) RejectPixAutomatic(ctx context.Context, id string) (Subscription, error) {
	var sub Subscription
	err := s.update(ctx, func(t *txn) error {
		r, err := t.pixAutomatic(id)
		if err != nil {
			return err
		}
		switch r.Mandate.Status {
		case MandateRejected:
			sub = r.public()
			return nil
		case MandateCanceled:
			return precondition("id", "the mandate of subscription %s is CANCELED: it can no longer be rejected", r.CorrelationID)
		}
		r.Mandate.Status = MandateRejected
		if r, err = t.endSubscription(r); err != nil {
			return err
		}
		sub = r.public()
		return t.emit(EventPixAutomaticRejected, sub)
	})
	return sub, err
}

// rejectCode is a reason a Pix Automático debit is refused with: an ISO 20022 code, four
// capital letters and digits (AM04, AC06, FBRD...).
var rejectCode = regexp.MustCompile(`^[A-Z0-9]{4}$`)

// FailNextPixAutomaticDebit makes the next debit attempt of the PIX_RECURRING subscription
// id (any id GetSubscription takes) be refused by the payer's bank with code (an ISO 20022
// reason, four capital letters or digits; "" means DefaultDebitRejectCode): an
// installment's first try, a retry, or a cobr sent by hand. Each call adds one: three calls
// fail the next three attempts. Sandbox bank only (ENOTIMPLEMENTED otherwise; a real
// payer's bank says by itself). The subscription must be ACTIVE.
func (s *Service) FailNextPixAutomaticDebit(ctx context.Context, id, code string) (Subscription, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		code = DefaultDebitRejectCode
	}
	if !rejectCode.MatchString(code) {
		return Subscription{}, invalid("rejectCode", "rejectCode must be four capital letters or digits, such as AM04")
	}
	var sub Subscription
	err := s.update(ctx, func(t *txn) error {
		r, err := t.pixAutomatic(id)
		if err != nil {
			return err
		}
		if r.Status != SubscriptionActive {
			return precondition("id", "subscription %s is %s: it debits nothing more", r.CorrelationID, r.Status)
		}
		if len(r.Mandate.FailNext) >= maxFailNext {
			return precondition("id", "subscription %s has %d failures queued already, the most it takes", r.CorrelationID, maxFailNext)
		}
		r.Mandate.FailNext = append(r.Mandate.FailNext, code)
		if err := t.saveSubscription(r); err != nil {
			return err
		}
		r.UpdatedAt = t.now
		sub = r.public()
		return nil
	})
	return sub, err
}

// maxFailNext bounds the failures queued on one subscription.
const maxFailNext = 100

// UpdateSubscriptionValue changes the value the next installments of the PIX_RECURRING
// subscription id are charged, which the official document allows only when the mandate's
// value is variable (created with a minimumValue): value must be at least that minimum.
// Installments generated already keep theirs. Any other subscription, or one no longer
// ACTIVE, is EPRECONDITION; the subscription is returned as changed.
func (s *Service) UpdateSubscriptionValue(ctx context.Context, id string, value int64) (Subscription, error) {
	var sub Subscription
	err := s.update(ctx, func(t *txn) error {
		r, err := t.findSubscription(id)
		if err != nil {
			return err
		}
		if r.Mandate == nil || !r.Mandate.variable() {
			return precondition("value", "the value of subscription %s cannot change: only a Pix Automático subscription with a variable value (a minimumValue) takes a new one", r.CorrelationID)
		}
		if r.Status != SubscriptionActive {
			return precondition("value", "subscription %s is %s: it charges nothing more", r.CorrelationID, r.Status)
		}
		if err := checkCentavos("value", value, false); err != nil {
			return err
		}
		if err := r.Mandate.checkValue("value", value, r.Value); err != nil {
			return err
		}
		r.Value = value
		if err := t.saveSubscription(r); err != nil {
			return err
		}
		r.UpdatedAt = t.now
		sub = r.public()
		return nil
	})
	return sub, err
}

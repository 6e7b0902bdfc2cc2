package payments

import (
	"context"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixfoundry/payments/store"
)

// A subscription generates one charge per period, from the periodic pass (RunDue):
//
//   - Periods start at 00:00 Brasília time (UTC-3; Brazil has kept no daylight saving
//     time since 2019, so a fixed zone is exact) on their generation day.
//   - The first period is the first day on or after the creation day (the creation day
//     counts) whose day of the month is dayGenerateCharge, or the month's last day when
//     the month is shorter. A subscription created on its generation day is charged for
//     that day on the next pass.
//   - MONTHLY, BIMONTHLY, TRIMONTHLY, SEMIANNUALY and ANNUALY repeat every 1, 2, 3, 6 and
//     12 months from the first period's month, always on dayGenerateCharge clamped to the
//     month's last day (31 gives Jan 31, Feb 28 or 29, Mar 31, Apr 30...): the day is
//     never carried from one short month to the next.
//   - WEEKLY ignores dayGenerateCharge: the first period is the creation day, then every
//     7 days.
//   - Each period's charge is generated once, by the first pass at or after its start: it
//     expires dayDue days after it is generated (a DYNAMIC charge by expiresIn; an OVERDUE
//     one is due in dayDue − 1 days and expires at the end of that day, daysAfterDueDate 0).
//     After downtime the pass catches up period by period, and each late charge is still
//     payable for dayDue days from when it is generated. Its correlationID is
//     "<subscription correlationID>:<period day, yyyy-mm-dd>", and its subscription field
//     is the subscription's correlationID (the charge list's subscription filter).
//   - A canceled subscription generates nothing more; its charges stay as they are.
//   - A Pix Automático subscription (PIX_RECURRING) generates an installment each period
//     instead of a charge, debited without a scan once its mandate is approved: see
//     pixautomatic.go.
const collSubscriptions = "subscriptions"

// brasilia is the zone of the periods: UTC-3.
var brasilia = time.FixedZone("BRT", -3*60*60)

// Frequency is how often a subscription charges.
type Frequency string

// Frequencies. Create also accepts SEMIANNUALLY, ANNUALLY and QUARTERLY (the spellings of
// the official document) and stores them as these.
const (
	FrequencyWeekly     Frequency = "WEEKLY"
	FrequencyMonthly    Frequency = "MONTHLY"
	FrequencyBimonthly  Frequency = "BIMONTHLY"
	FrequencyTrimonthly Frequency = "TRIMONTHLY"
	FrequencySemiannual Frequency = "SEMIANNUALY"
	FrequencyAnnual     Frequency = "ANNUALY"
)

// months is the number of months between periods; 0 for WEEKLY.
func (f Frequency) months() int {
	switch f {
	case FrequencyMonthly:
		return 1
	case FrequencyBimonthly:
		return 2
	case FrequencyTrimonthly:
		return 3
	case FrequencySemiannual:
		return 6
	case FrequencyAnnual:
		return 12
	}
	return 0
}

func parseFrequency(s string) (Frequency, error) {
	switch f := Frequency(strings.ToUpper(strings.TrimSpace(s))); f {
	case "":
		return FrequencyMonthly, nil
	case "SEMIANNUALLY":
		return FrequencySemiannual, nil
	case "ANNUALLY":
		return FrequencyAnnual, nil
	case "QUARTERLY":
		return FrequencyTrimonthly, nil
	case FrequencyWeekly, FrequencyMonthly, FrequencyBimonthly, FrequencyTrimonthly, FrequencySemiannual, FrequencyAnnual:
		return f, nil
	}
	return "", invalid("frequency", "frequency must be WEEKLY, MONTHLY, BIMONTHLY, TRIMONTHLY, SEMIANNUALY or ANNUALY")
}

// SubscriptionStatus is where a subscription stands.
type SubscriptionStatus string

// Subscription statuses.
const (
	SubscriptionActive   SubscriptionStatus = "ACTIVE"
	SubscriptionCanceled SubscriptionStatus = "CANCELED"
	// SubscriptionCompleted: every one of its InstallmentCount charges has been generated.
	SubscriptionCompleted SubscriptionStatus = "COMPLETED"
)

// SubscriptionRecurrent is the subscription type that generates a charge each period
// (RECURRENT), the default; SubscriptionPixRecurring is Pix Automático's.
const SubscriptionRecurrent = "RECURRENT"

// Subscription limits and defaults.
const (
	DefaultDayGenerateCharge = 5
	DefaultDayDue            = 7
	MinDayDue                = 3
	MaxDayDue                = MaxOverdueDays
	// MaxSubscriptionCorrelationID leaves room for the ":yyyy-mm-dd" of its charges'
	// correlationIDs.
	MaxSubscriptionCorrelationID = MaxCorrelationID - 11
	// MaxSubscriptionName bounds a subscription's name.
	MaxSubscriptionName = 200
	// MaxInstallments bounds InstallmentCount: a hundred years of months.
	MaxInstallments = 1200
)

// Subscription charges a customer the same value every period (see the rules above).
type Subscription struct {
	ID                string           `json:"-"`
	GlobalID          string           `json:"globalID"`
	CorrelationID     string           `json:"correlationID"`
	Name              string           `json:"name,omitempty"`
	Type              string           `json:"type"` // SubscriptionRecurrent or SubscriptionPixRecurring
	Value             int64            `json:"value"`
	Customer          *Customer        `json:"customer"`
	Comment           string           `json:"comment"`
	AdditionalInfo    []AdditionalInfo `json:"additionalInfo"`
	DayGenerateCharge int              `json:"dayGenerateCharge"`
	Frequency         Frequency        `json:"frequency"`
	ChargeType        ChargeType       `json:"chargeType"`
	DayDue            int              `json:"dayDue"`
	// InstallmentCount is how many charges it generates in all, one a period; 0 means one
	// a period until canceled. Once the last is generated it is COMPLETED.
	InstallmentCount int                `json:"installmentCount,omitempty"`
	Status           SubscriptionStatus `json:"status"`
	IsActive         bool               `json:"isActive"`
	// NextChargeDate is when the next period starts (its charge is generated by the first
	// pass from then on); absent once canceled.
	NextChargeDate *time.Time `json:"nextChargeDate,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	// PixRecurring is the mandate of a PIX_RECURRING subscription, as the real API shows
	// it; PixRecurringOptions is the same as the official document's schema shows it.
	// Both are absent for a RECURRENT one.
	PixRecurring        *PixRecurring         `json:"pixRecurring,omitempty"`
	PixRecurringOptions *PixRecurringSettings `json:"pixRecurringOptions,omitempty"`
}

// subscriptionRecord is a subscription as stored: with the start of its first period and
// the number of periods generated, from which every next period is computed.
type subscriptionRecord struct {
	Subscription
	First   time.Time `json:"first"`
	Periods int       `json:"periods"`
	Mandate *mandate  `json:"mandate,omitempty"` // PIX_RECURRING only
}

// periodStart is the start of period k (0 is the first).
func (r subscriptionRecord) periodStart(k int) time.Time {
	first := r.First.In(brasilia)
	m := r.Frequency.months()
	if m == 0 {
		return first.AddDate(0, 0, 7*k)
	}
	return monthDay(first.Year(), first.Month()+time.Month(k*m), r.DayGenerateCharge)
}

// monthDay is 00:00 Brasília time of day d of the month (month may overflow the year),
// clamped to the month's last day.
func monthDay(year int, month time.Month, d int) time.Time {
	start := time.Date(year, month, 1, 0, 0, 0, 0, brasilia)
	last := start.AddDate(0, 1, -1).Day()
	return start.AddDate(0, 0, min(d, last)-1)
}

// firstPeriod is the start of the first period of a subscription created at now.
func firstPeriod(now time.Time, f Frequency, day int) time.Time {
	local := now.In(brasilia)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, brasilia)
	if f.months() == 0 {
		return today
	}
	if d := monthDay(local.Year(), local.Month(), day); !d.Before(today) {
		return d
	}
	return monthDay(local.Year(), local.Month()+1, day)
}

// firstChargeDay is 00:00 Brasília time of the day at falls on in Brasília, which must be
// today or later (in Brasília) and at most MaxOverdueDays ahead.
func firstChargeDay(now, at time.Time) (time.Time, error) {
	at = at.In(brasilia)
	d := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, brasilia)
	local := now.In(brasilia)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, brasilia)
	if d.Before(today) || d.After(today.AddDate(0, 0, MaxOverdueDays)) {
		return time.Time{}, invalid("firstChargeDate", "firstChargeDate must be from today (%s) to %d days ahead", today.Format(time.DateOnly), MaxOverdueDays)
	}
	return d, nil
}

// CreateSubscriptionParams create a subscription. Customer and Value are required.
type CreateSubscriptionParams struct {
	// CorrelationID is unique in the company; generated when empty (the Node SDK sends
	// none). At most MaxSubscriptionCorrelationID characters.
	CorrelationID string
	Value         int64 // centavos, > 0
	// Customer is created, or linked when one with the same correlationID or tax ID
	// exists, as a charge's. It needs a name and a tax ID, e-mail or phone.
	Customer       *CreateCustomerParams
	Comment        string
	AdditionalInfo []AdditionalInfo
	// DayGenerateCharge is the day of the month periods start, 1 to 31; nil means 5.
	DayGenerateCharge *int
	// FirstChargeDate, when not the zero time, gives the day the first period starts: the
	// date it falls on in Brasília time (UTC-3, the zone of every subscription day), so
	// 2027-02-14T12:00:00Z is 14 February and 2027-02-14T02:00:00Z is 13 February. That
	// day is today (in Brasília) or later, at most MaxOverdueDays ahead; the time of day
	// does not count. Zero means the first day on or after today with
	// DayGenerateCharge. Monthly periods then fall on its day of the month (which
	// DayGenerateCharge, if given, must agree with), weekly ones every 7 days from it. The
	// wire's dayGenerateCharge given as a date sets it.
	FirstChargeDate time.Time
	// Frequency is empty (MONTHLY) or one of the Frequency values, or SEMIANNUALLY or
	// ANNUALLY; case does not matter.
	Frequency string
	// ChargeType of the generated charges: DYNAMIC (default) or OVERDUE.
	ChargeType ChargeType
	// DayDue is how many days a generated charge can be paid: at least 3; nil means 7.
	DayDue *int
	// Name names the subscription (at most MaxSubscriptionName characters); optional.
	Name string
	// InstallmentCount is how many charges it generates in all (1 to MaxInstallments); 0
	// means one a period until canceled.
	InstallmentCount int
	// Type is RECURRENT (or empty) or PIX_RECURRING (Pix Automático, on the sandbox bank
	// only: see pixautomatic.go). A PIX_RECURRING subscription ignores ChargeType and
	// takes every Frequency but BIMONTHLY, as the Central Bank's.
	Type string
	// PixRecurring are the Pix Automático options; only with Type PIX_RECURRING (nil
	// means the defaults).
	PixRecurring *PixRecurringOptions
}

// CreateSubscription creates an ACTIVE subscription. Its first charge is generated by the
// first pass (RunDue) on or after its first period starts.
func (s *Service) CreateSubscription(ctx context.Context, p CreateSubscriptionParams) (Subscription, error) {
	var sub Subscription
	err := s.update(ctx, func(t *txn) error {
		r, err := t.buildSubscription(p)
		if err != nil {
			return err
		}
		if err := t.insert(collSubscriptions, r.ID, "subscription", r, r.keys(), r.indexes()); err != nil {
			if ErrorCode(err) == ECONFLICT {
				return conflict("correlationID", "a subscription with correlationID %q already exists", r.CorrelationID)
			}
			return err
		}
		if err := t.schedule(dueSubscription, r.ID, *r.NextChargeDate, true); err != nil {
			return err
		}
		sub = r.public()
		return nil
	})
	return sub, err
}

func (t *txn) buildSubscription(p CreateSubscriptionParams) (subscriptionRecord, error) {
	var r subscriptionRecord
	if utf8.RuneCountInString(p.CorrelationID) > MaxSubscriptionCorrelationID { // as kept (spaces too), before the general limit, which is higher
		return r, invalid("correlationID", "correlationID must have at most %d characters", MaxSubscriptionCorrelationID)
	}
	corr, err := cleanCorrelationID("correlationID", p.CorrelationID, false)
	if err != nil {
		return r, err
	}
	if corr == "" {
		corr = t.svc.core.ids.uuid()
	}
	if p.Value <= 0 || p.Value > MaxChargeValue {
		return r, invalid("value", "value must be a positive number of centavos up to %d", int64(MaxChargeValue))
	}
	if p.Customer == nil {
		return r, invalid("customer", "customer is required")
	}
	day := DefaultDayGenerateCharge
	if p.DayGenerateCharge != nil {
		day = *p.DayGenerateCharge
	}
	if day < 1 || day > 31 {
		return r, invalid("dayGenerateCharge", "dayGenerateCharge must be between 1 and 31")
	}
	dayDue := DefaultDayDue
	if p.DayDue != nil {
		dayDue = *p.DayDue
	}
	if dayDue < MinDayDue || dayDue > MaxDayDue {
		return r, invalid("dayDue", "dayDue must be between %d and %d days", MinDayDue, MaxDayDue)
	}
	freq, err := parseFrequency(p.Frequency)
	if err != nil {
		return r, err
	}
	ct := p.ChargeType
	switch ct {
	case "":
		ct = ChargeDynamic
	case ChargeDynamic, ChargeOverdue:
	default:
		return r, invalid("chargeType", "chargeType must be DYNAMIC or OVERDUE")
	}
	typ := strings.ToUpper(strings.TrimSpace(p.Type))
	switch typ {
	case "":
		typ = SubscriptionRecurrent
	case SubscriptionRecurrent:
	case SubscriptionPixRecurring:
		if !t.svc.Sandbox() {
			return r, errPixAutomaticBank()
		}
		ct = ChargeDynamic // not used: installments are debited, not charged
	default:
		return r, invalid("type", "type must be RECURRENT or PIX_RECURRING")
	}
	if typ != SubscriptionPixRecurring && p.PixRecurring != nil && *p.PixRecurring != (PixRecurringOptions{}) {
		return r, invalid("pixRecurringOptions", "pixRecurringOptions is for type PIX_RECURRING only")
	}
	if p.InstallmentCount < 0 || p.InstallmentCount > MaxInstallments {
		return r, invalid("installmentCount", "installmentCount must be between 1 and %d, or 0 for one charge a period until canceled", MaxInstallments)
	}
	r.Subscription = Subscription{
		CorrelationID: corr, Type: typ, Value: p.Value, DayGenerateCharge: day, Frequency: freq, ChargeType: ct,
		DayDue: dayDue, InstallmentCount: p.InstallmentCount, Status: SubscriptionActive, IsActive: true, CreatedAt: t.now, UpdatedAt: t.now,
	}
	if r.Name, err = cleanString("name", p.Name, MaxSubscriptionName); err != nil {
		return r, err
	}
	if r.Comment, err = cleanString("comment", p.Comment, MaxComment); err != nil {
		return r, err
	}
	if r.AdditionalInfo, err = cleanAdditionalInfo(p.AdditionalInfo); err != nil {
		return r, err
	}
	cust, err := t.linkCustomer(*p.Customer)
	if err != nil {
		return r, err
	}
	r.Customer = &cust
	r.ID = t.newID()
	r.GlobalID = base64.StdEncoding.EncodeToString([]byte("Subscription:" + r.ID))
	r.First = firstPeriod(t.now, freq, day).UTC()
	if !p.FirstChargeDate.IsZero() {
		first, err := firstChargeDay(t.now, p.FirstChargeDate)
		if err != nil {
			return r, err
		}
		if p.DayGenerateCharge != nil && *p.DayGenerateCharge != first.Day() {
			return r, invalid("dayGenerateCharge", "dayGenerateCharge %d is not the day of firstChargeDate %s (in Brasília)", *p.DayGenerateCharge, first.Format(time.DateOnly))
		}
		r.DayGenerateCharge, r.First = first.Day(), first.UTC()
	}
	next := r.First
	r.NextChargeDate = &next
	if typ == SubscriptionPixRecurring {
		var o PixRecurringOptions
		if p.PixRecurring != nil {
			o = *p.PixRecurring
		}
		if r.Mandate, err = t.newMandate(r, o); err != nil {
			return r, err
		}
	}
	return r, nil
}

// public is the subscription as callers see it (records written before Type have none).
func (r subscriptionRecord) public() Subscription {
	s := r.Subscription
	if s.Type == "" {
		s.Type = SubscriptionRecurrent
	}
	r.Mandate.wire(&s)
	return s
}

// done reports whether every installment has been generated.
func (r subscriptionRecord) done() bool {
	return r.InstallmentCount > 0 && r.Periods >= r.InstallmentCount
}

func (r subscriptionRecord) keys() []string { return []string{correlationKey(r.CorrelationID)} }

func (r subscriptionRecord) indexes() []store.Index { return []store.Index{byCreation(r.CreatedAt)} }

// GetSubscription returns the subscription with the id, its globalID or correlationID.
func (s *Service) GetSubscription(ctx context.Context, id string) (Subscription, error) {
	var sub Subscription
	err := s.view(ctx, func(t *txn) error {
		r, err := t.findSubscription(id)
		sub = r.public()
		return err
	})
	return sub, err
}

func (t *txn) findSubscription(id string) (subscriptionRecord, error) {
	var r subscriptionRecord
	rid, err := t.getByKey(collSubscriptions, correlationKey(id), "subscription", &r)
	if ok, err := found(err); err != nil {
		return r, err
	} else if ok {
		r.ID = rid
		return r, nil
	}
	if raw, err := base64.StdEncoding.DecodeString(id); err == nil {
		if rid, ok := strings.CutPrefix(string(raw), "Subscription:"); ok && rid != "" {
			return t.subscriptionByID(rid)
		}
	}
	if r, err := t.subscriptionByID(id); err == nil { // its ID (Subscription.ID)
		return r, nil
	} else if ErrorCode(err) != ENOTFOUND {
		return r, err
	}
	return r, notFound("Subscription not found")
}

func (t *txn) subscriptionByID(id string) (subscriptionRecord, error) {
	var r subscriptionRecord
	err := t.get(collSubscriptions, id, "subscription", &r)
	r.ID = id
	return r, err
}

func (t *txn) saveSubscription(r subscriptionRecord) error {
	r.UpdatedAt = t.now
	return t.put(collSubscriptions, r.ID, "subscription", r, r.keys(), r.indexes())
}

// ListSubscriptions returns the company's subscriptions, newest first.
func (s *Service) ListSubscriptions(ctx context.Context, lp ListParams) ([]Subscription, PageInfo, error) {
	p, err := lp.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Subscription
	var total int
	err = s.view(ctx, func(t *txn) error {
		var rs []subscriptionRecord
		rs, total, err = list(t, collSubscriptions, p.query(indexAll), func(r *subscriptionRecord, id string) { r.ID = id })
		out = make([]Subscription, len(rs))
		for i, r := range rs {
			out[i] = r.public()
		}
		return err
	})
	return out, p.info(total), err
}

// CancelSubscription cancels a subscription: it generates no more charges. Canceling a
// canceled or COMPLETED subscription changes nothing. A PIX_RECURRING subscription's
// mandate becomes CANCELED (unless the payer rejected it first) and its installments not
// paid are CANCELED.
func (s *Service) CancelSubscription(ctx context.Context, id string) (Subscription, error) {
	var sub Subscription
	err := s.update(ctx, func(t *txn) error {
		r, err := t.findSubscription(id)
		if err != nil {
			return err
		}
		if r.Status == SubscriptionActive {
			if r.Mandate != nil && r.Mandate.Status != MandateRejected {
				r.Mandate.Status = MandateCanceled
			}
			if r, err = t.endSubscription(r); err != nil {
				return err
			}
		}
		sub = r.public()
		return nil
	})
	return sub, err
}

// endSubscription cancels r, which generates nothing more, with the installments of a
// PIX_RECURRING one not paid. It saves r and returns it as saved.
func (t *txn) endSubscription(r subscriptionRecord) (subscriptionRecord, error) {
	r.Status, r.IsActive, r.NextChargeDate = SubscriptionCanceled, false, nil
	if r.Mandate != nil {
		r.Mandate.FailNext = nil
		if err := t.cancelInstallments(r); err != nil {
			return r, err
		}
	}
	if err := t.saveSubscription(r); err != nil {
		return r, err
	}
	r.UpdatedAt = t.now
	return r, t.unschedule(dueSubscription, r.ID)
}

// generateDue is the pass's work on a subscription: it generates the charge of every
// period that has started and not been generated, in order, and moves the subscription
// and its due entry to the next period.
func (t *txn) generateDue(id string) error {
	r, err := t.subscriptionByID(id)
	if ok, err := found(err); err != nil {
		return err
	} else if !ok || r.Status != SubscriptionActive || r.NextChargeDate == nil {
		return t.unschedule(dueSubscription, id)
	}
	start := r.periodStart(r.Periods)
	generated := false
	for !start.After(t.now) && !r.done() {
		if r.Mandate != nil {
			err = t.generateInstallment(&r, start)
		} else {
			err = t.generateCharge(r, start)
		}
		if err != nil {
			return err
		}
		r.Periods++
		start = r.periodStart(r.Periods)
		generated = true
	}
	if r.done() { // the last installment is generated: nothing more is due
		r.Status, r.IsActive, r.NextChargeDate = SubscriptionCompleted, false, nil
		if err := t.saveSubscription(r); err != nil {
			return err
		}
		return t.unschedule(dueSubscription, id)
	}
	next := start.UTC()
	if generated {
		r.NextChargeDate = &next
		if err := t.saveSubscription(r); err != nil {
			return err
		}
	}
	return t.schedule(dueSubscription, id, next, false)
}

// periodCharge is the charge of the period of r starting at start.
func (r subscriptionRecord) periodCharge(start time.Time) CreateChargeParams {
	p := CreateChargeParams{
		CorrelationID: r.CorrelationID + ":" + start.In(brasilia).Format(time.DateOnly),
		Value:         r.Value, Type: r.ChargeType, Comment: r.Comment, AdditionalInfo: r.AdditionalInfo,
		subscription: r.CorrelationID, customer: r.Customer,
	}
	if r.ChargeType == ChargeOverdue {
		// Due the day before, and payable through it (setOverdue): it expires dayDue
		// days after it is generated, as a DYNAMIC one does. MinDayDue keeps this >= 2.
		p.DaysForDueDate = r.DayDue - 1
	} else {
		p.ExpiresIn = int64(r.DayDue) * 86400
	}
	return p
}

// retryName is the correlationID of the charge of the period starting at start when
// another charge has taken its usual one (periodCharge): "<subscription>:<yyyy-mm-dd>:<id>",
// with the subscription's correlationID cut short, by whole characters, where the whole
// would pass MaxCorrelationID. MaxSubscriptionCorrelationID leaves room for the date only;
// without the cut, the charge of such a subscription would be refused on every pass, and
// the subscription would stop at that period for good.
func retryName(subscription string, start time.Time, id string) string {
	tail := ":" + start.In(brasilia).Format(time.DateOnly) + ":" + id
	return cutRunes(subscription, MaxCorrelationID-utf8.RuneCountInString(tail)) + tail
}

// generateCharge creates the charge of the period starting at start, unless it exists.
func (t *txn) generateCharge(r subscriptionRecord, start time.Time) error {
	p := r.periodCharge(start)
	if pr := t.preps[prepKey{t.company, p.CorrelationID}]; pr != nil {
		p.ids, p.prep = pr.ids, pr
	}
	_, err := t.createCharge(p)
	if ErrorCode(err) == ECONFLICT && ErrorField(err) == "correlationID" {
		c, ferr := t.chargeByKey(correlationKey(p.CorrelationID))
		if ferr != nil {
			return ferr
		}
		if c.Subscription == r.CorrelationID {
			return nil // generated already
		}
		// Another charge took the name: the period's charge gets a unique one.
		p.CorrelationID = retryName(r.CorrelationID, start, t.newID())
		p.ids, p.prep = nil, nil // made for the name taken
		_, err = t.createCharge(p)
	}
	return err
}

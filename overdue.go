package payments

import "time"

// An OVERDUE charge counts days from its creation in 24-hour steps: day n is
// [createdAt + n days, createdAt + n+1 days). With D = DaysForDueDate and A =
// DaysAfterDueDate:
//
//   - days 0 .. D-1 are before the due date: the discount applies, with D-n days of advance;
//   - day D is the due day: the value, no discount, no fine;
//   - days D+1 .. D+A are late: the fine once, plus interest for each late day;
//   - at createdAt + D+1+A days the charge expires.
//
// Percentages are integers in basis points (100 = 1.00%), values in centavos; every
// computation is integer, rounded half up, as the real API's simulator documents.

// Interests accrue on each late day: Value basis points of the charge value per day
// (PERCENTAGE, the default), or Value centavos per day (FIXED). Charges stored before Type
// existed have none, which reads as PERCENTAGE.
type Interests struct {
	Value int64        `json:"value"`
	Type  InterestType `json:"type,omitempty"`
}

// InterestType says how an Interests' Value is read.
type InterestType string

// Interest types.
const (
	InterestFixed      InterestType = "FIXED"      // centavos per late day
	InterestPercentage InterestType = "PERCENTAGE" // basis points of the value per late day
)

// FineType says how a fine's Value is read.
type FineType string

// Fine types.
const (
	FineFixed      FineType = "FIXED"      // centavos
	FinePercentage FineType = "PERCENTAGE" // basis points of the value
)

// Fines are charged once when a charge is paid late.
type Fines struct {
	Value int64    `json:"value"`
	Type  FineType `json:"type"`
}

// DiscountModality says how a discount for paying early is computed.
type DiscountModality string

// Discount modalities. The business-day modalities of the real API need a calendar of
// Brazilian bank holidays, which this version does not have: they are rejected.
const (
	DiscountFixedUntilDate        DiscountModality = "FIXED_VALUE_UNTIL_SPECIFIED_DATE"   // tiers: centavos off when paid DaysActive days early
	DiscountPercentageUntilDate   DiscountModality = "PERCENTAGE_UNTIL_SPECIFIED_DATE"    // tiers: basis points off when paid DaysActive days early
	DiscountValuePerDay           DiscountModality = "VALUE_PER_RUNNING_DAY_ADVANCE"      // Value centavos off per day early
	DiscountPercentagePerDay      DiscountModality = "PERCENTAGE_PER_RUNNING_DAY_ADVANCE" // Value basis points off per day early
	discountValuePerBusinessDay   DiscountModality = "VALUE_PER_BUSINESS_DAY_ADVANCE"
	discountPercentPerBusinessDay DiscountModality = "PERCENTAGE_PER_BUSINESS_DAY_ADVANCE"
)

// DiscountSettings describe the discount for paying an OVERDUE charge early.
type DiscountSettings struct {
	Modality          DiscountModality `json:"modality"`
	DiscountFixedDate []DiscountTier   `json:"discountFixedDate,omitempty"`
	Value             int64            `json:"value,omitempty"`
}

// DiscountTier gives Value off when the charge is paid at least DaysActive days before
// its due date; the largest applicable tier wins.
type DiscountTier struct {
	DaysActive int   `json:"daysActive"`
	Value      int64 `json:"value"`
}

// MaxOverdueDays bounds DaysForDueDate and DaysAfterDueDate.
const MaxOverdueDays = 3650

func (p CreateChargeParams) checkNoOverdueFields() error {
	switch {
	case p.DaysForDueDate != 0:
		return invalid("daysForDueDate", "daysForDueDate is only for OVERDUE charges")
	case p.DaysAfterDueDate != 0:
		return invalid("daysAfterDueDate", "daysAfterDueDate is only for OVERDUE charges")
	case p.Interests != nil:
		return invalid("interests", "interests are only for OVERDUE charges")
	case p.Fines != nil:
		return invalid("fines", "fines are only for OVERDUE charges")
	case p.Discount != nil:
		return invalid("discount", "discount is only for OVERDUE charges")
	}
	return nil
}

// setOverdue validates the OVERDUE inputs and sets the due date and expiry.
func (c *Charge) setOverdue(now time.Time, p CreateChargeParams) error {
	switch {
	case p.ExpiresIn != 0:
		return invalid("expiresIn", "an OVERDUE charge expires daysAfterDueDate days after its due date: do not send expiresIn")
	case !p.ExpiresDate.IsZero():
		return invalid("expiresDate", "an OVERDUE charge expires daysAfterDueDate days after its due date: do not send expiresDate")
	case p.DaysForDueDate < 1 || p.DaysForDueDate > MaxOverdueDays:
		return invalid("daysForDueDate", "daysForDueDate must be between 1 and %d for an OVERDUE charge", MaxOverdueDays)
	case p.DaysAfterDueDate < 0 || p.DaysAfterDueDate > MaxOverdueDays:
		return invalid("daysAfterDueDate", "daysAfterDueDate must be between 0 and %d", MaxOverdueDays)
	}
	if p.Interests != nil {
		in := *p.Interests
		p.Interests = &in
		switch in.Type {
		case "":
			in.Type = InterestPercentage // the default, as for fines
		case InterestFixed, InterestPercentage:
		default:
			return invalid("interests.type", "interests.type must be FIXED or PERCENTAGE")
		}
		if in.Value < 0 || in.Type == InterestPercentage && in.Value > 10000 || in.Type == InterestFixed && in.Value > c.Value {
			return invalid("interests.value", "interests.value must be 0..10000 basis points a day, or 0..value centavos a day when FIXED")
		}
	}
	if p.Fines != nil {
		f := *p.Fines
		p.Fines = &f
		switch {
		case f.Type == "":
			f.Type = FinePercentage // the default, as in the real API
		case f.Type != FineFixed && f.Type != FinePercentage:
			return invalid("fines.type", "fines.type must be FIXED or PERCENTAGE")
		}
		if f.Value < 0 || f.Type == FinePercentage && f.Value > 10000 || f.Type == FineFixed && f.Value > c.Value {
			return invalid("fines.value", "fines.value must be 0..10000 basis points, or 0..value centavos when FIXED")
		}
	}
	if p.Discount != nil {
		d := *p.Discount
		d.DiscountFixedDate = append([]DiscountTier(nil), d.DiscountFixedDate...)
		p.Discount = &d
		if err := d.check(c.Value, p.DaysForDueDate); err != nil {
			return err
		}
	}
	day := 24 * time.Hour
	due := now.Add(time.Duration(p.DaysForDueDate) * day)
	c.DueDate = &due
	c.ExpiresDate = due.Add(time.Duration(1+p.DaysAfterDueDate) * day)
	c.DaysForDueDate, c.DaysAfterDueDate = p.DaysForDueDate, p.DaysAfterDueDate
	c.Interests, c.Fines, c.DiscountSettings = p.Interests, p.Fines, p.Discount
	// The amount due is largest on the last late day; a Pix paying it must still fit what
	// a BR Code carries, or the charge could not be paid by then.
	if _, top := c.amountsAt(c.ExpiresDate.Add(-time.Nanosecond)); top > MaxChargeValue {
		field := "interests.value"
		fineOnly := *c
		fineOnly.Interests = nil
		if _, fined := fineOnly.amountsAt(due.Add(day)); fined > MaxChargeValue {
			field = "fines.value" // over with the fine alone
		}
		return invalid(field, "%s: with its fines and interests this charge would come to %d centavos by its last late day, over the %d a Pix can carry: lower value, fines, interests or daysAfterDueDate", field, top, int64(MaxChargeValue))
	}
	return nil
}

// MaxDiscountTiers is the most discount.discountFixedDate tiers a charge has: each read,
// list page and event of the charge carries them, and each amount walks them (the Pix
// COBV record has 3 discount dates).
const MaxDiscountTiers = 10

// check validates the discount of a charge of value due in daysForDueDate days.
func (d *DiscountSettings) check(value int64, daysForDueDate int) error {
	switch d.Modality {
	case DiscountFixedUntilDate, DiscountPercentageUntilDate:
		if len(d.DiscountFixedDate) == 0 {
			return invalid("discount.discountFixedDate", "discount.discountFixedDate needs at least one {daysActive, value} tier")
		}
		if len(d.DiscountFixedDate) > MaxDiscountTiers {
			return invalid("discount.discountFixedDate", "discount.discountFixedDate has at most %d tiers", MaxDiscountTiers)
		}
		for i, tier := range d.DiscountFixedDate {
			max := value - 1
			if d.Modality == DiscountPercentageUntilDate {
				max = 9999
			}
			if f := fieldAt("discount.discountFixedDate", i, "daysActive"); tier.DaysActive < 1 || tier.DaysActive > daysForDueDate {
				// more days early than the charge has: the tier would never apply
				return invalid(f, "%s must be between 1 and daysForDueDate (%d)", f, daysForDueDate)
			}
			if f := fieldAt("discount.discountFixedDate", i, "value"); tier.Value <= 0 || tier.Value > max {
				return invalid(f, "%s must be between 1 and %d", f, max)
			}
		}
	case DiscountValuePerDay, DiscountPercentagePerDay:
		max := value - 1 // centavos off per day; the discount always leaves something to pay
		if d.Modality == DiscountPercentagePerDay {
			max = 9999
		}
		if d.Value <= 0 || d.Value > max {
			return invalid("discount.value", "discount.value must be between 1 and %d", max)
		}
	case discountValuePerBusinessDay, discountPercentPerBusinessDay:
		return invalid("discount.modality", "discount.modality %s needs a bank-holiday calendar and is not supported yet; use a running-day modality", d.Modality)
	default:
		return invalid("discount.modality", "discount.modality must be one of FIXED_VALUE_UNTIL_SPECIFIED_DATE, PERCENTAGE_UNTIL_SPECIFIED_DATE, VALUE_PER_RUNNING_DAY_ADVANCE, PERCENTAGE_PER_RUNNING_DAY_ADVANCE")
	}
	return nil
}

// amountsAt returns the discount and the amount due for a payment at time at. A time
// before the charge was created (a Pix the bank dated a little early) is priced as at its
// creation: the earliest day, and so the largest discount, the charge offers. Priced by
// the days before its creation, a Pix dated five days early paid a 10,000 charge whose
// largest discount was 2,000 with 3,000. A time at or past its expiry is priced as at its
// last payable instant: a charge that can no longer be paid shows what it last asked for,
// in its CHARGE_EXPIRED event and ever after, and interest stops with it.
func (c Charge) amountsAt(at time.Time) (discount, due int64) {
	if c.Type != ChargeOverdue {
		return 0, c.Value
	}
	if !c.ExpiresDate.IsZero() && !at.Before(c.ExpiresDate) {
		at = c.ExpiresDate.Add(-time.Nanosecond)
	}
	at = laterOf(at, c.CreatedAt)
	dayIndex := int(at.Sub(c.CreatedAt) / (24 * time.Hour))
	d := c.DaysForDueDate
	switch {
	case dayIndex < d:
		discount = c.discountWith(d - dayIndex)
		return discount, c.Value - discount
	case dayIndex == d:
		return 0, c.Value
	}
	late := int64(dayIndex - d)
	due = c.Value
	if f := c.Fines; f != nil {
		if f.Type == FineFixed {
			due += f.Value
		} else {
			due += percentOf(c.Value, f.Value)
		}
	}
	if in := c.Interests; in != nil {
		if in.Type == InterestFixed {
			due += in.Value * late // at most MaxChargeValue * MaxOverdueDays: no overflow
		} else {
			due += percentOf(c.Value*late, in.Value)
		}
	}
	return 0, due
}

// discountWith is the discount for paying daysEarly days before the due date; it always
// leaves at least one centavo to pay.
func (c Charge) discountWith(daysEarly int) int64 {
	s := c.DiscountSettings
	if s == nil {
		return 0
	}
	var off int64
	switch s.Modality {
	case DiscountFixedUntilDate, DiscountPercentageUntilDate:
		for _, tier := range s.DiscountFixedDate {
			if daysEarly < tier.DaysActive {
				continue
			}
			v := tier.Value
			if s.Modality == DiscountPercentageUntilDate {
				v = percentOf(c.Value, tier.Value)
			}
			off = max(off, v)
		}
	case DiscountValuePerDay:
		off = s.Value * int64(daysEarly)
	case DiscountPercentagePerDay:
		off = percentOf(c.Value, s.Value*int64(daysEarly))
	}
	return min(off, c.Value-1)
}

// laterOf is the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

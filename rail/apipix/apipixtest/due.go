package apipixtest

import (
	"encoding/json"
	"errors"
	"math/big"
	"sort"
	"time"
)

// brt is the receiver's calendar: due dates and discount dates are days in Brasília
// (UTC-3, without daylight saving time since 2019).
var brt = time.FixedZone("BRT", -3*60*60)

// dueTerms are a cobv's money terms, read from its registered body.
type dueTerms struct {
	due       time.Time // dataDeVencimento, a day at 00:00 UTC
	daysAfter int       // validadeAposVencimento
	original  int64     // centavos
	// Each of these is nil when absent. val is centavos for the "valor" modalidades and
	// hundredths of a percent (basis points) for the percentage ones: "2.50" is 250.
	multa, juros, abatimento *modVal
	desconto                 *modVal
	tiers                    []tier // desconto.descontoDataFixa, by date
}

type modVal struct{ mod, val int64 }

type tier struct {
	date time.Time
	val  int64
}

// defaultDaysAfter is validadeAposVencimento when a cobv leaves it out (the standard
// gives no default; 30 is what PSPs such as Efí use).
const defaultDaysAfter = 30

// readDueTerms reads the terms of a cobv body that passed its schema.
func readDueTerms(body map[string]any) (dueTerms, error) {
	var raw struct {
		Calendario struct {
			DataDeVencimento       string       `json:"dataDeVencimento"`
			ValidadeAposVencimento *json.Number `json:"validadeAposVencimento"`
		} `json:"calendario"`
		Valor struct {
			Original   string   `json:"original"`
			Multa      *rawMod  `json:"multa"`
			Juros      *rawMod  `json:"juros"`
			Abatimento *rawMod  `json:"abatimento"`
			Desconto   *rawDesc `json:"desconto"`
		} `json:"valor"`
	}
	if err := json.Unmarshal([]byte(canonical(body)), &raw); err != nil {
		return dueTerms{}, err
	}
	var d dueTerms
	var err error
	if d.due, err = time.Parse(time.DateOnly, raw.Calendario.DataDeVencimento); err != nil {
		return d, err
	}
	d.daysAfter = defaultDaysAfter
	if n := raw.Calendario.ValidadeAposVencimento; n != nil {
		v, err := n.Int64()
		if err != nil {
			return d, err
		}
		d.daysAfter = int(v)
	}
	if d.original, err = parseMoney(raw.Valor.Original); err != nil {
		return d, err
	}
	for _, m := range []struct {
		in  *rawMod
		out **modVal
	}{{raw.Valor.Multa, &d.multa}, {raw.Valor.Juros, &d.juros}, {raw.Valor.Abatimento, &d.abatimento}} {
		if m.in == nil {
			continue
		}
		v, err := parseMoney(m.in.ValorPerc)
		if err != nil {
			return d, err
		}
		*m.out = &modVal{m.in.Modalidade, v}
	}
	if ds := raw.Valor.Desconto; ds != nil {
		d.desconto = &modVal{mod: ds.Modalidade}
		if ds.ValorPerc != "" {
			if d.desconto.val, err = parseMoney(ds.ValorPerc); err != nil {
				return d, err
			}
		}
		for _, t := range ds.DescontoDataFixa {
			day, err := time.Parse(time.DateOnly, t.Data)
			if err != nil {
				return d, err
			}
			v, err := parseMoney(t.ValorPerc)
			if err != nil {
				return d, err
			}
			d.tiers = append(d.tiers, tier{day, v})
		}
		sort.Slice(d.tiers, func(i, j int) bool { return d.tiers[i].date.Before(d.tiers[j].date) })
	}
	return d, nil
}

type rawMod struct {
	Modalidade int64  `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

type rawDesc struct {
	Modalidade       int64  `json:"modalidade"`
	ValorPerc        string `json:"valorPerc"`
	DescontoDataFixa []struct {
		Data      string `json:"data"`
		ValorPerc string `json:"valorPerc"`
	} `json:"descontoDataFixa"`
}

// day is the receiver's calendar day of t, at 00:00 UTC so days subtract exactly.
func day(t time.Time) time.Time {
	y, m, d := t.In(brt).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func weekend(t time.Time) bool { return t.Weekday() == time.Saturday || t.Weekday() == time.Sunday }

// effectiveDue is the due date moved past a weekend, as the standard asks (it moves it
// past holidays too; the PSP knows none).
func (d dueTerms) effectiveDue() time.Time {
	due := d.due
	for weekend(due) {
		due = due.AddDate(0, 0, 1)
	}
	return due
}

// lastDay is the last day the charge can be paid.
func (d dueTerms) lastDay() time.Time { return d.effectiveDue().AddDate(0, 0, d.daysAfter) }

var errPastLastDay = errors.New("the charge is past its due date and the days after it")

// amountDue is what a payer pays on a day, in centavos, by the conventions AmountDue
// describes: interest by the month or the year (modalidades 3, 4, 7, 8) is a thirtieth or
// a 365th of the rate a day, over calendar days (1 to 4) or weekdays (5 to 8); a discount
// by the day of advance counts days the same way (3 and 5 calendar, 4 and 6 weekdays); a
// fixed-date discount (1, 2) is the first tier whose date is not past.
func (d dueTerms) amountDue(on time.Time) (int64, error) {
	due := d.effectiveDue()
	if on.After(d.lastDay()) {
		return 0, errPastLastDay
	}
	total := big.NewInt(d.original)
	if a := d.abatimento; a != nil {
		total.Sub(total, d.part(a.mod == 1, a.val, 1, 1))
	}
	if on.After(due) {
		calendar, business := days(due, on)
		if m := d.multa; m != nil {
			total.Add(total, d.part(m.mod == 1, m.val, 1, 1))
		}
		if j := d.juros; j != nil {
			if r, ok := jurosRates[j.mod]; ok {
				total.Add(total, d.accrue(r, j.val, calendar, business))
			}
		}
	} else if ds := d.desconto; ds != nil {
		calendar, business := days(on, due)
		if ds.mod == 1 || ds.mod == 2 {
			for _, t := range d.tiers {
				if !on.After(t.date) {
					total.Sub(total, d.part(ds.mod == 1, t.val, 1, 1))
					break
				}
			}
		} else if r, ok := descontoRates[ds.mod]; ok {
			total.Sub(total, d.accrue(r, ds.val, calendar, business))
		}
	}
	if total.Cmp(big.NewInt(1)) < 0 {
		return 1, nil
	}
	if !total.IsInt64() {
		return maxInt64, nil
	}
	return total.Int64(), nil
}

// rate is how a modalidade of juros, or of a discount by the day of advance, counts its
// valorPerc: as centavos (fixed) or basis points of the original, for a period of per
// days, over calendar days or weekdays only.
type rate struct {
	fixed    bool
	per      int64
	weekdays bool
}

// jurosRates are the juros modalidades: a value a day (1), a percentage a day (2), a
// month (3) or a year (4) over calendar days, and the same over weekdays (5 to 8).
var jurosRates = map[int64]rate{
	1: {fixed: true, per: 1},
	2: {per: 1},
	3: {per: 30},
	4: {per: 365},
	5: {fixed: true, per: 1, weekdays: true},
	6: {per: 1, weekdays: true},
	7: {per: 30, weekdays: true},
	8: {per: 365, weekdays: true},
}

// descontoRates are the modalidades of a discount by the day of advance: a value a day
// over calendar days (3) or weekdays (4), a percentage a day over calendar days (5) or
// weekdays (6). Modalidades 1 and 2 are fixed-date tiers, which no rate counts.
var descontoRates = map[int64]rate{
	3: {fixed: true, per: 1},
	4: {fixed: true, per: 1, weekdays: true},
	5: {per: 1},
	6: {per: 1, weekdays: true},
}

// accrue is what val adds up to, counted by r, over a span of calendar days of which
// business are weekdays.
func (d dueTerms) accrue(r rate, val, calendar, business int64) *big.Int {
	n := calendar
	if r.weekdays {
		n = business
	}
	return d.part(r.fixed, val, n, r.per)
}

// part is val centavos times n (fixed), or val basis points of the original times n
// divided by per, rounded half up.
func (d dueTerms) part(fixed bool, val, n, per int64) *big.Int {
	if fixed {
		return new(big.Int).Mul(big.NewInt(val), big.NewInt(n))
	}
	num := new(big.Int).Mul(big.NewInt(d.original), big.NewInt(val))
	num.Mul(num, big.NewInt(n))
	den := big.NewInt(10000 * per)
	num.Mul(num, big.NewInt(2)).Add(num, den)
	return num.Quo(num, den.Mul(den, big.NewInt(2)))
}

// days counts the days after from up to to included: all of them, and the weekdays.
func days(from, to time.Time) (calendar, business int64) {
	calendar = int64(to.Sub(from) / (24 * time.Hour))
	if calendar <= 0 {
		return 0, 0
	}
	weeks := calendar / 7
	business = weeks * 5
	for d := from.AddDate(0, 0, int(weeks*7)+1); !d.After(to); d = d.AddDate(0, 0, 1) {
		if !weekend(d) {
			business++
		}
	}
	return calendar, business
}

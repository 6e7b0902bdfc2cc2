package httpadapter

import (
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/pixfoundry/payments"
)

// TestExpiresDate: a charge's expiresDate is read as the real API reads it; text that is
// no ISO 8601 date is EINVALID naming expiresDate, and empty is not given.
func TestExpiresDate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       time.Time
	}{
		{"Empty", "", time.Time{}},
		{"Offset", "2026-11-23T09:00:00-03:00", time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)},
		{"Zulu", "2026-11-23T12:00:00Z", time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)},
		{"NoOffsetIsUTC", "2026-11-23T09:00:00", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)},
		{"NoOffsetFraction", "2026-11-23T09:00:00.250", time.Date(2026, 11, 23, 9, 0, 0, 250_000_000, time.UTC)},
		{"NoOffsetNoSeconds", "2026-11-23T09:30", time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)},
		{"DayMeansItsEnd", "2026-11-30", time.Date(2026, 11, 30, 23, 59, 59, 999_000_000, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := expiresDate(tc.text)
			is.NoErr(err)
			is.True(got.Equal(tc.want)) // the instant the text names
		})
	}
	for _, text := range []string{"23/11/2026", "soon", " 2026-11-30", "2026-11-30T25:00:00Z", "2026-02-30"} {
		is := is.New(t)
		_, err := expiresDate(text)
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // not a date
		is.Equal(payments.ErrorField(err), "expiresDate")    // named as the wire names it
	}
}

// TestDayGenerateCharge: the field is a day of the month or the date of the first charge,
// a day in Brasília; anything else is EINVALID naming dayGenerateCharge.
func TestDayGenerateCharge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	day, date, err := dayGenerateCharge([]byte(`22`))
	is.NoErr(err)
	is.True(day != nil && *day == 22 && date.IsZero()) // a day of the month
	day, date, err = dayGenerateCharge([]byte(` null `))
	is.NoErr(err)
	is.True(day == nil && date.IsZero()) // neither
	day, date, err = dayGenerateCharge([]byte(`"2027-02-14"`))
	is.NoErr(err)
	is.True(day == nil)
	is.True(date.Equal(time.Date(2027, 2, 14, 3, 0, 0, 0, time.UTC))) // 00:00 in Brasília, so its date there is the 14th
	_, date, err = dayGenerateCharge([]byte(`" 2026-12-01T02:00:00Z "`))
	is.NoErr(err)
	is.True(date.Equal(time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))) // the instant: the Service takes its date in Brasília
	for _, raw := range []string{`"14/02/2027"`, `"5"`, `"next month"`, `true`, `{}`} {
		_, _, err := dayGenerateCharge([]byte(raw))
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // not a day nor a date
		is.Equal(payments.ErrorField(err), "dayGenerateCharge")
	}
}

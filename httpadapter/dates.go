package httpadapter

import (
	"strings"
	"time"
)

// The dates of request bodies arrive as text; the Service takes time.Time. These read the
// text as the real API does and name the wire's field when it is not a date.

// expiresDate reads a charge's expiresDate: empty is the zero time (not given).
func expiresDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	at, err := parseISODate(s)
	if err != nil {
		return time.Time{}, invalid("expiresDate", "expiresDate must be an ISO 8601 date or date-time, e.g. 2026-12-31T23:59:59Z")
	}
	return at, nil
}

// parseISODate accepts ISO 8601 date-times with a zone (RFC 3339, fractional seconds
// allowed), date-times without one, read as UTC as the real API does (seconds optional),
// and plain dates, which mean the end of that day in UTC (23:59:59.999).
func parseISODate(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, err
	}
	return d.Add(24*time.Hour - time.Millisecond), nil
}

// firstChargeDate reads a subscription's date of first charge, YYYY-MM-DD (a day in
// Brasília) or an RFC 3339 date-time (the Service takes the date it falls on in Brasília);
// ok is false for any other text.
func firstChargeDate(s string) (at time.Time, ok bool) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseInLocation(time.DateOnly, s, brasilia); err == nil {
		return d, true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

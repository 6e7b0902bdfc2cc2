// Package wiretime writes times as the OpenPix API sends them: RFC 3339 with exactly three
// fraction digits, "2026-11-27T14:50:34.310Z". time.Time's MarshalJSON drops trailing
// zeros ("…34.31Z", "…34Z"), and a client whose parser expects three digits then fails on
// about one record in ten.
//
// The Service keeps every time it records at millisecond precision (its clock is read
// truncated to the millisecond, and times a bank or a client gives are truncated when
// stored), so three digits lose nothing.
package wiretime

import (
	"bytes"
	"time"
)

// Layout is RFC 3339 with milliseconds: "Z" for UTC, the offset otherwise.
const Layout = "2006-01-02T15:04:05.000Z07:00"

// Append appends t, quoted, as a JSON string: with Layout when t is at millisecond
// precision, as the wire wants it; otherwise with all its digits (time.RFC3339Nano), so
// that a record that is stored with it keeps what it was given. The caller writes only
// times time.Time's MarshalJSON accepts (years 0 to 9999, offsets under a day).
func Append(b []byte, t time.Time) []byte {
	b = append(b, '"')
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		b = appendLayout(b, t)
	} else {
		b = t.AppendFormat(b, time.RFC3339Nano)
	}
	return append(b, '"')
}

// appendLayout appends t with Layout, as t.AppendFormat(b, Layout) does, without its walk
// of the layout string (a quarter of a charge reply's encoding in a profile of the get
// load); offsets with seconds and years outside 0 to 9999 go to AppendFormat itself.
// TestAppend_AsAppendFormat compares the two on random times.
func appendLayout(b []byte, t time.Time) []byte {
	_, offset := t.Zone()
	if offset%60 != 0 {
		return t.AppendFormat(b, Layout)
	}
	out, ok := AppendFixed(b, t, 3)
	if !ok {
		return t.AppendFormat(b, Layout)
	}
	if offset == 0 {
		return append(out, 'Z')
	}
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	out = append(out, sign)
	out = append2(out, offset/3600)
	out = append(out, ':')
	return append2(out, offset/60%60)
}

// AppendFixed appends t's date and clock in its own location, "2006-01-02T15:04:05",
// then a '.' and the first digits (1 to 9) of its fraction of a second: the fixed-width
// part of Layout and of the store's sort keys, written as t.AppendFormat writes it. For a
// year outside 0 to 9999, which that width does not hold, it appends nothing and reports
// false.
func AppendFixed(b []byte, t time.Time, digits int) ([]byte, bool) {
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return b, false
	}
	hour, minute, sec := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	b = append2(b, int(month))
	b = append(b, '-')
	b = append2(b, day)
	b = append(b, 'T')
	b = append2(b, hour)
	b = append(b, ':')
	b = append2(b, minute)
	b = append(b, ':')
	b = append2(b, sec)
	b = append(b, '.')
	frac := t.Nanosecond()
	for div := 100_000_000; digits > 0; div, digits = div/10, digits-1 {
		b = append(b, byte('0'+frac/div%10))
	}
	return b, true
}

func append2(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }

// Keys are the JSON names of the time fields of the payments package's and the HTTP
// adapter's replies and event payloads: the values Fix rewrites. Only a string under one
// of these keys is touched, so text a client wrote (a comment, an additional-info value)
// that looks like a time is never changed. TestKeys (payments) checks that every
// time.Time field of those packages has its name here.
var Keys = map[string]bool{
	"createdAt":      true,
	"updatedAt":      true,
	"time":           true,
	"paidAt":         true,
	"closedAt":       true, // a closed account's
	"expiresDate":    true,
	"dueDate":        true,
	"nextChargeDate": true,
	"sentAt":         true,
	"assignedAt":     true,
	"at":             true,
	"nextAttempt":    true,
	"nextAt":         true,
	"first":          true,
	"stuckSince":     true,
	"leasedUntil":    true,
	"horario":        true, // the raw Pix of a transaction, as the bank reported it
	// a Pix Automático installment's, its cobr tries' and (stored) its next retry's
	"dateGenerateCharge": true, "requestedExecutionDate": true, "nextTry": true,
}

// Fix rewrites, in the compact JSON encoding/json writes, every string under one of Keys
// that is an RFC 3339 time as Append writes it: with Layout at millisecond precision, which
// is every time the Service records. It returns b itself when nothing needed it, a new
// slice otherwise; b is not modified.
func Fix(b []byte) []byte {
	var out []byte // nil until the first rewrite
	done := 0      // b[:done] is in out
	var key []byte // the last object key read
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end := stringEnd(b, i+1)
		if end < 0 {
			break // not the JSON encoding/json writes; leave the rest
		}
		s := b[i+1 : end]
		if end+1 < len(b) && b[end+1] == ':' {
			key = s // a key: encoding/json writes them unescaped
		} else if Keys[string(key)] && len(s) >= len("2006-01-02T15:04:05Z") && s[10] == 'T' && !threeDigits(s) {
			if t, err := time.Parse(time.RFC3339Nano, string(s)); err == nil {
				out = append(out, b[done:i]...)
				out = Append(out, t)
				done = end + 1
			}
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// stringEnd is the index of the quote that closes the JSON string starting at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		j += i
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for k := j - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// threeDigits reports whether the time text s already has exactly three fraction digits.
func threeDigits(s []byte) bool {
	return len(s) > 23 && s[19] == '.' && isDigit(s[20]) && isDigit(s[21]) && isDigit(s[22]) && !isDigit(s[23])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

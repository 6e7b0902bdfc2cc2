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
		b = t.AppendFormat(b, Layout)
	} else {
		b = t.AppendFormat(b, time.RFC3339Nano)
	}
	return append(b, '"')
}

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

package payments

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text a caller sends: what a record may hold, and correlationIDs.

// cleanString trims s and rejects control characters, text-direction controls and
// overlong values.
func cleanString(field, s string, max int) (string, error) {
	return checkText(field, strings.TrimSpace(s), max)
}

// checkText is s if it is text a record may hold (see cleanString), as it is.
func checkText(field, s string, max int) (string, error) {
	if !utf8.ValidString(s) {
		return "", invalid(field, "%s must be valid UTF-8", field)
	}
	if len([]rune(s)) > max {
		return "", invalid(field, "%s must have at most %d characters", field, max)
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r): // C0, DEL and C1
			return "", invalid(field, "%s must not contain control characters", field)
		case isBidiControl(r):
			return "", invalid(field, "%s must not contain text-direction control characters (U+%04X)", field, r)
		}
	}
	return s, nil
}

// cutRunes is s cut to at most n characters (runes), never inside one.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:max(n, 0)])
}

// isBidiControl reports whether r is one of the explicit bidirectional formatting
// characters (embeddings, overrides, isolates and their terminators). Text with them
// displays in an order other than the one it is stored in: a comment on the payment page
// could show an amount other than the one it spells ("Trojan Source", CVE-2021-42574).
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// MaxCorrelationID is the longest correlationID accepted.
const MaxCorrelationID = 255

// cleanCorrelationID checks a caller's correlationID and keeps it as sent, spaces at its
// ends included: the reply, the events and every lookup show it as the client sent it
// (wire reference §7), so what it is created under is what it is found by. Only blanks
// is no id at all (required, or one is made up where the call allows).
func cleanCorrelationID(field, s string, required bool) (string, error) {
	if strings.TrimSpace(s) == "" {
		s = ""
	}
	if strings.TrimFunc(s, unicode.IsControl) != s { // "order-1\n" read from a file, say
		return "", invalid(field, "%s must not begin or end with a line break, tab or other control character", field)
	}
	s, err := checkText(field, s, MaxCorrelationID)
	if err != nil {
		return "", err
	}
	if s == "" && required {
		return "", invalid(field, "%s is required", field)
	}
	return s, nil
}

package brcode

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Field is one raw TLV data object: a 2-digit ID and its value. Code uses it to
// carry, losslessly, the objects Pix does not interpret (other merchant
// accounts, unreserved templates, extra additional-data fields).
type Field struct {
	ID    string // 2 decimal digits, e.g. "27"
	Value string // the value as written, templates included verbatim
}

// ParseError reports an invalid BR Code field, found by Parse or refused by an
// encoder. Tag is the field path ("54", "26.01", "63"), or "" for the payload as
// a whole; Err is the underlying cause when there is one (e.g. an ErrInvalidKey).
type ParseError struct {
	Tag    string // field path: "54", "26.01", "63"; "" for the whole payload
	Reason string // what is wrong, in English
	Err    error  // underlying cause (ErrInvalidKey...), or nil
}

// Error returns "brcode: <tag>: <reason>" ("brcode: <reason>" when Tag is empty).
func (e *ParseError) Error() string {
	if e.Tag == "" {
		return "brcode: " + e.Reason
	}
	return "brcode: " + e.Tag + ": " + e.Reason
}

// Unwrap returns the underlying cause, if any.
func (e *ParseError) Unwrap() error { return e.Err }

func perr(tag, format string, args ...any) *ParseError {
	return &ParseError{Tag: tag, Reason: fmt.Sprintf(format, args...)}
}

// path joins a parent tag and a sub-field ID: path("26", "01") == "26.01".
func path(parent, id string) string {
	if parent == "" {
		return id
	}
	return parent + "." + id
}

// nextTLV reads the data object starting at byte offset i of s (valid UTF-8).
// The length counts characters (runes), not bytes.
func nextTLV(s string, i int, parent string) (id, val string, next int, err *ParseError) {
	if len(s)-i < 4 {
		return "", "", 0, perr(parent, "truncated data object at character %d", utf8.RuneCountInString(s[:i]))
	}
	id = s[i : i+2]
	if !isDigit(id[0]) || !isDigit(id[1]) {
		return "", "", 0, perr(parent, "malformed ID %q at character %d", id, utf8.RuneCountInString(s[:i]))
	}
	l := s[i+2 : i+4]
	if !isDigit(l[0]) || !isDigit(l[1]) {
		return "", "", 0, perr(path(parent, id), "malformed length %q", l)
	}
	n := int(l[0]-'0')*10 + int(l[1]-'0')
	if n == 0 {
		return "", "", 0, perr(path(parent, id), "zero-length value")
	}
	j := i + 4
	for range n {
		if j >= len(s) {
			return "", "", 0, perr(path(parent, id), "value shorter than its length %d", n)
		}
		if s[j] < utf8.RuneSelf {
			j++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[j:])
		j += size
	}
	return id, s[i+4 : j], j, nil
}

// subFields splits a template value into its data objects (no duplicate IDs,
// no zero-length values). When gui is set, the first object must be "00".
func subFields(tag, v string, gui bool) ([]Field, *ParseError) {
	var seen [100]bool
	fields := make([]Field, 0, 4)
	for i := 0; i < len(v); {
		id, val, next, err := nextTLV(v, i, tag)
		if err != nil {
			return nil, err
		}
		n := atoi2(id)
		if seen[n] {
			return nil, perr(path(tag, id), "duplicate ID")
		}
		seen[n] = true
		if gui && i == 0 && id != "00" {
			return nil, perr(tag, "template must start with a globally unique identifier (00)")
		}
		fields = append(fields, Field{ID: id, Value: val})
		i = next
	}
	return fields, nil
}

func atoi2(id string) int { return int(id[0]-'0')*10 + int(id[1]-'0') }

// writer builds a TLV string; the first error sticks.
type writer struct {
	b   []byte
	err *ParseError
}

// field appends id, the 2-digit character length of v and v; tag names the
// field in errors.
func (w *writer) field(tag, id, v string) {
	if w.err != nil {
		return
	}
	n := utf8.RuneCountInString(v)
	switch {
	case n == 0:
		w.err = perr(tag, "zero-length value")
		return
	case n > 99:
		w.err = perr(tag, "value longer than 99 characters (%d)", n)
		return
	}
	w.b = append(w.b, id...)
	w.b = append(w.b, byte('0'+n/10), byte('0'+n%10))
	w.b = append(w.b, v...)
}

// template appends a template whose value is built by fn.
func (w *writer) template(tag, id string, fn func(w *writer)) {
	if w.err != nil {
		return
	}
	sub := writer{b: make([]byte, 0, 99)}
	fn(&sub)
	if sub.err != nil {
		w.err = sub.err
		return
	}
	w.field(tag, id, string(sub.b))
}

// printable reports whether s has only printable characters (ASCII space
// included); ascii restricts it to printable ASCII (EMV "ANS").
func printable(s string, ascii bool) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7F || ascii && r > 0x7E {
			return false
		}
		if r > 0x7E && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

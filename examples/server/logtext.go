package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// textLines is the request log's slog.Handler: it writes what slog.NewTextHandler(w, nil)
// writes, byte for byte (TestTextLines_AsTextHandler), for records of plain attributes
// (strings, numbers, booleans, durations, times), as the request log's are, in one Write
// per record, with a buffer of its own and no lock: w must take concurrent whole lines,
// as lineWriter does. Any other record (a group, a value of another kind, an empty key)
// and every handler made by WithAttrs or WithGroup go to the TextHandler it wraps.
//
// It is the request log's alone because that log is on the hot path: slog.TextHandler's
// general machinery (a state per record, its lock, the checks for options not set) was a
// few per cent of the server's CPU under a load of gets.
type textLines struct {
	w    io.Writer
	text slog.Handler
}

func newTextLines(w io.Writer) *textLines {
	return &textLines{w: w, text: slog.NewTextHandler(w, nil)}
}

// Enabled is the TextHandler's with no options: Info and above.
func (h *textLines) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *textLines) WithAttrs(as []slog.Attr) slog.Handler { return h.text.WithAttrs(as) }

func (h *textLines) WithGroup(name string) slog.Handler { return h.text.WithGroup(name) }

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func (h *textLines) Handle(ctx context.Context, r slog.Record) error {
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		plain = a.Key != "" && plainKind(a.Value.Kind())
		return plain
	})
	if !plain {
		return h.text.Handle(ctx, r)
	}
	bp := lineBufs.Get().(*[]byte)
	b := (*bp)[:0]
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		b = appendMillis(b, r.Time.Round(0))
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	b = appendText(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendText(b, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b = append(b, ' ')
		b = appendText(b, a.Key)
		b = append(b, '=')
		b = appendPlain(b, a.Value)
		return true
	})
	b = append(b, '\n')
	_, err := h.w.Write(b)
	if cap(b) <= 16<<10 {
		*bp = b
		lineBufs.Put(bp)
	}
	return err
}

// plainKind reports whether textLines writes values of kind k itself.
func plainKind(k slog.Kind) bool {
	switch k {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool, slog.KindDuration, slog.KindTime:
		return true
	}
	return false
}

// appendPlain appends v, of a plainKind, as the TextHandler does.
func appendPlain(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendText(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return append(b, v.Duration().String()...)
	default: // slog.KindTime
		return appendMillis(b, v.Time())
	}
}

// appendMillis appends t in RFC 3339 with exactly three digits of milliseconds, truncated,
// as the TextHandler writes times.
func appendMillis(b []byte, t time.Time) []byte {
	const prefix = len("2006-01-02T15:04:05.000")
	n := len(b)
	// RFC3339Nano drops trailing zeros: a tenth of a millisecond added keeps four digits,
	// and the fourth is cut.
	b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefix], b[n+prefix+1:]...)
}

// appendText appends s as the TextHandler writes a string: quoted (Go syntax) when it is
// empty or holds a space, '=', a double quote or an ASCII control character, or a rune
// that is invalid, a space or not printable.
func appendText(b []byte, s string) []byte {
	if needsQuotes(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsQuotes(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\\' && (c <= ' ' || c == '=' || c == '"') {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

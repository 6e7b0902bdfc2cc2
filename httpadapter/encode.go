package httpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/internal/wiretime"
)

// statusOf is the one map from error code to HTTP status.
//
// Failures are 400, as the spec says: bad input, taken unique values, refused state
// changes and unknown ids ("Charge not found"). The specific statuses are kept where the
// real API has them: 401 (App ID), 403 (partner operations), 501 (operations this version
// does not offer) and 500; 503 says to try again (the bank did not answer, or the request
// timed out). 404 is for unknown routes, and for the two lookups whose "not
// found" the reference documents as 404: account and application (writeErrorLookup).
var statusOf = map[payments.Code]int{
	payments.EINVALID:        http.StatusBadRequest,
	payments.ENOTFOUND:       http.StatusBadRequest,
	payments.ECONFLICT:       http.StatusBadRequest,
	payments.EUNAUTHORIZED:   http.StatusUnauthorized,
	payments.EFORBIDDEN:      http.StatusForbidden,
	payments.EPRECONDITION:   http.StatusBadRequest,
	payments.ENOTIMPLEMENTED: http.StatusNotImplemented,
	payments.EINTERNAL:       http.StatusInternalServerError,
	payments.ECANCELED:       http.StatusServiceUnavailable, // the client left, or its deadline passed
	payments.EUNAVAILABLE:    http.StatusServiceUnavailable, // the bank did not answer: try again
}

// errorBody is the body of every failure: {"error": "<message>"}, the one shape every
// SDK reads.
type errorBody struct {
	Error string `json:"error"`
}

// unauthorizedBody is the body of a 401. Besides "error", it carries the older
// {"errors":[{"message"}], "data":null} form, so that every SDK finds the message.
type unauthorizedBody struct {
	Error  string         `json:"error"`
	Errors []errorMessage `json:"errors"`
	Data   any            `json:"data"`
}

type errorMessage struct {
	Message string `json:"message"`
}

// writeError is the one place an error becomes an HTTP response. Internal errors are
// logged with their cause and answered with a bare "internal error".
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status := statusFor(err)
	writeErrorBody(w, status, logError(r, log, err, status))
}

// writeErrorLookup is writeError for the account and application lookups, whose unknown
// id the real API answers 404 ("Account not found", "Application not found").
func writeErrorLookup(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status := statusFor(err)
	if payments.ErrorCode(err) == payments.ENOTFOUND {
		status = http.StatusNotFound
	}
	writeErrorBody(w, status, logError(r, log, err, status))
}

// writeErrorBody writes the failure body of status: {"error": msg}, with the older
// "errors" form too on a 401.
func writeErrorBody(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusUnauthorized {
		encode(w, status, unauthorizedBody{Error: msg, Errors: []errorMessage{{Message: msg}}})
		return
	}
	encode(w, status, errorBody{Error: msg})
}

// deleteErrorBody is the failure body of the deletes the reference gives as {error,
// status} (webhook and qrcode-static); status is "ERROR", as "OK" is on success.
type deleteErrorBody struct {
	Error  string `json:"error"`
	Status string `json:"status"`
}

// writeDeleteError is writeError for those deletes.
func writeDeleteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, msg := errorStatus(r, log, err)
	if status == http.StatusUnauthorized {
		writeErrorBody(w, status, msg)
		return
	}
	encode(w, status, deleteErrorBody{Error: msg, Status: "ERROR"})
}

// handleNotImplemented answers 501 {error: msg}: an operation of the real API this
// version does not offer. It says so plainly rather than pretend to succeed.
func handleNotImplemented(log *slog.Logger, msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, log, &payments.Error{Code: payments.ENOTIMPLEMENTED, Message: msg})
	})
}

// errorStatus is the status and the caller-safe message of err, for the few routes whose
// failure body has another shape; it logs the failure as writeError does.
func errorStatus(r *http.Request, log *slog.Logger, err error) (int, string) {
	status := statusFor(err)
	return status, logError(r, log, err, status)
}

// statusFor is the HTTP status of err: statusOf, and 500 for anything it does not list.
func statusFor(err error) int {
	if status, ok := statusOf[payments.ErrorCode(err)]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// logError logs a failure answered with status and returns the message safe to show the
// caller. Only faults are logged at ERROR: a 500, with its cause (its message to the caller
// is a bare "internal error"). A request whose context ended (ECANCELED: the client left or
// its deadline passed) is logged at INFO, expected answers (4xx, 501) at DEBUG.
func logError(r *http.Request, log *slog.Logger, err error, status int) string {
	msg := payments.ErrorMessage(err)
	level := slog.LevelDebug
	switch {
	case status == http.StatusInternalServerError:
		level, msg = slog.LevelError, "internal error"
	case payments.ErrorCode(err) == payments.ECANCELED:
		level = slog.LevelInfo
	}
	if log.Enabled(r.Context(), level) { // the arguments cost allocations even when dropped
		log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	return msg
}

// encode writes v as the JSON body with status. Every value we encode is built by this
// package from plain types, so a marshalling failure is a bug: it panics, and the recovery
// middleware logs it and answers 500. A reply with an appendJSON method (charge_json.go)
// writes its own bytes, the same as encoding/json's, into a pooled buffer.
func encode(w http.ResponseWriter, status int, v any) {
	var b []byte
	if a, ok := v.(jsonAppender); ok {
		buf := replyBuffers.Get().(*[]byte)
		b = append(a.appendJSON((*buf)[:0]), '\n')
		defer func() {
			if cap(b) <= maxPooledReply {
				*buf = b[:0]
				replyBuffers.Put(buf)
			}
		}()
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			panic(fmt.Sprintf("httpadapter: encode %T: %v", v, err))
		}
		b = append(wiretime.Fix(b), '\n') // times with three fraction digits, as the real API's
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b) // a failed write means the client left; nothing to do. Write copies b.
}

// replyBuffers holds the buffers encode writes appendJSON replies into; one larger than
// maxPooledReply (a long list) is left to the garbage collector.
var replyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledReply = 64 << 10

// invalid is a bad-request error naming the offending input.
func invalid(field, format string, args ...any) error {
	return &payments.Error{Code: payments.EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// loneSurrogate reports whether the JSON text b has a \u escape of a UTF-16 surrogate that
// is not half of a pair (a high one followed at once by a low one). encoding/json decodes
// each to U+FFFD, as it does invalid UTF-8, so two different ids would become one.
func loneSurrogate(b []byte) bool {
	escape := func(i int) (rune, bool) { // the \uXXXX at b[i:], if any
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := escape(i)
		if !ok {
			i++ // another escape: skip its character (\\ included)
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := escape(i + 6); !ok || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// decode reads the request body as one JSON object into a T. It rejects a Content-Type
// other than JSON, an empty body, invalid UTF-8 and \u escapes of lone surrogates (which
// encoding/json would silently turn into U+FFFD, so that two different ids would become
// one), a top level that is not an object ([] included), malformed JSON, trailing data, a
// body over the size limit (set by New's middleware) and values of the wrong type, naming
// the field. Keys match fields exactly, as the API (JavaScript) reads them (strictjson.go):
// "Value" is not "value" but an unknown key, and unknown keys are ignored, as the SDKs send
// extras. A key given twice in an object, at any depth, or one field named in two cases
// ({"value":100,"Value":5000000}) is refused naming its path. Every error is EINVALID,
// answered 400.
func decode[T any](r *http.Request) (T, error) {
	var v T
	if ct := r.Header.Get("Content-Type"); ct != "" && !plainJSON(ct) {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return v, invalid("", "request body must be JSON (Content-Type: application/json)")
		}
	}
	body, err := readBody(r)
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return v, invalid("", "request body too large (limit %d bytes)", mbe.Limit)
		}
		return v, invalid("", "could not read the request body")
	}
	body = bytes.TrimSpace(body)
	switch {
	case len(body) == 0:
		return v, invalid("", "request body is required")
	case !utf8.Valid(body):
		return v, invalid("", "request body is not valid UTF-8")
	case loneSurrogate(body):
		// encoding/json would make it U+FFFD too: "\ud800" and "\udbff" would be one id
		return v, invalid("", "request body has a \\u escape of a lone surrogate (\\uD800 to \\uDFFF not in a pair), which is not text")
	case body[0] != '{':
		return v, invalid("", "request body must be a JSON object")
	}
	exact, err := exactKeys(body, reflect.TypeFor[T]())
	if dup, ok := errors.AsType[*duplicateKeyError](err); ok {
		return v, dup.invalid("")
	}
	notJSON := err != nil
	if notJSON {
		exact = body // encoding/json says where it is not JSON
	}
	if err := json.Unmarshal(exact, &v); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			te.Field = indexedField(exact, reflect.TypeFor[T](), te.Field) // splits[1].value, not splits.value
			if te.Type == reflect.TypeFor[centavos]() {
				got := gotJSON(te.Value)
				if f, err := strconv.ParseFloat(got, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
					// 500.0 or 5e2: whole, but a client writing money as a float may mean
					// reais (10.0 for R$ 10,00), so it is refused, saying how to write it.
					return v, invalid(te.Field, "%s must be a whole number of centavos written without a decimal point or exponent, e.g. 1050 for R$ 10,50 (got %s)", te.Field, got)
				}
				return v, invalid(te.Field, "%s must be a whole number of centavos, e.g. 1050 for R$ 10,50 (got %s)", te.Field, got)
			}
			return v, invalid(te.Field, "%s must be %s", te.Field, jsonKind(te.Type))
		}
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return v, invalid("", "request body is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
		}
		return v, invalid("", "request body is not valid JSON")
	}
	if notJSON { // not reached: exactKeys reads encoding/json's grammar; were they to differ, a value read with keys in any case is still not used
		var zero T
		return zero, invalid("", "request body is not valid JSON")
	}
	return v, nil
}

// plainJSON reports whether a Content-Type is one of the two every client sends, which
// need no parsing (mime.ParseMediaType allocates its parameters).
func plainJSON(ct string) bool {
	return strings.EqualFold(ct, "application/json") || strings.EqualFold(ct, "application/json; charset=utf-8")
}

// readBody is io.ReadAll of the request body, read into one buffer of the size the
// Content-Length announces (plus one byte, to see the end) instead of one grown from 512
// bytes. The body's reader (http.MaxBytesReader, set by New) still enforces the limit, and
// a body longer or shorter than announced is read as it comes.
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n <= 0 || n >= DefaultMaxBodyBytes {
		return io.ReadAll(r.Body)
	}
	b := make([]byte, 0, n+1)
	for {
		m, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than announced: grow as ReadAll would
		}
	}
}

// centavos is money on the wire: a JSON integer of centavos (1050 is R$ 10,50). decode
// refuses anything else (10.5, 1e3, 500.0, "1050", an amount beyond int64) naming the
// field, so no float ever reaches an amount: a client that writes money as a float may
// mean reais, and 10.0 read as 10 centavos would charge a hundredth of what it meant.
type centavos int64

// gotJSON names the JSON value an UnmarshalTypeError describes: "10.5" for "number 10.5",
// "a string" for "string", "an array" for "array".
func gotJSON(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	if v == "array" || v == "object" {
		return "an " + v
	}
	return "a " + v
}

// jsonKind names the JSON type a Go type is decoded from: "a string", "a number".
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a different type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	default:
		return "a different type"
	}
}

// taxIDString reads a tax ID given either as a string or as a {taxID, type} object (the
// wire uses both); null or absent is "". An object's type, when sent, must be BR:CPF or
// BR:CNPJ (CPF and CNPJ too, in any case) and agree with the tax ID: a CPF sent as a CNPJ
// is refused naming <field>.type rather than stored as what it is.
func taxIDString(field string, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		TaxID *string `json:"taxID"`
		Type  string  `json:"type"`
	}
	err := unmarshalExact(raw, &obj)
	if dup, ok := errors.AsType[*duplicateKeyError](err); ok {
		return "", dup.invalid(field) // decode found any key given twice; a field named in two cases in this raw value is found here
	}
	if err == nil && raw[0] == '{' {
		if obj.TaxID == nil {
			// Not "no tax ID": on PATCH /customer that would erase the stored one.
			return "", invalid(field+".taxID", "%s.taxID is required in a {taxID, type} object (send \"\" to remove it)", field)
		}
		return *obj.TaxID, checkTaxIDType(field+".type", obj.Type, *obj.TaxID)
	}
	return "", invalid(field, "%s must be a string or a {taxID, type} object", field)
}

// checkTaxIDType checks the type sent with taxID (see taxIDString). A tax ID that is not
// valid is left to the Service, which names the tax ID's own field.
func checkTaxIDType(field, typ, taxID string) error {
	typ = strings.ToUpper(strings.TrimSpace(typ))
	if typ == "" {
		return nil
	}
	want := brcode.TaxIDType("BR:" + strings.TrimPrefix(typ, "BR:"))
	if want != brcode.CPF && want != brcode.CNPJ {
		return invalid(field, "%s must be BR:CPF or BR:CNPJ", field)
	}
	if _, kind, err := brcode.ParseTaxID(taxID); err == nil && kind != want {
		return invalid(field, "%s is %s but the tax ID is a %s", field, want, kind)
	}
	return nil
}

// listParams reads the page from the query: skip and limit, both optional. Values that are
// not whole numbers are rejected naming the parameter; bounds are the Service's to check.
func listParams(r *http.Request) (payments.ListParams, error) {
	q := r.URL.Query()
	var p payments.ListParams
	for _, f := range []struct {
		name string
		v    *int
	}{{"skip", &p.Skip}, {"limit", &p.Limit}} {
		s := strings.TrimSpace(q.Get(f.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return p, invalid(f.name, "%s must be a whole number", f.name)
		}
		if f.name == "limit" && n == 0 {
			// In Go, a zero Limit means the default; on the wire, limit=0 is out of the
			// range the error names (the reference's lists take at least 1): refused,
			// rather than answered with a page of 100.
			return p, invalid("limit", "limit must be between 1 and %d", payments.MaxLimit)
		}
		*f.v = n
	}
	return p, nil
}

// queryTime reads the optional RFC 3339 date-time in the query parameter name ("" is the
// zero time). A "+" of the zone offset sent unencoded arrives as a space and is put back.
func queryTime(r *http.Request, name string) (time.Time, error) {
	s := strings.TrimSpace(r.URL.Query().Get(name))
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.ReplaceAll(s, " ", "+"))
	if err != nil {
		return time.Time{}, invalid(name, "%s must be an RFC 3339 date-time, e.g. 2026-11-22T12:00:00Z", name)
	}
	if t.IsZero() {
		// 0001-01-01T00:00:00Z sent is a bound (an end before everything lists nothing),
		// but the zero time is "no bound" to the Service's filters: a nanosecond later is
		// the same bound for every record there can be
		t = t.Add(time.Nanosecond)
	}
	return t, nil
}

// queryBool reads the optional boolean query parameter name: true or false in any case,
// or 1 or 0; absent or empty is false.
func queryBool(r *http.Request, name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(r.URL.Query().Get(name))) {
	case "", "false", "0":
		return false, nil
	case "true", "1": // PHP's http_build_query writes a bool as 1 or 0 (the PHP SDK's return_existing)
		return true, nil
	}
	return false, invalid(name, "%s must be true or false (or 1 or 0)", name)
}

// deletedReply is the answer of a DELETE that worked: {"id": <id as given>, "status": "OK"}.
type deletedReply struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

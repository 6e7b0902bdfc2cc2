package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pixfoundry/payments/store"
)

// Code classifies an error. Callers branch on codes, never on messages.
// The set is small and only grows.
type Code string

// Error codes.
const (
	EINVALID        Code = "invalid"             // bad input; Field names it
	ENOTFOUND       Code = "not_found"           // no such record in the caller's company
	ECONFLICT       Code = "conflict"            // a unique value (correlationID, tax ID) is taken
	EUNAUTHORIZED   Code = "unauthorized"        // no or unknown credentials
	EFORBIDDEN      Code = "forbidden"           // credentials valid, operation not allowed
	EPRECONDITION   Code = "failed_precondition" // the state does not allow it (no balance, expired charge)
	EINTERNAL       Code = "internal"            // anything else; details go to the log, not the caller
	ENOTIMPLEMENTED Code = "not_implemented"     // an operation this version does not offer yet
	ECANCELED       Code = "canceled"            // the caller's context ended (canceled or past its deadline)
	EUNAVAILABLE    Code = "unavailable"         // the bank (the Rail) did not answer; nothing changed, try again
)

// Error is the one error type of the package. Message is safe to show to the caller;
// the wrapped cause of an internal error is for logs only.
type Error struct {
	Code    Code
	Field   string // the offending input field, e.g. "customer.taxID"
	Message string
	cause   error
	code    bool // a code sentinel (ErrNotFound, ...): Is matches every error of its Code
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether e has the code of target when target is one of the code sentinels
// (ErrNotFound, ErrInvalid, ...): errors.Is(err, payments.ErrNotFound) is true of every
// error of code ENOTFOUND, whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.code && t.Code == e.Code
}

// The code sentinels, one for each Code, for errors.Is: errors.Is(err, ErrNotFound) is
// ErrorCode(err) == ENOTFOUND, for the errors of this package. A foreign error (which
// ErrorCode calls EINTERNAL) is none of them; branch on ErrorCode where that matters.
var (
	ErrInvalid        = &Error{Code: EINVALID, Message: "invalid", code: true}
	ErrNotFound       = &Error{Code: ENOTFOUND, Message: "not found", code: true}
	ErrConflict       = &Error{Code: ECONFLICT, Message: "conflict", code: true}
	ErrUnauthorized   = &Error{Code: EUNAUTHORIZED, Message: "unauthorized", code: true}
	ErrForbidden      = &Error{Code: EFORBIDDEN, Message: "forbidden", code: true}
	ErrPrecondition   = &Error{Code: EPRECONDITION, Message: "failed precondition", code: true}
	ErrInternal       = &Error{Code: EINTERNAL, Message: "internal error", code: true}
	ErrNotImplemented = &Error{Code: ENOTIMPLEMENTED, Message: "not implemented", code: true}
	ErrCanceled       = &Error{Code: ECANCELED, Message: "canceled", code: true}
	ErrUnavailable    = &Error{Code: EUNAVAILABLE, Message: "unavailable", code: true}
)

// ErrorCode returns the code of err: "" for nil, the Code of an *Error, and EINTERNAL for
// any foreign error.
func ErrorCode(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	default:
		return EINTERNAL
	}
}

// ErrorField returns the offending field of err, or "".
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// ErrorMessage returns the message of err that is safe to show a caller: foreign errors
// become "internal error".
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e) && e.Code != EINTERNAL:
		return e.Message
	default:
		return "internal error"
	}
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Code: ENOTFOUND, Message: fmt.Sprintf(format, args...)}
}

func conflict(field, format string, args ...any) *Error {
	return &Error{Code: ECONFLICT, Field: field, Message: fmt.Sprintf(format, args...)}
}

// unavailable is the error of a call to the Rail that failed for a reason of its own (the
// bank unreachable or failing): the caller may try again; cause is for logs.
func unavailable(field string, cause error, format string, args ...any) *Error {
	return &Error{Code: EUNAVAILABLE, Field: field, Message: fmt.Sprintf(format, args...), cause: cause}
}

func precondition(field, format string, args ...any) *Error {
	return &Error{Code: EPRECONDITION, Field: field, Message: fmt.Sprintf(format, args...)}
}

// internal wraps a foreign error; its text stays out of the caller's message.
func internal(err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &Error{Code: ECANCELED, Message: "request canceled", cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: ECANCELED, Message: "request timed out", cause: err}
	}
	return &Error{Code: EINTERNAL, Message: "internal error", cause: err}
}

// storeErr turns a store error about one record into an *Error naming the noun and, for a
// conflict, the field whose value is taken.
func storeErr(err error, noun string) error {
	if err == nil {
		return nil
	}
	return storeErrOf(err, noun)
}

// storeErrOf is storeErr of an error: apart, so that storeErr of nil, a store call that
// worked, is inlined and allocates nothing (errors.As's target escapes).
func storeErrOf(err error, noun string) error {
	var ce *store.ConflictError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("%s not found", capitalize(noun)) // "Charge not found", as the real API
	case errors.As(err, &ce):
		field := conflictField(ce.Key)
		return conflict(field, "%s with this %s already exists", noun, field)
	default:
		return internal(err)
	}
}

// conflictField is the field a taken unique key is made of. Keys are "<field>:<value>"
// ("correlationID:abc", "taxID:52998224725", "endToEndId:E..."), and a store names a
// taken record id "id:<id>".
func conflictField(key string) string {
	field, _, _ := strings.Cut(key, ":")
	return field
}

// capitalize upper-cases the first letter of an ASCII noun: "charge" -> "Charge".
func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

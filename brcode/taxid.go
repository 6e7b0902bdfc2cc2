package brcode

import (
	"errors"
	"fmt"
)

// TaxIDType names the kind of a Brazilian tax ID.
type TaxIDType string

// Tax ID types.
const (
	// CPF is the individual taxpayer registry number (11 digits).
	CPF TaxIDType = "BR:CPF"
	// CNPJ is the company registry number (14 characters, alphanumeric root and branch allowed).
	CNPJ TaxIDType = "BR:CNPJ"
)

// ErrInvalidTaxID is wrapped by every error ParseTaxID returns; the wrapping
// error says why (length or characters, check digits, all-equal digits).
var ErrInvalidTaxID = errors.New("invalid tax ID")

const (
	cpfLen  = 11
	cnpjLen = 14
)

// ParseTaxID accepts a CPF or CNPJ with or without mask (".", "-", "/", spaces),
// upper-cases letters, and returns the bare canonical form and its type.
// A CNPJ may be alphanumeric (12 characters [0-9A-Z] followed by 2 numeric check
// digits, character value = ASCII code - 48), e.g. "12.ABC.345/01DE-35".
// The error wraps ErrInvalidTaxID and says why the input was refused.
func ParseTaxID(s string) (string, TaxIDType, error) {
	var buf [cnpjLen]byte
	n := 0
	letters := false
	for _, r := range s {
		switch {
		case r == '.' || r == '-' || r == '/' || r == ' ':
			continue
		case r >= '0' && r <= '9':
		case r >= 'A' && r <= 'Z':
			letters = true
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
			letters = true
		default:
			return "", "", taxIDErr("unexpected character %q", r)
		}
		if n == cnpjLen {
			return "", "", taxIDErr("too long: want 11 (CPF) or 14 (CNPJ) characters")
		}
		buf[n] = byte(r)
		n++
	}
	id := string(buf[:n])
	switch n {
	case cpfLen:
		if letters {
			return "", "", taxIDErr("CPF must contain only digits")
		}
		if err := checkCPF(id); err != nil {
			return "", "", err
		}
		return id, CPF, nil
	case cnpjLen:
		if err := checkCNPJ(id); err != nil {
			return "", "", err
		}
		return id, CNPJ, nil
	default:
		return "", "", taxIDErr("wrong length %d: want 11 (CPF) or 14 (CNPJ) characters", n)
	}
}

// ValidCPF reports whether s is a bare 11-digit CPF with valid check digits
// that is not one of the all-equal sequences.
func ValidCPF(s string) bool { return checkCPF(s) == nil }

// ValidCNPJ reports whether s is a bare 14-character CNPJ with valid check digits:
// 12 characters [0-9A-Z] (upper-case) followed by 2 digits, not all equal.
func ValidCNPJ(s string) bool { return checkCNPJ(s) == nil }

func taxIDErr(format string, args ...any) error {
	return &reasonError{kind: ErrInvalidTaxID, reason: fmt.Sprintf(format, args...)}
}

// reasonError is an error of a kind (a sentinel it matches with errors.Is)
// with the reason it happened.
type reasonError struct {
	kind   error
	reason string
}

// Error returns "brcode: <kind>: <reason>".
func (e *reasonError) Error() string { return "brcode: " + e.kind.Error() + ": " + e.reason }

// Is makes errors.Is(err, kind) true.
func (e *reasonError) Is(target error) bool { return target == e.kind }

func checkCPF(s string) error {
	if len(s) != cpfLen {
		return taxIDErr("CPF must have 11 digits, got %d characters", len(s))
	}
	for i := 0; i < cpfLen; i++ {
		if !isDigit(s[i]) {
			return taxIDErr("CPF must contain only digits")
		}
	}
	if allEqual(s) {
		return taxIDErr("CPF with all digits equal")
	}
	if mod11(s[:9], 10) != s[9]-'0' || mod11(s[:10], 11) != s[10]-'0' {
		return taxIDErr("CPF check digits do not match")
	}
	return nil
}

func checkCNPJ(s string) error {
	if len(s) != cnpjLen {
		return taxIDErr("CNPJ must have 14 characters, got %d", len(s))
	}
	for i := 0; i < 12; i++ {
		if !isDigit(s[i]) && !(s[i] >= 'A' && s[i] <= 'Z') {
			return taxIDErr("CNPJ root and branch must be digits or upper-case letters")
		}
	}
	if !isDigit(s[12]) || !isDigit(s[13]) {
		return taxIDErr("CNPJ check digits must be digits")
	}
	if allEqual(s) {
		return taxIDErr("CNPJ with all digits equal")
	}
	if cnpjDV(s[:12]) != s[12]-'0' || cnpjDV(s[:13]) != s[13]-'0' {
		return taxIDErr("CNPJ check digits do not match")
	}
	return nil
}

// mod11 computes a CPF check digit over digits with weights w, w-1, ..., 2.
func mod11(digits string, w int) byte {
	sum := 0
	for i := 0; i < len(digits); i++ {
		sum += int(digits[i]-'0') * (w - i)
	}
	return dv(sum)
}

// cnpjDV computes a CNPJ check digit over 12 or 13 characters, weights cycling
// 2..9 from the right, each character valued ASCII - 48.
func cnpjDV(chars string) byte {
	sum, w := 0, 2
	for i := len(chars) - 1; i >= 0; i-- {
		sum += int(chars[i]-'0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	return dv(sum)
}

func dv(sum int) byte {
	r := sum % 11
	if r < 2 {
		return 0
	}
	return byte(11 - r)
}

func allEqual(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] != s[0] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

package brcode

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// KeyType names the kind of a Pix key, as in the DICT API.
type KeyType string

// Pix key types.
const (
	// KeyCPF is a CPF key: 11 digits with valid check digits.
	KeyCPF KeyType = "CPF"
	// KeyCNPJ is a CNPJ key: 14 characters, alphanumeric root/branch allowed, valid check digits.
	KeyCNPJ KeyType = "CNPJ"
	// KeyEmail is an e-mail key: lower-case, at most 77 characters.
	KeyEmail KeyType = "EMAIL"
	// KeyPhone is a phone key: +55, area code and 9-digit mobile number.
	KeyPhone KeyType = "PHONE"
	// KeyEVP is a random key (UUID, 8-4-4-4-12 lower-case hex).
	KeyEVP KeyType = "EVP"
)

// MaxKeyLen is the longest Pix key the DICT accepts.
const MaxKeyLen = 77

// ErrInvalidKey is wrapped by every error NormalizeKey, DetectKey and
// ParseKeyType return; the wrapping error says why.
var ErrInvalidKey = errors.New("invalid Pix key")

// errUnknownKey marks a key whose shape matches no key type (see DetectKey).
var errUnknownKey = keyErr("cannot tell the key type: not an e-mail, phone, EVP, CPF or CNPJ")

var (
	// emailRE is the DICT e-mail pattern (BCB API-DICT key table).
	emailRE = regexp.MustCompile("^[a-z0-9.!#$&'*+\\/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$")
	// phoneRE is a Brazilian mobile number in E.164 form.
	phoneRE = regexp.MustCompile(`^\+55[1-9]{2}9\d{8}$`)
)

// ParseKeyType accepts CPF, CNPJ, EMAIL, PHONE, EVP and the OpenPix wire name
// RANDOM (= EVP), case-insensitive, surrounding spaces ignored.
func ParseKeyType(s string) (KeyType, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CPF":
		return KeyCPF, nil
	case "CNPJ":
		return KeyCNPJ, nil
	case "EMAIL":
		return KeyEmail, nil
	case "PHONE":
		return KeyPhone, nil
	case "EVP", "RANDOM":
		return KeyEVP, nil
	}
	return "", keyErr("unknown key type %q: want CPF, CNPJ, EMAIL, PHONE, EVP or RANDOM", s)
}

// NormalizeKey validates key as a key of type t and returns its DICT canonical form:
// CPF/CNPJ bare (mask removed, letters upper-cased) with valid check digits;
// phone "+55DDNNNNNNNNN" (spaces, dashes, dots and parentheses removed; a missing "+" is
// added when the number starts with 55 and has 13 digits, and "+55" to a mobile number
// written without them, DDNNNNNNNNN: the caller says it is a phone); e-mail lower-cased,
// at most 77 characters; EVP lower-cased 8-4-4-4-12 hex (any UUID version).
// The error wraps ErrInvalidKey and says why the key was refused.
func NormalizeKey(key string, t KeyType) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", keyErr("empty key")
	}
	switch t {
	case KeyCPF, KeyCNPJ:
		id, typ, err := ParseTaxID(key)
		if err != nil {
			return "", keyErr("%s", err.(*reasonError).reason)
		}
		if t == KeyCPF && typ != CPF {
			return "", keyErr("CPF key must have 11 digits, got a CNPJ")
		}
		if t == KeyCNPJ && typ != CNPJ {
			return "", keyErr("CNPJ key must have 14 characters, got a CPF")
		}
		return id, nil
	case KeyPhone:
		return normalizePhone(key, true)
	case KeyEmail:
		if strings.IndexFunc(key, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
			// The DICT's e-mail keys are ASCII; checked before lower-casing, which maps
			// some other letters onto ASCII ones (the Kelvin sign K onto k) and so
			// would turn a key nobody has into somebody else's.
			return "", keyErr("e-mail key with a character outside ASCII")
		}
		k := strings.ToLower(key)
		if len(k) > MaxKeyLen {
			return "", keyErr("e-mail longer than %d characters", MaxKeyLen)
		}
		if !emailRE.MatchString(k) {
			return "", keyErr("malformed e-mail address")
		}
		return k, nil
	case KeyEVP:
		if !isUUID(key) {
			return "", keyErr("EVP must be a UUID in 8-4-4-4-12 hex form")
		}
		return strings.ToLower(key), nil
	}
	return "", keyErr("unknown key type %q", t)
}

// DetectKey guesses the type of a key when the caller did not give one and
// returns it with the canonical form: "@" means EMAIL, the UUID shape EVP,
// a leading "+", parentheses or 13 digits starting with 55 PHONE, 11 digits CPF
// and 14 characters CNPJ (both with valid check digits). An 11-digit number is
// always taken as a CPF, never as a phone without country code; pass the type to
// NormalizeKey when that matters. When such a number is not a valid CPF but has
// the shape of a mobile number (area code, then 9), the error says that a phone
// key needs +55, rather than only that the CPF's check digits are wrong.
func DetectKey(key string) (KeyType, string, error) {
	if strings.TrimSpace(key) == "" {
		return "", "", keyErr("empty key")
	}
	t := keyShape(key)
	if t == "" {
		return "", "", errUnknownKey
	}
	var k string
	var err error
	if t == KeyPhone {
		k, err = normalizePhone(strings.TrimSpace(key), false) // a guess: no +55 added
	} else {
		k, err = NormalizeKey(key, t)
	}
	if err != nil {
		var re *reasonError
		if d, ok := nationalMobile(key); ok && t == KeyCPF && errors.As(err, &re) {
			return "", "", keyErr("%s; read as a CPF because it has 11 digits: a phone key needs the country code, +55%s", re.reason, d)
		}
		return "", "", err
	}
	return t, k, nil
}

// nationalMobile returns the digits of key when they are a Brazilian mobile number
// without country code: 11 digits, an area code without 0, then 9.
func nationalMobile(key string) (string, bool) {
	d := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.', '(', ')':
			return -1
		}
		return r
	}, strings.TrimSpace(key))
	if len(d) != cpfLen || d[0] == '0' || d[1] == '0' || d[2] != '9' {
		return "", false
	}
	for i := 0; i < len(d); i++ {
		if !isDigit(d[i]) {
			return "", false
		}
	}
	return d, true
}

// keyShape classifies key by its shape only ("" when it matches none).
func keyShape(key string) KeyType {
	key = strings.TrimSpace(key)
	switch {
	case strings.Contains(key, "@"):
		return KeyEmail
	case isUUID(key):
		return KeyEVP
	case strings.HasPrefix(key, "+"), strings.ContainsAny(key, "()"):
		return KeyPhone
	}
	var buf [cnpjLen]byte
	n, digits := 0, true
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '.' || c == '-' || c == '/' || c == ' ':
			continue
		case isDigit(c):
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			digits = false
		default:
			return ""
		}
		if n == len(buf) {
			return ""
		}
		buf[n] = c
		n++
	}
	switch {
	case digits && n == 13 && buf[0] == '5' && buf[1] == '5':
		return KeyPhone
	case digits && n == cpfLen:
		return KeyCPF
	case n == cnpjLen && isDigit(buf[12]) && isDigit(buf[13]):
		return KeyCNPJ
	}
	return ""
}

// normalizePhone gives a phone key in DICT's form, +55DDNNNNNNNNN. Spaces, dashes, dots
// and parentheses between the digits are dropped, and the + of 55DDNNNNNNNNN is added.
// When typed (the caller said the key is a phone), a mobile number without country code
// (DDNNNNNNNNN) gets +55: the reference's rule for the 11 digits a CPF also has is to
// take the type from the caller. DetectKey, which guesses, does not add it.
func normalizePhone(key string, typed bool) (string, error) {
	var b strings.Builder
	b.Grow(14)
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case ' ', '-', '.', '(', ')':
		default:
			b.WriteByte(c)
		}
	}
	p := b.String()
	if d, ok := nationalMobile(p); ok && typed {
		p = "+55" + d
	} else if !strings.HasPrefix(p, "+") && len(p) == 13 && strings.HasPrefix(p, "55") {
		p = "+" + p
	}
	if !phoneRE.MatchString(p) {
		return "", keyErr("phone must be +55, a 2-digit area code and a 9-digit mobile number starting with 9")
	}
	return p, nil
}

// isUUID reports whether s is 8-4-4-4-12 hex digits (either case).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func keyErr(format string, args ...any) error {
	return &reasonError{kind: ErrInvalidKey, reason: fmt.Sprintf(format, args...)}
}

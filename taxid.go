package payments

import (
	"errors"
	"regexp"
	"strings"

	"github.com/pixfoundry/payments/brcode"
)

// TaxIDType is the kind of Brazilian tax number.
type TaxIDType = brcode.TaxIDType

// Tax ID types, as the wire writes them: brcode.CPF and brcode.CNPJ.
const (
	TaxIDCPF  TaxIDType = "BR:CPF"  // a person
	TaxIDCNPJ TaxIDType = "BR:CNPJ" // a company (numeric or alphanumeric)
)

// TaxID is a validated CPF or CNPJ as returned by the API: {taxID, type}.
type TaxID struct {
	TaxID string    `json:"taxID"`
	Type  TaxIDType `json:"type"`
}

// parseTaxID validates a CPF or CNPJ given with or without mask. Validation itself lives in
// package brcode, the one place for tax IDs and Pix keys.
func parseTaxID(field, s string) (*TaxID, error) {
	id, typ, err := brcode.ParseTaxID(s)
	if err != nil {
		return nil, invalid(field, "%s is not a valid CPF or CNPJ: %s", field, reason(err))
	}
	return &TaxID{TaxID: id, Type: typ}, nil
}

// parsePixKey validates a Pix key of the given type (or of any type when typ is empty)
// and returns its canonical form.
func parsePixKey(field, key, typ string) (string, brcode.KeyType, error) {
	if strings.TrimSpace(key) == "" {
		return "", "", invalid(field, "%s is required", field)
	}
	if typ == "" {
		t, k, err := brcode.DetectKey(key)
		if err != nil {
			return "", "", invalid(field, "%s is not a valid Pix key: %s", field, reason(err))
		}
		return k, t, nil
	}
	t, err := brcode.ParseKeyType(typ)
	if err != nil {
		return "", "", invalid(field+"Type", "%sType: %s", field, reason(err))
	}
	k, err := brcode.NormalizeKey(key, t)
	if err != nil {
		return "", "", invalid(field, "%s is not a valid %s Pix key: %s", field, t, reason(err))
	}
	return k, t, nil
}

// reason is a brcode error's text without the package prefix and, for an invalid key or
// tax ID, without the kind the caller's message already says.
func reason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "brcode: ")
	for _, kind := range []error{brcode.ErrInvalidKey, brcode.ErrInvalidTaxID} {
		if errors.Is(err, kind) {
			msg = strings.TrimPrefix(msg, kind.Error()+": ")
		}
	}
	return msg
}

var (
	emailRE = regexp.MustCompile(`^[^@\s]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`)
	phoneRE = regexp.MustCompile(`^\+?[0-9]{10,15}$`)
)

// cleanEmail checks an e-mail address's shape and lower-cases its domain.
func cleanEmail(field, s string) (string, error) {
	s, err := cleanString(field, s, 254)
	if err != nil || s == "" {
		return s, err
	}
	if !emailRE.MatchString(s) {
		return "", invalid(field, "%s is not a valid e-mail address", field)
	}
	at := strings.LastIndexByte(s, '@')
	return s[:at] + strings.ToLower(s[at:]), nil
}

// cleanPhone accepts a phone number with or without "+", spaces, dashes and parentheses,
// and returns its digits (with the "+" if given). 10 to 15 digits: DDD + number, or E.164.
func cleanPhone(field, s string) (string, error) {
	s, err := cleanString(field, s, 32)
	if err != nil || s == "" {
		return s, err
	}
	s = strings.NewReplacer(" ", "", "-", "", "(", "", ")", "", ".", "").Replace(s)
	if !phoneRE.MatchString(s) {
		return "", invalid(field, "%s must be a phone number with 10 to 15 digits, e.g. +5511999999999", field)
	}
	return s, nil
}

func parseTaxIDQuiet(s string) (string, TaxIDType, error) { return brcode.ParseTaxID(s) }

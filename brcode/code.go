package brcode

import (
	"strings"
	"unicode/utf8"
)

// Limits of the BR Code format.
const (
	// MaxPayloadLen is the longest BR Code, in characters (pixCopiaECola maxLength).
	MaxPayloadLen = 512
	// MaxNameLen is the longest merchant name (field 59).
	MaxNameLen = 25
	// MaxCityLen is the longest merchant city (field 60).
	MaxCityLen = 15
	// MaxTxIDLen is the longest reference label / static txid (field 62-05).
	MaxTxIDLen = 25
	// MaxURLLen is the longest payload URL (field 26-25), the API "location".
	MaxURLLen = 77
	// MaxAmount is the largest amount in centavos (\d{1,10}\.\d{2}).
	MaxAmount = 999_999_999_999
)

// Fixed values of Pix BR Codes.
const (
	// PixGUI is the globally unique identifier of the Pix arrangement (26-00).
	PixGUI = "br.gov.bcb.pix"
	// NoTxID is the 62-05 value of a code without txid (and of every dynamic code).
	NoTxID = "***"
	// StaticMultiUse is field 01 of a reusable code ("11").
	StaticMultiUse = "11"
	// DynamicSingleUse is field 01 of a single-use code ("12"), emitted on dynamic codes.
	DynamicSingleUse = "12"
)

// Code is a parsed Pix BR Code. Parse fills every field; Encode writes it back.
// Pix-specific fields are decoded; the data objects Pix does not interpret are
// kept verbatim, sorted by ID, in Accounts, Templates and AdditionalData so a
// code re-encodes losslessly.
type Code struct {
	// PointOfInitiation is field 01: "" (absent), "11" (reusable) or "12" (single use).
	PointOfInitiation string
	// GUI is 26-00 as written (br.gov.bcb.pix in any case); "" encodes as PixGUI.
	GUI string
	// Key is the Pix key (26-01) as written, of a static code.
	Key string
	// Info is the free text shown to the payer (26-02), static only.
	Info string
	// FSS is the ISPB of the withdrawal facilitator (26-03, Pix Saque), 8 digits.
	FSS string
	// URL is the payload location of a dynamic code (26-25), without scheme.
	URL string
	// MCC is the merchant category code (52), 4 digits, "0000" in Pix examples.
	MCC string
	// Currency is the ISO 4217 numeric currency (53), always "986".
	Currency string
	// Amount is the transaction amount (54) in centavos, 0 when absent.
	Amount int64
	// HasAmount reports whether field 54 is present.
	HasAmount bool
	// Country is the country code (58), always "BR".
	Country string
	// Name is the merchant name (59), 1 to 25 characters.
	Name string
	// City is the merchant city (60), 1 to 15 characters.
	City string
	// PostalCode is the CEP (61), 8 digits, "" when absent.
	PostalCode string
	// TxID is the reference label (62-05): "***" or up to 25 characters.
	TxID string
	// Accounts are the other merchant account objects (IDs 02–25 and 27–51), sorted by ID.
	Accounts []Field
	// Templates are the unreserved templates (IDs 80–99, e.g. the Pix Automático
	// recurrence template), sorted by ID, values verbatim.
	Templates []Field
	// AdditionalData are the fields of template 62 other than 05, sorted by ID,
	// values verbatim (e.g. the legacy 62-50 BR.GOV.BCB.BRCODE template).
	AdditionalData []Field
}

// Dynamic reports whether the code is dynamic: its Pix template carries a
// payload URL (26-25) instead of a key.
func (c *Code) Dynamic() bool { return c.URL != "" }

// RecurrenceURL returns the Pix Automático recurrence URL: 25 of the first
// unreserved template (80–99) whose GUI is br.gov.bcb.pix; "" if none.
func (c *Code) RecurrenceURL() string {
	for _, t := range c.Templates {
		if u := pixRecurrenceURL(t.Value); u != "" {
			return u
		}
	}
	return ""
}

// KeyType returns the type of Key, or "" when the code has no key or the key
// has no recognizable type (possible only in multi-arrangement codes).
func (c *Code) KeyType() KeyType {
	t, _, err := DetectKey(c.Key)
	if err != nil {
		return ""
	}
	return t
}

// pixRecurrenceURL returns 25 of a template value with the Pix GUI, or "".
func pixRecurrenceURL(v string) string {
	fields, err := subFields("", v, true)
	if err != nil || len(fields) == 0 || !strings.EqualFold(fields[0].Value, PixGUI) {
		return ""
	}
	for _, f := range fields {
		if f.ID == "25" {
			return f.Value
		}
	}
	return ""
}

// multiArrangement reports whether the code carries merchant accounts of other
// arrangements besides Pix (the generic BR Code of the Manual do BR Code).
func (c *Code) multiArrangement() bool { return len(c.Accounts) > 0 }

// validate checks every content rule; Parse and Encode share it.
func (c *Code) validate() *ParseError {
	switch c.PointOfInitiation {
	case "", StaticMultiUse, DynamicSingleUse:
	default:
		return perr("01", "point of initiation method must be 11 or 12, got %q", c.PointOfInitiation)
	}
	if err := c.validatePix(); err != nil {
		return err
	}
	if len(c.MCC) != 4 || !allDigits(c.MCC) {
		return perr("52", "merchant category code must be 4 digits, got %q", c.MCC)
	}
	if c.Currency != "986" {
		return perr("53", "currency must be 986 (BRL), got %q", c.Currency)
	}
	if c.Amount < 0 || c.HasAmount && c.Amount == 0 {
		return perr("54", "amount must be greater than zero")
	}
	if c.Amount > MaxAmount {
		return perr("54", "amount too large")
	}
	if c.Country != "BR" {
		return perr("58", "country code must be BR, got %q", c.Country)
	}
	if err := checkText("59", c.Name, MaxNameLen, "merchant name"); err != nil {
		return err
	}
	if err := checkText("60", c.City, MaxCityLen, "merchant city"); err != nil {
		return err
	}
	if c.PostalCode != "" && (len(c.PostalCode) != 8 || !allDigits(c.PostalCode)) {
		return perr("61", "postal code must be 8 digits, got %q", c.PostalCode)
	}
	if err := c.validateTxID(); err != nil {
		return err
	}
	return c.validateExtras()
}

func (c *Code) validatePix() *ParseError {
	if c.GUI != "" && !strings.EqualFold(c.GUI, PixGUI) {
		return perr("26.00", "GUI must be %s, got %q", PixGUI, c.GUI)
	}
	switch {
	case c.Key != "" && c.URL != "":
		return perr("26", "template has both a key (01) and a URL (25)")
	case c.Key == "" && c.URL == "" && c.RecurrenceURL() == "":
		return perr("26", "template has neither a key (01) nor a URL (25)")
	}
	if c.Key != "" {
		if err := checkKey(c.Key, c.multiArrangement()); err != nil {
			return err
		}
	}
	if c.URL != "" {
		if err := checkURL("26.25", c.URL); err != nil {
			return err
		}
		if c.Info != "" {
			return perr("26.02", "info is allowed only with a key, not in a dynamic code")
		}
		if c.FSS != "" {
			return perr("26.03", "fss is allowed only with a key, not in a dynamic code")
		}
	}
	if c.Key == "" && c.URL == "" && (c.Info != "" || c.FSS != "") {
		return perr("26", "info and fss need a key (01)")
	}
	if c.Info != "" && !printable(c.Info, false) {
		return perr("26.02", "info has non-printable characters")
	}
	if c.FSS != "" && (len(c.FSS) != 8 || !allDigits(c.FSS)) {
		return perr("26.03", "fss must be an 8-digit ISPB, got %q", c.FSS)
	}
	gui := c.GUI
	if gui == "" {
		gui = PixGUI
	}
	n := 4 + len(gui) + tlvLen(c.Key) + tlvLen(c.Info) + tlvLen(c.FSS) + tlvLen(c.URL)
	if n > 99 {
		if c.Info != "" {
			return perr("26.02", "info (comment) too long: template 26 needs %d characters, max 99; with this key the info can have at most %d",
				n, 99-(n-tlvLen(c.Info))-4)
		}
		return perr("26", "template longer than 99 characters (%d)", n)
	}
	return nil
}

// tlvLen is the encoded length of an optional value (0 when empty).
func tlvLen(v string) int {
	if v == "" {
		return 0
	}
	return 4 + utf8.RuneCountInString(v)
}

// checkKey validates a 26-01 key: a DICT key in canonical form (letter case
// aside). In a multi-arrangement code, a key with no recognizable type is
// tolerated (see Parse); a key that looks like a CPF, CNPJ, phone, e-mail or
// EVP must still be valid.
func checkKey(key string, relaxed bool) *ParseError {
	if utf8.RuneCountInString(key) > MaxKeyLen {
		return perr("26.01", "key longer than %d characters", MaxKeyLen)
	}
	t, canon, err := DetectKey(key)
	if err == errUnknownKey && relaxed {
		if !printable(key, true) || strings.Contains(key, " ") {
			return perr("26.01", "key must be printable ASCII without spaces")
		}
		return nil
	}
	if err != nil {
		return &ParseError{Tag: "26.01", Reason: reasonOf(err), Err: err}
	}
	if !strings.EqualFold(key, canon) {
		return &ParseError{Tag: "26.01", Reason: "key not in DICT canonical form: " + string(t) + " " + canon, Err: ErrInvalidKey}
	}
	return nil
}

// checkURL validates a payload or recurrence URL: printable ASCII without
// spaces, no scheme, at most 77 characters.
func checkURL(tag, u string) *ParseError {
	switch {
	case len(u) > MaxURLLen:
		return perr(tag, "URL longer than %d characters", MaxURLLen)
	case strings.Contains(u, "://"):
		return perr(tag, "URL must not include a scheme (https://)")
	case !printable(u, true) || strings.Contains(u, " "):
		return perr(tag, "URL must be printable ASCII without spaces")
	}
	return nil
}

func checkText(tag, v string, max int, what string) *ParseError {
	n := utf8.RuneCountInString(v)
	switch {
	case n == 0:
		return perr(tag, "%s is required", what)
	case n > max:
		return perr(tag, "%s longer than %d characters (%d)", what, max, n)
	case !printable(v, false):
		return perr(tag, "%s has non-printable characters", what)
	}
	return nil
}

// validateTxID checks 62-05. A static Pix-only code needs "***" or
// [A-Za-z0-9]{1,25}; in a dynamic code (where payers ignore it: the txid lives
// in the fetched payload) and in a multi-arrangement code (where 62-05 is the
// generic BR Code reference label) any printable ASCII up to 25 is tolerated.
func (c *Code) validateTxID() *ParseError {
	switch {
	case c.TxID == "":
		return perr("62.05", "txid (reference label) is required; use *** for none")
	case c.TxID == NoTxID:
		return nil
	case len(c.TxID) > MaxTxIDLen:
		return perr("62.05", "txid longer than %d characters", MaxTxIDLen)
	case c.Dynamic() || c.multiArrangement():
		if !printable(c.TxID, true) {
			return perr("62.05", "reference label must be printable ASCII")
		}
	case !alnum(c.TxID):
		return perr("62.05", "txid must be *** or letters and digits only, got %q", c.TxID)
	}
	return nil
}

func (c *Code) validateExtras() *ParseError {
	prev := -1
	for _, f := range sortedFields(c.Accounts) {
		if len(f.ID) != 2 || !allDigits(f.ID) {
			return perr("", "malformed merchant account ID %q", f.ID)
		}
		n := atoi2(f.ID)
		switch {
		case n < 2 || n > 51 || n == 26:
			return perr(f.ID, "not a merchant account ID (02–25, 27–51)")
		case n == prev:
			return perr(f.ID, "duplicate ID")
		}
		prev = n
		if err := checkRaw(f.ID, f.Value, n >= 27); err != nil {
			return err
		}
	}
	prev = -1
	for _, f := range sortedFields(c.Templates) {
		if len(f.ID) != 2 || !allDigits(f.ID) || atoi2(f.ID) < 80 {
			return perr(f.ID, "not an unreserved template ID (80–99)")
		}
		n := atoi2(f.ID)
		if n == prev {
			return perr(f.ID, "duplicate ID")
		}
		prev = n
		if err := checkRaw(f.ID, f.Value, true); err != nil {
			return err
		}
		if u := pixRecurrenceURL(f.Value); u != "" {
			if err := checkURL(f.ID+".25", u); err != nil {
				return err
			}
		}
	}
	prev = -1
	for _, f := range sortedFields(c.AdditionalData) {
		if len(f.ID) != 2 || !allDigits(f.ID) {
			return perr("62", "malformed ID %q", f.ID)
		}
		n := atoi2(f.ID)
		tag := "62." + f.ID
		switch {
		case n == 0 || n == 5 || n >= 10 && n < 50:
			return perr(tag, "not an additional data ID (01–09 besides 05, 50–99)")
		case n == prev:
			return perr(tag, "duplicate ID")
		}
		prev = n
		if err := checkRaw(tag, f.Value, n >= 50); err != nil {
			return err
		}
	}
	return nil
}

// checkRaw validates a verbatim value: 1..99 printable characters and, for a
// template, well-formed data objects starting with a GUI (00).
func checkRaw(tag, v string, template bool) *ParseError {
	n := utf8.RuneCountInString(v)
	if n == 0 || n > 99 {
		return perr(tag, "value must have 1 to 99 characters, got %d", n)
	}
	if !template {
		if !printable(v, false) {
			return perr(tag, "value has non-printable characters")
		}
		return nil
	}
	fields, err := subFields(tag, v, true)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if !printable(f.Value, false) {
			return perr(path(tag, f.ID), "value has non-printable characters")
		}
	}
	return nil
}

// sortedFields returns fs sorted by ID (fs itself when already sorted).
func sortedFields(fs []Field) []Field {
	sorted := true
	for i := 1; i < len(fs); i++ {
		if fs[i].ID < fs[i-1].ID {
			sorted = false
			break
		}
	}
	if sorted {
		return fs
	}
	out := append([]Field(nil), fs...)
	for i := 1; i < len(out); i++ { // insertion sort: a handful of fields
		for j := i; j > 0 && out[j].ID < out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

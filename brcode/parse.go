package brcode

import (
	"strings"
	"unicode/utf8"
)

// Parse decodes and strictly validates a Pix BR Code ("Pix Copia e Cola").
//
// Framing: valid UTF-8, at most 512 characters, lengths counted in characters,
// "00" = "01" first and "63" last, no duplicate IDs, no zero-length values,
// reserved IDs 65–79 (and the EMV tip/language fields 55–57, 64, unused by Pix)
// refused, templates 26–51 and 80–99 starting with a GUI (00). The CRC must be 4
// upper-case hex digits matching CRC16 of everything up to "6304" (a lower-case
// CRC is refused: it is a negative test vector and some readers reject it).
//
// Content: see Code; in short 01 ∈ {11, 12}; 26 with GUI br.gov.bcb.pix and
// exactly one of a key (01, a valid DICT key in canonical form) or a URL (25, no
// scheme, ≤ 77) — or neither when an unreserved template carries a Pix Automático
// recurrence URL; 03 fss 8 digits; 52 4 digits; 53 986; 54 \d{1,10}\.\d{2} > 0;
// 58 BR; 59 1–25; 60 1–15; 61 8 digits; 62 mandatory with 05 "***" or
// [A-Za-z0-9]{1,25}.
//
// Multi-arrangement codes (with other merchant accounts, IDs 02–25/27–51, like
// the Manual do BR Code examples) and dynamic codes are read as generic BR
// Codes in two respects: 62-05 may be any printable ASCII up to 25 (it is not
// the Pix txid there), and in multi-arrangement codes a 26-01 key of no
// recognizable type is tolerated; keys that look like a CPF, CNPJ, phone,
// e-mail or EVP are always checked.
//
// Errors are *ParseError naming the offending field.
func Parse(s string) (*Code, error) {
	if len(s) > utf8.UTFMax*MaxPayloadLen { // cannot be ≤ 512 characters: refuse before scanning
		return nil, perr("", "payload longer than %d characters", MaxPayloadLen)
	}
	if !utf8.ValidString(s) {
		return nil, perr("", "not valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > MaxPayloadLen {
		return nil, perr("", "payload has %d characters, max %d", n, MaxPayloadLen)
	}
	var (
		vals [100]string // top-level values by ID; zero-length values are refused, so "" = absent
		crc  bool
	)
	for i := 0; i < len(s); {
		id, val, next, err := nextTLV(s, i, "")
		if err != nil {
			return nil, err
		}
		if i == 0 && id != "00" {
			return nil, perr("00", "payload format indicator must be the first data object")
		}
		n := atoi2(id)
		if vals[n] != "" {
			return nil, perr(id, "duplicate ID")
		}
		vals[n] = val
		if id == "63" {
			if next != len(s) {
				return nil, perr("63", "CRC must be the last data object")
			}
			if err := checkCRC(val, s[:i+4]); err != nil {
				return nil, err
			}
			crc = true
		}
		i = next
	}
	if !crc {
		return nil, perr("63", "CRC is missing")
	}
	if vals[0] != "01" {
		return nil, perr("00", "payload format indicator must be 01, got %q", vals[0])
	}
	c, err := decode(&vals)
	if err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func checkCRC(got, covered string) *ParseError {
	if len(got) != 4 {
		return perr("63", "CRC must have 4 characters")
	}
	for i := 0; i < 4; i++ {
		if !isDigit(got[i]) && !(got[i] >= 'A' && got[i] <= 'F') {
			return perr("63", "CRC must be 4 upper-case hex digits, got %q", got)
		}
	}
	want := string(appendCRC(nil, crcString(covered)))
	if got != want {
		return perr("63", "CRC mismatch: got %s, computed %s", got, want)
	}
	return nil
}

// decode maps the top-level values into a Code (framing and content of the
// templates included; field rules are left to validate).
func decode(vals *[100]string) (*Code, *ParseError) {
	c := &Code{
		PointOfInitiation: vals[1],
		MCC:               vals[52],
		Currency:          vals[53],
		Country:           vals[58],
		Name:              vals[59],
		City:              vals[60],
		PostalCode:        vals[61],
	}
	for id := 2; id <= 99; id++ {
		v := vals[id]
		if v == "" {
			continue
		}
		tag := vals2id(id)
		switch {
		case id == 26, id >= 52 && id <= 54, id >= 58 && id <= 63:
		case id <= 51:
			c.Accounts = append(c.Accounts, Field{ID: tag, Value: v})
		case id >= 80:
			c.Templates = append(c.Templates, Field{ID: tag, Value: v})
		case id >= 65:
			return nil, perr(tag, "reserved ID (65–79)")
		default:
			return nil, perr(tag, "data object not used by Pix")
		}
	}
	for _, id := range []int{26, 52, 53, 58, 59, 60, 62} {
		if vals[id] == "" {
			return nil, perr(vals2id(id), "mandatory data object is missing")
		}
	}
	if err := c.decodePix(vals[26]); err != nil {
		return nil, err
	}
	if v := vals[54]; v != "" {
		a, err := parseAmount(v)
		if err != nil {
			return nil, err
		}
		c.Amount, c.HasAmount = a, true
	}
	if err := c.decodeAdditional(vals[62]); err != nil {
		return nil, err
	}
	return c, nil
}

func vals2id(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

func (c *Code) decodePix(v string) *ParseError {
	fields, err := subFields("26", v, true)
	if err != nil {
		return err
	}
	for _, f := range fields {
		switch f.ID {
		case "00":
			c.GUI = f.Value
		case "01":
			c.Key = f.Value
		case "02":
			c.Info = f.Value
		case "03":
			c.FSS = f.Value
		case "25":
			c.URL = f.Value
		default:
			return perr("26."+f.ID, "unknown field in the Pix template")
		}
	}
	if !strings.EqualFold(c.GUI, PixGUI) {
		return perr("26.00", "GUI must be %s, got %q", PixGUI, c.GUI)
	}
	return nil
}

func (c *Code) decodeAdditional(v string) *ParseError {
	fields, err := subFields("62", v, false)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if f.ID == "05" {
			c.TxID = f.Value
			continue
		}
		c.AdditionalData = append(c.AdditionalData, f)
	}
	c.AdditionalData = sortedFields(c.AdditionalData)
	return nil
}

// parseAmount reads \d{1,10}\.\d{2} into centavos (no floats).
func parseAmount(v string) (int64, *ParseError) {
	dot := strings.IndexByte(v, '.')
	if dot < 1 || dot > 10 || len(v)-dot != 3 || !allDigits(v[:dot]) || !allDigits(v[dot+1:]) {
		return 0, perr("54", "amount must be digits, a dot and 2 decimals (e.g. 10.00), got %q", v)
	}
	var a int64
	for i := 0; i < len(v); i++ {
		if v[i] != '.' {
			a = a*10 + int64(v[i]-'0')
		}
	}
	if a == 0 {
		return 0, perr("54", "amount must be greater than zero")
	}
	return a, nil
}

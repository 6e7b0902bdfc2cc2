package brcode

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Static holds the inputs of a static Pix BR Code.
type Static struct {
	// Key is the receiver's Pix key, in any accepted notation (masks, upper case...).
	Key string
	// KeyType, when set, fixes the key type; when empty it is guessed with
	// DetectKey (an 11-digit number is then a CPF, never a phone).
	KeyType KeyType
	// Info is an optional message to the payer (26-02), folded to ASCII; it shares
	// template 26 (99 characters) with the key: len(key) + len(info) <= 73. A longer one
	// is an error, unless TruncateInfo is set.
	Info string
	// TruncateInfo cuts a folded Info that does not fit next to the key to the longest
	// prefix that does (trailing spaces dropped), or leaves it out when none fits, so that
	// the code stays valid whatever the length of Info.
	TruncateInfo bool
	// Name is the receiver's name, folded to printable ASCII and truncated to 25.
	Name string
	// City is the receiver's city, folded to printable ASCII and truncated to 15.
	City string
	// PostalCode is the optional CEP, 8 digits ("-", "." and spaces allowed).
	PostalCode string
	// TxID is the reconciliation id, [A-Za-z0-9]{1,25}; "" means none ("***").
	TxID string
	// Amount is in centavos; 0 means the payer chooses the amount.
	Amount int64
}

// Dynamic holds the inputs of a dynamic Pix BR Code.
type Dynamic struct {
	// URL is the payload location returned by the PSP API, without scheme, ≤ 77.
	URL string
	// Name is the receiver's name, folded to printable ASCII and truncated to 25.
	Name string
	// City is the receiver's city, folded to printable ASCII and truncated to 15.
	City string
	// PostalCode is the optional CEP, 8 digits ("-", "." and spaces allowed).
	PostalCode string
}

// EncodeStatic builds a static Pix BR Code. The key is normalized to its DICT
// canonical form; the amount is written with 2 decimals from integer centavos;
// Name, City and Info are folded to printable ASCII (accents stripped); the
// fields come in ascending ID order, 62 is always present and the CRC is
// upper-case. Errors are *ParseError naming the field.
func EncodeStatic(s Static) (string, error) {
	var (
		key string
		err error
	)
	if s.KeyType != "" {
		key, err = NormalizeKey(s.Key, s.KeyType)
	} else {
		_, key, err = DetectKey(s.Key)
	}
	if err != nil {
		return "", &ParseError{Tag: "26.01", Reason: reasonOf(err), Err: err}
	}
	txid := s.TxID
	if txid == "" {
		txid = NoTxID
	}
	if txid != NoTxID && (len(txid) > MaxTxIDLen || !alnum(txid)) {
		return "", perr("62.05", "txid must be 1 to 25 letters and digits, got %q", s.TxID)
	}
	if s.Amount < 0 {
		return "", perr("54", "amount must not be negative")
	}
	cep, perrr := postalCode(s.PostalCode)
	if perrr != nil {
		return "", perrr
	}
	info := fold(s.Info)
	if s.TruncateInfo {
		info = truncate(info, infoRoom(key))
	}
	c := Code{
		GUI:        PixGUI,
		Key:        key,
		Info:       info,
		MCC:        "0000",
		Currency:   "986",
		Amount:     s.Amount,
		HasAmount:  s.Amount > 0,
		Country:    "BR",
		Name:       truncate(fold(s.Name), MaxNameLen),
		City:       truncate(fold(s.City), MaxCityLen),
		PostalCode: cep,
		TxID:       txid,
	}
	return c.Encode()
}

// EncodeDynamic builds a dynamic Pix BR Code: 01 = 12, 26 = GUI + URL (25),
// no amount, 62-05 = "***". The URL must not carry a scheme ("https://").
func EncodeDynamic(d Dynamic) (string, error) {
	u := strings.TrimSpace(d.URL)
	if u == "" {
		return "", perr("26.25", "URL is required")
	}
	cep, err := postalCode(d.PostalCode)
	if err != nil {
		return "", err
	}
	c := Code{
		PointOfInitiation: DynamicSingleUse,
		GUI:               PixGUI,
		URL:               u,
		MCC:               "0000",
		Currency:          "986",
		Country:           "BR",
		Name:              truncate(fold(d.Name), MaxNameLen),
		City:              truncate(fold(d.City), MaxCityLen),
		PostalCode:        cep,
		TxID:              NoTxID,
	}
	return c.Encode()
}

// Encode writes c as a BR Code after checking it with the same rules as Parse,
// so Parse(c.Encode()) succeeds and yields a Code equal to c (for a c produced by
// Parse). Fields come in ascending ID order; text is written as is (no folding).
func (c *Code) Encode() (string, error) {
	if err := c.validate(); err != nil {
		return "", err
	}
	w := writer{b: make([]byte, 0, 160)}
	w.field("00", "00", "01")
	if c.PointOfInitiation != "" {
		w.field("01", "01", c.PointOfInitiation)
	}
	pix := false
	writePix := func() {
		pix = true
		w.template("26", "26", func(t *writer) {
			gui := c.GUI
			if gui == "" {
				gui = PixGUI
			}
			t.field("26.00", "00", gui)
			if c.Key != "" {
				t.field("26.01", "01", c.Key)
			}
			if c.Info != "" {
				t.field("26.02", "02", c.Info)
			}
			if c.FSS != "" {
				t.field("26.03", "03", c.FSS)
			}
			if c.URL != "" {
				t.field("26.25", "25", c.URL)
			}
		})
	}
	for _, f := range sortedFields(c.Accounts) {
		if !pix && f.ID > "26" {
			writePix()
		}
		w.field(f.ID, f.ID, f.Value)
	}
	if !pix {
		writePix()
	}
	w.field("52", "52", c.MCC)
	w.field("53", "53", c.Currency)
	if c.Amount > 0 {
		w.field("54", "54", formatAmount(c.Amount))
	}
	w.field("58", "58", c.Country)
	w.field("59", "59", c.Name)
	w.field("60", "60", c.City)
	if c.PostalCode != "" {
		w.field("61", "61", c.PostalCode)
	}
	w.template("62", "62", func(t *writer) {
		txid := false
		for _, f := range sortedFields(c.AdditionalData) {
			if !txid && f.ID > "05" {
				txid = true
				t.field("62.05", "05", c.TxID)
			}
			t.field("62."+f.ID, f.ID, f.Value)
		}
		if !txid {
			t.field("62.05", "05", c.TxID)
		}
	})
	for _, f := range sortedFields(c.Templates) {
		w.field(f.ID, f.ID, f.Value)
	}
	if w.err != nil {
		return "", w.err
	}
	w.b = append(w.b, "6304"...)
	w.b = appendCRC(w.b, CRC16(w.b))
	if n := utf8.RuneCount(w.b); n > MaxPayloadLen {
		return "", perr("", "payload has %d characters, max %d", n, MaxPayloadLen)
	}
	return string(w.b), nil
}

// infoRoom is how many characters of info (26-02) template 26 has room for next to the
// canonical key: 99 less the GUI, the key and the info's own ID and length, 0 if none.
func infoRoom(key string) int {
	return max(99-tlvLen(PixGUI)-tlvLen(key)-4, 0)
}

// formatAmount writes centavos as \d+\.\d{2} (1 -> "0.01", 100050 -> "1000.50").
func formatAmount(a int64) string {
	b := make([]byte, 0, 16)
	b = strconv.AppendInt(b, a/100, 10)
	f := a % 100
	return string(append(b, '.', byte('0'+f/10), byte('0'+f%10)))
}

func postalCode(s string) (string, *ParseError) {
	if s == "" {
		return "", nil
	}
	cep := strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == ' ' {
			return -1
		}
		return r
	}, s)
	if len(cep) != 8 || !allDigits(cep) {
		return "", perr("61", "postal code must be 8 digits, got %q", s)
	}
	return cep, nil
}

// reasonOf is the message of a package error without the "brcode: " prefix.
func reasonOf(err error) string { return strings.TrimPrefix(err.Error(), "brcode: ") }

// Fold is what the encoders write of a name, city or info text, before it is cut to its
// length: printable ASCII, accented Latin letters without their accents (á -> a, ç -> c,
// ß -> ss), typographic quotes and dashes as ASCII, runs of white space as one space,
// and any other character (emoji, other scripts) dropped. A name or city that folds to ""
// cannot be encoded: tags 59 and 60 are required.
func Fold(s string) string { return fold(s) }

// fold is Fold.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			ascii = false
			break
		}
	}
	if ascii && !strings.Contains(s, "  ") && strings.TrimSpace(s) == s {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		var rep string
		switch {
		case r > 0x20 && r < 0x7F:
			rep = string(r)
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == 0xA0 || r >= 0x2000 && r <= 0x200A:
			space = b.Len() > 0
			continue
		default:
			rep = foldTable[r]
		}
		if rep == "" {
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(rep)
	}
	return b.String()
}

// truncate cuts an ASCII string to n (>= 0) characters and drops trailing spaces.
func truncate(s string, n int) string {
	if len(s) > n {
		s = strings.TrimRight(s[:n], " ")
	}
	return s
}

// foldTable maps Latin letters with diacritics and typographic marks to ASCII.
var foldTable = func() map[rune]string {
	m := map[rune]string{
		'ß': "ss", 'Æ': "AE", 'æ': "ae", 'Œ': "OE", 'œ': "oe", 'Ø': "O", 'ø': "o",
		'Đ': "D", 'đ': "d", 'Ł': "L", 'ł': "l", 'Þ': "Th", 'þ': "th", 'Ð': "D", 'ð': "d",
		'‘': "'", '’': "'", '‚': "'", '´': "'", '“': "\"", '”': "\"", '„': "\"",
		'–': "-", '—': "-", '‐': "-", '−': "-", '…': "...", 'º': "o", 'ª': "a", '°': "o",
	}
	for base, accented := range map[string]string{
		"A": "ÀÁÂÃÄÅĀĂĄ", "a": "àáâãäåāăą", "C": "ÇĆĈĊČ", "c": "çćĉċč", "D": "Ď", "d": "ď",
		"E": "ÈÉÊËĒĔĖĘĚ", "e": "èéêëēĕėęě", "G": "ĜĞĠĢ", "g": "ĝğġģ", "H": "ĤĦ", "h": "ĥħ",
		"I": "ÌÍÎÏĨĪĬĮİ", "i": "ìíîïĩīĭįı", "J": "Ĵ", "j": "ĵ", "K": "Ķ", "k": "ķ",
		"L": "ĹĻĽĿ", "l": "ĺļľŀ", "N": "ÑŃŅŇ", "n": "ñńņň", "O": "ÒÓÔÕÖŌŎŐ", "o": "òóôõöōŏő",
		"R": "ŔŖŘ", "r": "ŕŗř", "S": "ŚŜŞŠ", "s": "śŝşš", "T": "ŢŤŦ", "t": "ţťŧ",
		"U": "ÙÚÛÜŨŪŬŮŰŲ", "u": "ùúûüũūŭůűų", "W": "Ŵ", "w": "ŵ", "Y": "ÝŶŸ", "y": "ýÿŷ",
		"Z": "ŹŻŽ", "z": "źżž",
	} {
		for _, r := range accented {
			m[r] = base
		}
	}
	return m
}()

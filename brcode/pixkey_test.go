package brcode

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestParseKeyType(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]KeyType{
		"CPF": KeyCPF, "cnpj": KeyCNPJ, "Email": KeyEmail, "PHONE": KeyPhone,
		"EVP": KeyEVP, "RANDOM": KeyEVP, "random": KeyEVP, " evp ": KeyEVP,
	} {
		got, err := ParseKeyType(in)
		is.NoErr(err)       // known names parse
		is.Equal(got, want) // and map to the DICT type
	}
	_, err := ParseKeyType("UUID")
	is.True(errors.Is(err, ErrInvalidKey)) // unknown names are refused
	_, err = ParseKeyType("")
	is.True(err != nil) // empty is not a type
}

func TestNormalizeKey(t *testing.T) {
	ok := []struct {
		key  string
		typ  KeyType
		want string
	}{
		{"529.982.247-25", KeyCPF, "52998224725"},
		{"52998224725", KeyCPF, "52998224725"},
		{"11.222.333/0001-81", KeyCNPJ, "11222333000181"},
		{"12.abc.345/01de-35", KeyCNPJ, "12ABC34501DE35"},
		{"+5561912345678", KeyPhone, "+5561912345678"},
		{"5561912345678", KeyPhone, "+5561912345678"},
		{"+55 (61) 91234-5678", KeyPhone, "+5561912345678"},
		{"55 61 91234 5678", KeyPhone, "+5561912345678"},
		{"Fulano.Tal+pix@Example.COM", KeyEmail, "fulano.tal+pix@example.com"},
		{"thalesog@me.com", KeyEmail, "thalesog@me.com"},
		{"123E4567-E12B-12D1-A456-426655440000", KeyEVP, "123e4567-e12b-12d1-a456-426655440000"},
		{" 123e4567-e12b-12d1-a456-426655440000 ", KeyEVP, "123e4567-e12b-12d1-a456-426655440000"},
	}
	for _, tc := range ok {
		t.Run("OK/"+string(tc.typ)+"/"+tc.key, func(t *testing.T) {
			is := is.New(t)
			got, err := NormalizeKey(tc.key, tc.typ)
			is.NoErr(err)          // valid key of that type
			is.Equal(got, tc.want) // DICT canonical form
		})
	}

	long := strings.Repeat("a", 70) + "@exa.com" // 78 chars
	bad := []struct {
		key    string
		typ    KeyType
		reason string
	}{
		{"12345678900", KeyCPF, "check digits"},               // N22's key
		{"11222333000181", KeyCPF, "got a CNPJ"},              // right tax ID, wrong type
		{"52998224725", KeyCNPJ, "got a CPF"},                 // idem
		{"11111111111", KeyCPF, "all digits equal"},           // repeated digits
		{"+556191234567", KeyPhone, "phone"},                  // 8-digit number
		{"+5501912345678", KeyPhone, "phone"},                 // area code with 0
		{"+5561812345678", KeyPhone, "phone"},                 // mobile must start with 9
		{"6191234567", KeyPhone, "phone"},                     // no country code, and 10 digits: not a mobile number
		{"+14155552671", KeyPhone, "phone"},                   // not Brazil
		{"fulano", KeyEmail, "malformed"},                     // no @
		{"fulano@", KeyEmail, "malformed"},                    // no domain
		{"ful ano@example.com", KeyEmail, "malformed"},        // space
		{long, KeyEmail, "longer than 77"},                    // DICT limit
		{"\u212Aarla@example.com", KeyEmail, "outside ASCII"}, // the Kelvin sign, which lower-cases to k
		{"joão@example.com", KeyEmail, "outside ASCII"},
		{"123e4567e12b12d1a456426655440000", KeyEVP, "UUID"},     // no hyphens
		{"123e4567-e12b-12d1-a456-42665544000g", KeyEVP, "UUID"}, // not hex
		{"", KeyEVP, "empty"},                                    // empty
		{"52998224725", "RG", "unknown key type"},                // bad type
	}
	for _, tc := range bad {
		t.Run("Err/"+string(tc.typ)+"/"+tc.key, func(t *testing.T) {
			is := is.New(t)
			_, err := NormalizeKey(tc.key, tc.typ)
			is.True(err != nil)                               // must be refused
			is.True(errors.Is(err, ErrInvalidKey))            // callers branch on the sentinel
			is.True(strings.Contains(err.Error(), tc.reason)) // the error says why
		})
	}
}

func TestDetectKey(t *testing.T) {
	ok := []struct {
		key  string
		typ  KeyType
		want string
	}{
		{"+5561912345678", KeyPhone, "+5561912345678"},
		{"5561912345678", KeyPhone, "+5561912345678"},
		{"(61) 91234-5678", "", ""}, // phone-looking but no country code: error below
		{"Fulano@Example.com", KeyEmail, "fulano@example.com"},
		{"a+b@example.com", KeyEmail, "a+b@example.com"}, // '@' wins over '+'
		{"123e4567-e12b-12d1-a456-426655440000", KeyEVP, "123e4567-e12b-12d1-a456-426655440000"},
		{"52998224725", KeyCPF, "52998224725"},
		{"529.982.247-25", KeyCPF, "52998224725"},
		{"11222333000181", KeyCNPJ, "11222333000181"},
		{"12ABC34501DE35", KeyCNPJ, "12ABC34501DE35"},
	}
	for _, tc := range ok {
		t.Run(tc.key, func(t *testing.T) {
			is := is.New(t)
			typ, got, err := DetectKey(tc.key)
			if tc.typ == "" {
				is.True(err != nil) // ambiguous or invalid input is refused
				return
			}
			is.NoErr(err)          // detectable key
			is.Equal(typ, tc.typ)  // guessed type
			is.Equal(got, tc.want) // canonical form
		})
	}

	for _, key := range []string{
		"12345678900",    // 11 digits, bad CPF DV (N22)
		"12ABC34501DE36", // CNPJ bad DV
		"hello",          // nothing
		"",               // empty
		"66756C616E6F32303139406578616D706C652E636F6D", // L03's placeholder key
	} {
		t.Run("Err/"+key, func(t *testing.T) {
			is := is.New(t)
			_, _, err := DetectKey(key)
			is.True(errors.Is(err, ErrInvalidKey)) // refused with the key sentinel
		})
	}
}

// TestDetectKey_Phone: phone keys with the country code are PHONE in every notation; an
// 11-digit number is a CPF (the reference's ambiguity: 11912345684 is both a valid CPF and
// a mobile number without +55), and when it is not a valid CPF but looks like a mobile
// number the error says a phone needs +55.
func TestDetectKey_Phone(t *testing.T) {
	for _, key := range []string{
		"+5561912345678", "+55 61 91234-5678", "+55 (61) 91234-5678", "5561912345678", "55 61 91234 5678",
		"+5511912345684", // the ambiguous number of the reference, with its country code
	} {
		t.Run("OK/"+key, func(t *testing.T) {
			is := is.New(t)
			typ, got, err := DetectKey(key)
			is.NoErr(err)             // a phone key
			is.Equal(typ, KeyPhone)   // detected as a phone, not a CPF
			is.True(got[:3] == "+55") // canonical, with the +
			is.Equal(len(got), 14)    // +55, area code, 9 digits
		})
	}
	for _, tc := range []struct{ key, reason string }{
		{"11912345689", "CPF check digits do not match; read as a CPF because it has 11 digits: a phone key needs the country code, +5511912345689"},
		{"11 91234-5689", "a phone key needs the country code, +5511912345689"}, // as people write it
		{"(61) 91234-5678", "phone must be +55"},                                // parentheses: a phone, without country code
		{"+556191234567", "phone must be +55"},                                  // 8-digit number
		{"+5501912345678", "phone must be +55"},                                 // area code with 0
		{"+5561812345678", "phone must be +55"},                                 // mobile must start with 9
		{"+14155552671", "phone must be +55"},                                   // not Brazil
		{"12345678900", "CPF check digits do not match"},                        // N22: not phone-shaped, no phone hint
		{"", "empty key"},
		{"   ", "empty key"},
	} {
		t.Run("Err/"+tc.key, func(t *testing.T) {
			is := is.New(t)
			_, _, err := DetectKey(tc.key)
			is.True(errors.Is(err, ErrInvalidKey))                              // refused
			is.True(strings.Contains(err.Error(), tc.reason))                   // saying why
			is.True(!strings.Contains(err.Error(), "cannot tell the key type")) // never a guess failure for these
		})
	}
	t.Run("ValidCPFStaysCPF", func(t *testing.T) {
		is := is.New(t)
		typ, got, err := DetectKey("11912345684") // phone-shaped, and a valid CPF
		is.NoErr(err)
		is.Equal(typ, KeyCPF) // 11 digits are a CPF: pass the type to mean a phone
		is.Equal(got, "11912345684")
		for _, in := range []string{"11912345684", "(11) 91234-5684", "11 91234-5684", "11.91234.5684"} {
			got, err = NormalizeKey(in, KeyPhone) // the caller says it is a phone
			is.NoErr(err)
			is.Equal(got, "+5511912345684") // in DICT's form
		}
		_, err = NormalizeKey("01912345684", KeyPhone) // no area code starts with 0
		is.True(strings.Contains(err.Error(), "phone must be +55"))
	})
	t.Run("Dots", func(t *testing.T) {
		is := is.New(t)
		typ, got, err := DetectKey("55.11.91234.5684") // a phone by its shape
		is.NoErr(err)
		is.Equal(typ, KeyPhone)
		is.Equal(got, "+5511912345684") // as "55 11 91234 5684" is
		got, err = NormalizeKey("+55 11 9.1234-5684", KeyPhone)
		is.NoErr(err)
		is.Equal(got, "+5511912345684")
	})
}

package brcode

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestParseTaxID(t *testing.T) {
	valid := []struct {
		in   string
		want string
		typ  TaxIDType
	}{
		{"52998224725", "52998224725", CPF},
		{"529.982.247-25", "52998224725", CPF},
		{"11144477735", "11144477735", CPF},
		{"00000000191", "00000000191", CPF},
		{"123.456.789-09", "12345678909", CPF},
		{"11222333000181", "11222333000181", CNPJ},
		{"11.222.333/0001-81", "11222333000181", CNPJ},
		{"00.000.000/0001-91", "00000000000191", CNPJ},
		{"12ABC34501DE35", "12ABC34501DE35", CNPJ},
		{"12.ABC.345/01DE-35", "12ABC34501DE35", CNPJ},
		{"12.abc.345/01de-35", "12ABC34501DE35", CNPJ},
		{"ABCDEFGHIJKL80", "ABCDEFGHIJKL80", CNPJ},
		{"A1B2C3D4E5F668", "A1B2C3D4E5F668", CNPJ},
		{"00000000000A04", "00000000000A04", CNPJ},
		{"Q0.SLF.MBD/7VX4-39", "Q0SLFMBD7VX439", CNPJ},
		{" 529 982 247 25 ", "52998224725", CPF},
	}
	for _, tc := range valid {
		t.Run("OK/"+tc.in, func(t *testing.T) {
			is := is.New(t)
			got, typ, err := ParseTaxID(tc.in)
			is.NoErr(err)          // a valid tax ID must parse
			is.Equal(got, tc.want) // canonical bare form
			is.Equal(typ, tc.typ)  // type follows the length
		})
	}

	invalid := []struct {
		in     string
		reason string
	}{
		{"52998224724", "check digits"},        // CPF wrong DV2
		{"52998224715", "check digits"},        // CPF wrong DV1
		{"11222333000182", "check digits"},     // CNPJ wrong DV
		{"12ABC34501DE36", "check digits"},     // alphanumeric CNPJ wrong DV
		{"11111111111", "all digits equal"},    // passes the checksum, still invalid
		{"00000000000", "all digits equal"},    // idem
		{"00000000000000", "all digits equal"}, // all-zero CNPJ
		{"99999999999999", "all digits equal"}, // idem
		{"5299822472", "wrong length"},         // 10 digits
		{"529982247250", "wrong length"},       // 12 digits
		{"112223330001811", "too long"},        // 15 characters
		{"", "wrong length"},                   // empty
		{"5299822472A", "only digits"},         // letter in a CPF
		{"12ABC34501DEAB", "must be digits"},   // letters in the CNPJ DVs
		{"529_982_247_25", "unexpected"},       // unknown mask character
		{"12ÁBC34501DE35", "unexpected"},       // non-ASCII letter
	}
	for _, tc := range invalid {
		t.Run("Err/"+tc.in, func(t *testing.T) {
			is := is.New(t)
			_, _, err := ParseTaxID(tc.in)
			is.True(err != nil)                               // must be rejected
			is.True(errors.Is(err, ErrInvalidTaxID))          // callers branch on the sentinel
			is.True(strings.Contains(err.Error(), tc.reason)) // the error says why
		})
	}
}

func TestValidCPF(t *testing.T) {
	is := is.New(t)
	is.True(ValidCPF("52998224725"))     // valid
	is.True(ValidCPF("00000000191"))     // leading zeros are fine
	is.True(!ValidCPF("529.982.247-25")) // ValidCPF wants the bare form
	is.True(!ValidCPF("52998224726"))    // wrong DV
	is.True(!ValidCPF("11111111111"))    // all equal
	is.True(!ValidCPF("5299822472"))     // short
	is.True(!ValidCPF("5299822472a"))    // letter
}

func TestValidCNPJ(t *testing.T) {
	is := is.New(t)
	is.True(ValidCNPJ("11222333000181"))      // numeric
	is.True(ValidCNPJ("12ABC34501DE35"))      // official alphanumeric example
	is.True(ValidCNPJ("ABCDEFGHIJKL80"))      // all letters
	is.True(ValidCNPJ("A1B2C3D4E5F668"))      // mixed
	is.True(!ValidCNPJ("12abc34501de35"))     // ValidCNPJ wants the upper-case bare form
	is.True(!ValidCNPJ("12ABC34501DE36"))     // wrong DV
	is.True(!ValidCNPJ("00000000000000"))     // all equal
	is.True(!ValidCNPJ("11.222.333/0001-81")) // masked
	is.True(!ValidCNPJ("1122233300018"))      // short
}

package payments

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseTaxID checks the Service's tax ID validator (brcode.ParseTaxID behind it has its
// own target): it never panics, a refusal is an EINVALID *Error naming the field with a
// message, and an accepted ID is bare and of the type its length says.
func FuzzParseTaxID(f *testing.F) {
	for _, s := range []string{"52998224725", "529.982.247-25", "11.222.333/0001-81", "12.abc.345/01de-35",
		"52998224724", "", "x", "5299822472A", "00000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseTaxID("customer.taxID", s)
		if err != nil {
			mustInvalid(t, err, "customer.taxID")
			return
		}
		if id == nil || (id.Type == TaxIDCPF) != (len(id.TaxID) == 11) || (id.Type == TaxIDCNPJ) != (len(id.TaxID) == 14) {
			t.Fatalf("parseTaxID(%q) = %+v", s, id)
		}
	})
}

// FuzzParsePixKey checks the Service's Pix key validator with and without a type: it
// never panics, a refusal is an EINVALID *Error naming the key's field (or its Type field
// for a bad type) with a message, and an accepted key is canonical (accepted again as is).
func FuzzParsePixKey(f *testing.F) {
	for _, s := range []string{"ana@example.com", "+5511999990000", "11999990000", "52998224725",
		"123e4567-e12b-12d1-a456-426655440000", "12ABC34501DE35", "", " ", "a@", "x"} {
		for _, typ := range []string{"", "EMAIL", "phone", "RANDOM", "CPF", "CNPJ", "IBAN"} {
			f.Add(s, typ)
		}
	}
	f.Fuzz(func(t *testing.T, key, typ string) {
		k, kt, err := parsePixKey("toPixKey", key, typ)
		if err != nil {
			field := "toPixKey"
			var e *Error
			if errors.As(err, &e) && e.Field == "toPixKeyType" {
				field = e.Field
			}
			mustInvalid(t, err, field)
			return
		}
		if k == "" || kt == "" {
			t.Fatalf("parsePixKey(%q, %q) = %q, %q: accepted but empty", key, typ, k, kt)
		}
		if k2, kt2, err := parsePixKey("toPixKey", k, string(kt)); err != nil || k2 != k || kt2 != kt {
			t.Fatalf("parsePixKey(%q, %q) = %q %s, which gives %q %s, %v: not canonical", key, typ, k, kt, k2, kt2, err)
		}
	})
}

// mustInvalid fails unless err is an EINVALID *Error for field with a message naming it.
func mustInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != EINVALID || e.Field != field || !strings.Contains(e.Message, field) {
		t.Fatalf("error %#v: want EINVALID naming %s", err, field)
	}
}

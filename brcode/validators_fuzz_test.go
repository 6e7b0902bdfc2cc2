package brcode

import (
	"errors"
	"testing"
)

// taxIDSeeds are tax IDs, valid and not, masked and bare, numeric and alphanumeric.
var taxIDSeeds = []string{
	"52998224725", "529.982.247-25", " 529 982 247 25 ", "11222333000181", "11.222.333/0001-81",
	"12ABC34501DE35", "12.abc.345/01de-35", "Q0.SLF.MBD/7VX4-39", "00000000000A04",
	"52998224724", "11111111111", "00000000000000", "5299822472", "112223330001811", "", "5299822472A",
	"12ABC34501DEAB", "12ABC34501DE3É", "٣٣٣٣٣٣٣٣٣٣٣",
}

// keySeeds are Pix keys of every type, valid and not.
var keySeeds = []string{
	"ana@example.com", "Ana@Example.COM", "a@", "+5511999990000", "(11) 99999-0000", "5511999990000",
	"11999990000", "123e4567-e12b-12d1-a456-426655440000", "123E4567-E12B-12D1-A456-426655440000",
	"52998224725", "11.222.333/0001-81", "12ABC34501DE35", "", "   ", "+55", "@", "x@y", "not a key",
}

// FuzzParseTaxID checks that ParseTaxID never panics, that every refusal wraps
// ErrInvalidTaxID, and that what it accepts is canonical: it parses again to itself, with
// the same type, and passes ValidCPF or ValidCNPJ and NormalizeKey as a key of that type.
func FuzzParseTaxID(f *testing.F) {
	for _, s := range taxIDSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, typ, err := ParseTaxID(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidTaxID) || id != "" || typ != "" {
				t.Fatalf("ParseTaxID(%q) = %q, %q, %v: a refusal is ErrInvalidTaxID and nothing else", s, id, typ, err)
			}
			return
		}
		id2, typ2, err := ParseTaxID(id)
		if err != nil || id2 != id || typ2 != typ {
			t.Fatalf("ParseTaxID(%q) = %q %q, which parses to %q %q %v: not canonical", s, id, typ, id2, typ2, err)
		}
		kt := KeyCPF
		switch typ {
		case CPF:
			if !ValidCPF(id) {
				t.Fatalf("ParseTaxID(%q) = %q as a CPF, which ValidCPF refuses", s, id)
			}
		case CNPJ:
			kt = KeyCNPJ
			if !ValidCNPJ(id) {
				t.Fatalf("ParseTaxID(%q) = %q as a CNPJ, which ValidCNPJ refuses", s, id)
			}
		default:
			t.Fatalf("ParseTaxID(%q): type %q", s, typ)
		}
		if k, err := NormalizeKey(id, kt); err != nil || k != id {
			t.Fatalf("NormalizeKey(%q, %s) = %q, %v: a valid tax ID is a valid key of its type", id, kt, k, err)
		}
	})
}

// keyTypes are the types NormalizeKey is fuzzed with, by index; the last is unknown.
var keyTypes = []KeyType{KeyCPF, KeyCNPJ, KeyEmail, KeyPhone, KeyEVP, "IBAN"}

// FuzzNormalizeKey checks that NormalizeKey and DetectKey never panic, that every refusal
// wraps ErrInvalidKey, and that a canonical form is a fixed point: NormalizeKey of it
// returns it unchanged and DetectKey finds the same type (DetectKey of an 11-digit phone
// number reads a CPF, so only the detected type is checked against DetectKey).
func FuzzNormalizeKey(f *testing.F) {
	for i, s := range keySeeds {
		f.Add(s, uint8(i%len(keyTypes)))
	}
	f.Fuzz(func(t *testing.T, key string, ti uint8) {
		typ := keyTypes[int(ti)%len(keyTypes)]
		if k, err := NormalizeKey(key, typ); err != nil {
			if !errors.Is(err, ErrInvalidKey) || k != "" {
				t.Fatalf("NormalizeKey(%q, %s) = %q, %v: a refusal is ErrInvalidKey and nothing else", key, typ, k, err)
			}
		} else if k2, err := NormalizeKey(k, typ); err != nil || k2 != k || len(k) > MaxKeyLen {
			t.Fatalf("NormalizeKey(%q, %s) = %q, which normalizes to %q, %v: not canonical", key, typ, k, k2, err)
		}

		dt, k, err := DetectKey(key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) || k != "" || dt != "" {
				t.Fatalf("DetectKey(%q) = %q, %q, %v: a refusal is ErrInvalidKey and nothing else", key, dt, k, err)
			}
			return
		}
		if k2, err := NormalizeKey(k, dt); err != nil || k2 != k {
			t.Fatalf("DetectKey(%q) = %s %q, which NormalizeKey gives as %q, %v", key, dt, k, k2, err)
		}
		if dt2, k2, err := DetectKey(k); err != nil || dt2 != dt || k2 != k {
			t.Fatalf("DetectKey(%q) = %s %q, but DetectKey(%q) = %s %q, %v", key, dt, k, k, dt2, k2, err)
		}
	})
}

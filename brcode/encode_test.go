package brcode

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const (
	p01 = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
	p02 = "00020101021226700014br.gov.bcb.pix2548pix.example.com/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***630464E4"
	evp = "123e4567-e12b-12d1-a456-426655440000"
)

func TestEncodeStatic(t *testing.T) {
	t.Run("P01", func(t *testing.T) {
		is := is.New(t)
		got, err := EncodeStatic(Static{Key: evp, Name: "Fulano de Tal", City: "BRASILIA"})
		is.NoErr(err)      // manual inputs are valid
		is.Equal(got, p01) // generator round-trip target: the manual's static example
	})

	t.Run("KeyNormalized", func(t *testing.T) {
		is := is.New(t)
		got, err := EncodeStatic(Static{Key: strings.ToUpper(evp), Name: "Fulano de Tal", City: "BRASILIA"})
		is.NoErr(err)      // upper-case EVP accepted
		is.Equal(got, p01) // and lower-cased into the canonical form
		c := mustEncodeParse(t, Static{Key: "529.982.247-25", Name: "A", City: "B"})
		is.Equal(c.Key, "52998224725") // CPF mask removed
		c = mustEncodeParse(t, Static{Key: "+55 (61) 91234-5678", Name: "A", City: "B"})
		is.Equal(c.Key, "+5561912345678") // phone keeps the '+'
		c = mustEncodeParse(t, Static{Key: "5561912345678", KeyType: KeyPhone, Name: "A", City: "B"})
		is.Equal(c.Key, "+5561912345678") // '+' added back
		c = mustEncodeParse(t, Static{Key: "12.abc.345/01de-35", Name: "A", City: "B"})
		is.Equal(c.Key, "12ABC34501DE35") // alphanumeric CNPJ upper-cased
	})

	t.Run("KeyInvalid", func(t *testing.T) {
		is := is.New(t)
		_, err := EncodeStatic(Static{Key: "12345678900", Name: "A", City: "B"})
		is.True(errors.Is(err, ErrInvalidKey)) // bad CPF DV
		var pe *ParseError
		is.True(errors.As(err, &pe)) // as a ParseError
		is.Equal(pe.Tag, "26.01")    // on the key field
		_, err = EncodeStatic(Static{Key: "12345678909", KeyType: KeyPhone, Name: "A", City: "B"})
		is.True(errors.Is(err, ErrInvalidKey)) // the caller's type wins over detection (a valid CPF, not a mobile)
		_, err = EncodeStatic(Static{Name: "A", City: "B"})
		is.True(errors.Is(err, ErrInvalidKey)) // a static code needs a key
	})

	t.Run("AccentsFolded", func(t *testing.T) {
		is := is.New(t)
		c := mustEncodeParse(t, Static{Key: evp, Name: "João  da Silva Ção", City: "São Paulo", Info: "Pedido nº 1 – café"})
		is.Equal(c.Name, "Joao da Silva Cao")  // accents stripped, spaces collapsed
		is.Equal(c.City, "Sao Paulo")          // idem
		is.Equal(c.Info, "Pedido no 1 - cafe") // info folded too
		c = mustEncodeParse(t, Static{Key: evp, Name: "Ærø Łódź ßtraße 😀", City: "Brasília\n"})
		is.Equal(c.Name, "AEro Lodz sstrasse") // multi-letter folds, emoji dropped
		is.Equal(c.City, "Brasilia")           // control characters dropped
	})

	t.Run("Truncated", func(t *testing.T) {
		is := is.New(t)
		c := mustEncodeParse(t, Static{Key: "arya@stark.com", Name: "Arya Stark with a very long name", City: "Sao Miguel do Oeste", Amount: 12500, TxID: "verylongreconciliationidt"})
		is.Equal(c.Name, "Arya Stark with a very lo") // 25 characters (P19)
		is.Equal(c.City, "Sao Miguel do O")           // 15 characters
		c = mustEncodeParse(t, Static{Key: evp, Name: "A", City: "Rio de Janeiro Norte"})
		is.Equal(c.City, "Rio de Janeiro") // trailing space of the cut dropped
	})

	t.Run("Required", func(t *testing.T) {
		is := is.New(t)
		_, err := EncodeStatic(Static{Key: evp, City: "B"})
		is.Equal(tagOf(err), "59") // name is required
		_, err = EncodeStatic(Static{Key: evp, Name: "😀", City: "B"})
		is.Equal(tagOf(err), "59") // nothing left after folding
		_, err = EncodeStatic(Static{Key: evp, Name: "A"})
		is.Equal(tagOf(err), "60") // city is required
	})

	t.Run("InfoTooLong", func(t *testing.T) {
		is := is.New(t)
		// 99 = 18 (GUI) + 40 (EVP) + 4 + info, so an EVP leaves 37 characters of info.
		_, err := EncodeStatic(Static{Key: evp, Name: "A", City: "B", Info: strings.Repeat("x", 37)})
		is.NoErr(err) // exactly at the budget
		_, err = EncodeStatic(Static{Key: evp, Name: "A", City: "B", Info: strings.Repeat("x", 38)})
		is.Equal(tagOf(err), "26.02")                                     // the info field
		is.True(strings.Contains(err.Error(), "info (comment) too long")) // says what is too long
		is.True(strings.Contains(err.Error(), "at most 37"))              // and the budget
	})

	t.Run("TruncateInfo", func(t *testing.T) {
		is := is.New(t)
		long := string([]rune(strings.Repeat("Pedido número 12345, entregar após às 18h – obrigado! ", 3))[:140])
		for _, tc := range []struct {
			name, key, info string
			room            int
		}{
			{"EVP", evp, long, 37},                  // 99 - 18 - 40 - 4
			{"CPF", "52998224725", long, 62},        // 99 - 18 - 15 - 4
			{"Fits", "52998224725", "Pedido 1", 62}, // nothing to cut
			{"TrailingSpace", evp, strings.Repeat("x", 36) + " y", 37},
			{"Ligatures", evp, strings.Repeat("ß", 30), 37},               // folds to 60 characters
			{"NoRoom", strings.Repeat("a", 64) + "@example.com", long, 0}, // a 76-character key
			{"Empty", evp, "", 37},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				s := Static{Key: tc.key, Name: "A", City: "B", TxID: "abc123", Info: tc.info, TruncateInfo: true}
				c := mustEncodeParse(t, s) // always valid, whatever the length
				folded := fold(tc.info)
				is.True(strings.HasPrefix(folded, c.Info))          // a prefix of the folded info
				is.True(len(c.Info) <= tc.room)                     // that fits
				is.True(!strings.HasSuffix(c.Info, " "))            // with no trailing space
				is.True(len(c.Info) >= min(len(folded), tc.room)-1) // the longest one (less a dropped space)
				is.Equal(c.TxID, "abc123")                          // the rest intact
				_, err := EncodeStatic(Static{Key: tc.key, Name: "A", City: "B", Info: tc.info})
				is.Equal(err == nil, len(folded) <= tc.room) // without TruncateInfo, too long is an error
			})
		}
		is.Equal(infoRoom(evp), 37)
	})

	t.Run("Amount", func(t *testing.T) {
		is := is.New(t)
		for amount, want := range map[int64]string{
			1: "54040.01", 10: "54040.10", 100: "54041.00", 12345: "5406123.45",
			100050: "54071000.50", MaxAmount: "54139999999999.99",
		} {
			got, err := EncodeStatic(Static{Key: evp, Name: "A", City: "B", Amount: amount})
			is.NoErr(err)                        // valid amount
			is.True(strings.Contains(got, want)) // integer centavos with 2 decimals
			c, err := Parse(got)
			is.NoErr(err)              // parses back
			is.Equal(c.Amount, amount) // same centavos
		}
		got, err := EncodeStatic(Static{Key: evp, Name: "A", City: "B"})
		is.NoErr(err)                                   // no amount
		is.True(!strings.Contains(got, "5303986"+"54")) // no 54 field
		_, err = EncodeStatic(Static{Key: evp, Name: "A", City: "B", Amount: -1})
		is.Equal(tagOf(err), "54") // negative
		_, err = EncodeStatic(Static{Key: evp, Name: "A", City: "B", Amount: MaxAmount + 1})
		is.Equal(tagOf(err), "54") // beyond \d{10}\.\d{2}
	})

	t.Run("TxID", func(t *testing.T) {
		is := is.New(t)
		c := mustEncodeParse(t, Static{Key: evp, Name: "A", City: "B", TxID: "Pedido123"})
		is.Equal(c.TxID, "Pedido123") // kept
		c = mustEncodeParse(t, Static{Key: evp, Name: "A", City: "B", TxID: "***"})
		is.Equal(c.TxID, "***") // explicit none
		for _, bad := range []string{"Pedido-123", "Pedido 123", "AAAAAAAAAAAAAAAAAAAAAAAAAA", "pedidoção"} {
			_, err := EncodeStatic(Static{Key: evp, Name: "A", City: "B", TxID: bad})
			is.Equal(tagOf(err), "62.05") // only [A-Za-z0-9]{1,25}
		}
	})

	t.Run("PostalCode", func(t *testing.T) {
		is := is.New(t)
		got, err := EncodeStatic(Static{Key: evp, Name: "A", City: "B", PostalCode: "70074-900"})
		is.NoErr(err)                                  // masked CEP accepted
		is.True(strings.Contains(got, "610870074900")) // bare 8 digits
		_, err = EncodeStatic(Static{Key: evp, Name: "A", City: "B", PostalCode: "7007490"})
		is.Equal(tagOf(err), "61") // 7 digits
	})
}

func TestEncodeDynamic(t *testing.T) {
	t.Run("P02", func(t *testing.T) {
		is := is.New(t)
		got, err := EncodeDynamic(Dynamic{URL: "pix.example.com/8b3da2f39a4140d1a91abd93113bd441", Name: "Fulano de Tal", City: "BRASILIA"})
		is.NoErr(err)      // manual inputs are valid
		is.Equal(got, p02) // generator round-trip target: the manual's dynamic example
		c, err := Parse(got)
		is.NoErr(err)                       // parses
		is.True(c.Dynamic())                // as dynamic
		is.Equal(c.PointOfInitiation, "12") // single use
		is.Equal(c.TxID, "***")             // no txid in a dynamic code
		is.True(!c.HasAmount)               // no amount either
	})
	t.Run("Errors", func(t *testing.T) {
		is := is.New(t)
		for _, u := range []string{
			"https://pix.example.com/x",                  // scheme
			"pix.example.com/" + strings.Repeat("a", 62), // 78 characters
			"pix.example.com/a b",                        // space
			"",                                           // missing
		} {
			_, err := EncodeDynamic(Dynamic{URL: u, Name: "A", City: "B"})
			is.Equal(tagOf(err), "26.25") // the URL field
		}
		_, err := EncodeDynamic(Dynamic{URL: "pix.example.com/" + strings.Repeat("a", 61), Name: "A", City: "B"})
		is.NoErr(err) // 77 characters is the limit
	})
}

func TestCode_Encode(t *testing.T) {
	valid := func() Code {
		return Code{Key: evp, MCC: "0000", Currency: "986", Country: "BR", Name: "A", City: "B", TxID: "***"}
	}
	t.Run("SortsExtras", func(t *testing.T) {
		is := is.New(t)
		c := valid()
		c.Accounts = []Field{{"27", "0004abcd"}, {"04", "123"}}
		c.Templates = []Field{{"99", "0002zz"}, {"80", "0002xx"}}
		c.AdditionalData = []Field{{"50", "0002yy"}, {"01", "bill"}}
		out, err := c.Encode()
		is.NoErr(err)                                                                           // valid extras
		is.True(strings.HasPrefix(out, "0002010403123265"))                                     // 04 before 26
		is.True(strings.Contains(out, "62250104bill0503***50060002yy80060002xx99060002zz6304")) // ascending everywhere
		got, err := Parse(out)
		is.NoErr(err)                                                      // parses
		is.Equal(got.Accounts, []Field{{"04", "123"}, {"27", "0004abcd"}}) // sorted by ID
		is.Equal(got.GUI, PixGUI)                                          // default GUI written
	})
	cases := []struct {
		name string
		edit func(c *Code)
		tag  string
	}{
		{"AccountIs26", func(c *Code) { c.Accounts = []Field{{"26", "x"}} }, "26"},
		{"AccountIs52", func(c *Code) { c.Accounts = []Field{{"52", "x"}} }, "52"},
		{"AccountDuplicate", func(c *Code) { c.Accounts = []Field{{"04", "x"}, {"04", "y"}} }, "04"},
		{"AccountTemplateNoGUI", func(c *Code) { c.Accounts = []Field{{"30", "0104abcd"}} }, "30"},
		{"TemplateIs79", func(c *Code) { c.Templates = []Field{{"79", "0002xx"}} }, "79"},
		{"TemplateEmpty", func(c *Code) { c.Templates = []Field{{"80", ""}} }, "80"},
		{"AdditionalIs05", func(c *Code) { c.AdditionalData = []Field{{"05", "x"}} }, "62.05"},
		{"AdditionalOverflow", func(c *Code) { c.AdditionalData = []Field{{"01", strings.Repeat("a", 99)}} }, "62"},
		{"TooLong", func(c *Code) {
			for id := 80; id < 86; id++ {
				c.Templates = append(c.Templates, Field{vals2id(id), "0095" + strings.Repeat("a", 95)})
			}
		}, ""},
		{"BadGUI", func(c *Code) { c.GUI = "br.com.outro" }, "26.00"},
		{"HasAmountZero", func(c *Code) { c.HasAmount = true }, "54"},
		{"POI", func(c *Code) { c.PointOfInitiation = "13" }, "01"},
		{"MaskedKey", func(c *Code) { c.Key = "529.982.247-25" }, "26.01"},
		{"FSSWithURL", func(c *Code) { c.Key, c.URL, c.FSS = "", "pix.example.com/x", "12345678" }, "26.03"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c := valid()
			tc.edit(&c)
			_, err := c.Encode()
			is.Equal(tagOf(err), tc.tag) // refused, naming the field
		})
	}
}

func TestFold(t *testing.T) {
	is := is.New(t)
	is.Equal(fold("BRASILIA"), "BRASILIA")                   // ASCII untouched
	is.Equal(fold("  Ação\tÉpica  "), "Acao Epica")          // trimmed, collapsed, folded
	is.Equal(fold("Çàéîõü ÇÀÉÎÕÜ ñÑ"), "Caeiou CAEIOU nN")   // Portuguese/Spanish letters
	is.Equal(fold("“Quote” ‘x’ a—b…"), `"Quote" 'x' a-b...`) // typography to ASCII
	is.Equal(fold("漢字"), "")                                 // no ASCII equivalent: dropped
	is.Equal(truncate("abcdef", 3), "abc")                   // cut
	is.Equal(truncate("ab def", 3), "ab")                    // trailing space dropped
}

// mustEncodeParse encodes s and parses the result back.
func mustEncodeParse(t *testing.T, s Static) *Code {
	t.Helper()
	out, err := EncodeStatic(s)
	if err != nil {
		t.Fatalf("EncodeStatic: %v", err)
	}
	c, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(EncodeStatic): %v", err)
	}
	return c
}

// tagOf returns the Tag of a *ParseError, or "<no ParseError>".
func tagOf(err error) string {
	var pe *ParseError
	if !errors.As(err, &pe) {
		return "<no ParseError>"
	}
	return pe.Tag
}

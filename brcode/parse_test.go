package brcode

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestParse_PositiveVectors parses every positive vector of the reference
// (P01..P21, L01..L03) and re-encodes it.
//
// Decisions pinned here:
//   - P05 (recurrence only: 26 holds just the GUI, the 80 template carries the
//     Pix Automático URL) is accepted: "neither key nor URL" is an error only when
//     no 80–99 template with the Pix GUI carries a 25 URL (N20 stays rejected).
//   - L01 (legacy dynamic, txid RP12345678-2019) parses: in a dynamic code payers
//     ignore 62-05 (the txid lives in the fetched payload), so it is read as the
//     generic BR Code reference label (printable ASCII ≤ 25).
//   - L02/L03 (Manual do BR Code, multi-arrangement: 04, 27, 81 besides 26) parse:
//     with other merchant accounts present, 62-05 is the generic reference label,
//     and L03's 26-01 placeholder key (hex text of no key type) is tolerated.
//     N15 (Pix-only static code, txid with '-') is still rejected, as are keys
//     shaped like a CPF/CNPJ/phone/e-mail/EVP that fail validation (N22).
func TestParse_PositiveVectors(t *testing.T) {
	vs := loadVectors(t, "positive.txt")
	if len(vs) != 24 {
		t.Fatalf("want 24 positive vectors, got %d", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			is := is.New(t)
			c, err := Parse(v.Code)
			is.NoErr(err) // every positive vector parses
			out, err := c.Encode()
			is.NoErr(err)         // a parsed code re-encodes
			is.Equal(out, v.Code) // all vectors are ascending with canonical amounts: byte-identical
			c2, err := Parse(out)
			is.NoErr(err)   // the re-encoding parses
			is.Equal(c2, c) // to an equal Code
		})
	}
}

func TestParse_PositiveFields(t *testing.T) {
	vs := map[string]string{}
	for _, v := range loadVectors(t, "positive.txt") {
		vs[v.Name] = v.Code
	}
	base := func(c Code) *Code {
		c.MCC, c.Currency, c.Country = "0000", "986", "BR"
		return &c
	}
	cases := map[string]*Code{
		"P01": base(Code{GUI: "br.gov.bcb.pix", Key: "123e4567-e12b-12d1-a456-426655440000", Name: "Fulano de Tal", City: "BRASILIA", TxID: "***"}),
		"P02": base(Code{PointOfInitiation: "12", GUI: "br.gov.bcb.pix", URL: "pix.example.com/8b3da2f39a4140d1a91abd93113bd441", Name: "Fulano de Tal", City: "BRASILIA", TxID: "***"}),
		"P05": base(Code{GUI: "br.gov.bcb.pix", Name: "Fulano de Tal", City: "BRASILIA", TxID: "***",
			Templates: []Field{{"80", "0014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002"}}}),
		"P07": base(Code{GUI: "br.gov.bcb.pix", Key: "thalesog@me.com", Info: "Pedido 123", Amount: 1000, HasAmount: true, Name: "Thales Ogliari", City: "SAO MIGUEL DO O", TxID: "***"}),
		"P10": base(Code{PointOfInitiation: "12", GUI: "br.gov.bcb.pix", URL: "exemplodeurl.com.br/pix/v2/11111111-1111-1111-1111-111111111111", Amount: 1, HasAmount: true, Name: "TESTE DE TESTE DO TESTEIE", City: "RIO DE JANEIRO", TxID: "***"}),
		"P12": base(Code{GUI: "BR.GOV.BCB.PIX", Key: "11111111-1111-1111-1111-111111111111", Amount: 1, HasAmount: true, Name: "Teste do Teste do TesteIE", City: "SAO PAULO", PostalCode: "11111111", TxID: "NUgpnvaS87Ts"}),
		"P14": base(Code{GUI: "br.gov.bcb.pix", Key: "123e4567-e12b-12d1-a456-426655440000", Name: "Fulano de Tal", City: "BRASÍLIA", TxID: "***"}),
		"P15": base(Code{GUI: "br.gov.bcb.pix", Key: "123e4567-e12b-12d1-a456-426655440000", Name: "João da Silva", City: "São Paulo", TxID: "***"}),
		"P16": base(Code{GUI: "br.gov.bcb.pix", Key: "123e4567-e12b-12d1-a456-426655440000", Info: "Pagamento do pedido 123", FSS: "12345678", Amount: 12345, HasAmount: true, Name: "Fulano de Tal", City: "BRASILIA", TxID: "Pedido123"}),
		"P18": base(Code{GUI: "BR.GOV.BCB.PIX", Key: "jonnasfonini@gmail.com", Info: "Invoice #4", Amount: 2067, HasAmount: true, Name: "Jonnas Fonini", City: "Marau", TxID: "***",
			AdditionalData: []Field{{"50", "0017BR.GOV.BCB.BRCODE01051.0.0"}}}),
		"L01": base(Code{PointOfInitiation: "12", GUI: "br.gov.bcb.pix", URL: "bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd441", Amount: 12345, HasAmount: true, Name: "Fulano de Tal", City: "BRASILIA", TxID: "RP12345678-2019"}),
		"L03": base(Code{GUI: "BR.GOV.BCB.PIX", Key: "66756C616E6F32303139406578616D706C652E636F6D", Amount: 12345, HasAmount: true, Name: "NOMEDORECEBEDOR", City: "BRASILIA", PostalCode: "70074900", TxID: "RP12345678-2019",
			Accounts:       []Field{{"04", "12345678901234"}, {"27", "0012BR.COM.OUTRO01100123456789"}},
			Templates:      []Field{{"80", "0014BR.GOV.BCB.PIX0123PADRAO.URL.PIX/0123ABCD"}, {"81", "0012BR.COM.OUTRO01190123.ABCD.3456.WXYZ"}},
			AdditionalData: []Field{{"50", "0017BR.GOV.BCB.BRCODE01051.0.0"}}}),
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			c, err := Parse(vs[name])
			is.NoErr(err)     // positive vector
			is.Equal(c, want) // every field decoded
		})
	}

	t.Run("Helpers", func(t *testing.T) {
		is := is.New(t)
		p01, _ := Parse(vs["P01"])
		p02, _ := Parse(vs["P02"])
		p05, _ := Parse(vs["P05"])
		p07, _ := Parse(vs["P07"])
		l03, _ := Parse(vs["L03"])
		is.True(!p01.Dynamic())                                                                     // key: static
		is.True(p02.Dynamic())                                                                      // URL: dynamic
		is.Equal(p05.RecurrenceURL(), "pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002") // from template 80
		is.Equal(p01.RecurrenceURL(), "")                                                           // none
		is.Equal(p01.KeyType(), KeyEVP)                                                             // manual key, UUID v1
		is.Equal(p07.KeyType(), KeyEmail)                                                           // e-mail key
		is.Equal(l03.KeyType(), KeyType(""))                                                        // placeholder key
		is.Equal(l03.RecurrenceURL(), "")                                                           // its Pix 80 has 01, not 25
	})
}

// TestParse_NegativeVectors rejects every negative vector of the reference and
// checks that the error names the offending field.
//
// N02 (P01 with CRC "1d3d"): the reference row says "accept on read, never emit"
// but the table is headed "Our validator must reject all of them", and pix-utils
// rejects it. We follow the table: Parse requires upper-case hex, so a code we
// accept is accepted by every reader.
func TestParse_NegativeVectors(t *testing.T) {
	wantTag := map[string]string{
		"N01": "63", "N02": "63", "N03": "00", "N04": "00", "N05": "52", "N06": "01", "N07": "52",
		"N08": "52", "N09": "53", "N10": "54", "N11": "58", "N12": "59", "N13": "60", "N14": "62",
		"N15": "62.05", "N16": "62.05", "N17": "26.00", "N18": "26", "N19": "26.25", "N20": "26",
		"N21": "26.03", "N22": "26.01", "N23": "26.02", "N24": "26.25",
		"N25": "", // lengths counted in characters make the framing fail inside 59/60
	}
	vs := loadVectors(t, "negative.txt")
	if len(vs) != 25 {
		t.Fatalf("want 25 negative vectors, got %d", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			is := is.New(t)
			c, err := Parse(v.Code)
			is.True(c == nil) // nothing returned
			var pe *ParseError
			is.True(errors.As(err, &pe))                        // rejected with a ParseError
			is.Equal(pe.Tag, wantTag[v.Name])                   // naming the offending field
			is.True(strings.HasPrefix(err.Error(), "brcode: ")) // package prefix
		})
	}
	t.Run("N22Cause", func(t *testing.T) {
		is := is.New(t)
		_, err := Parse(vs[21].Code)
		is.True(errors.Is(err, ErrInvalidKey))                 // the key error is wrapped
		is.True(strings.Contains(err.Error(), "check digits")) // and says why
	})
}

func TestParse_Rules(t *testing.T) {
	const (
		head = "000201"
		pix  = "26580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000"
		mid  = "52040000530398654041.005802BR5913Fulano de Tal6008BRASILIA"
		tail = "62070503***"
	)
	long := strings.Repeat("a", 99)
	cases := []struct {
		name, code, tag, reason string
	}{
		{"TooLong", withCRC(head + pix + mid + tail + strings.Repeat("8099"+long, 5)), "", "max 512"},
		{"InvalidUTF8", withCRC(head + pix + mid[:len(mid)-8] + "6008BRAS\xffLIA" + tail), "", "UTF-8"},
		{"Reserved65", withCRC(head + pix + mid + tail + "6502ab"), "65", "reserved"},
		{"Tip55", withCRC(head + pix + mid + "550201" + tail), "55", "not used by Pix"},
		{"Language64", withCRC(head + pix + mid + tail + "64060002pt"), "64", "not used by Pix"},
		{"NoCRC", head + pix + mid + tail, "63", "missing"},
		{"CRCNotLast", withCRC(head+pix+mid+tail) + "0000", "63", "last"},
		{"CRCLength", head + pix + mid + tail + "630300A", "63", "4 characters"},
		{"Truncated", head + pix + mid + "62", "", "truncated"},
		{"ShortValue", head + pix + mid + "6207053", "62", "shorter"},
		{"BadLength", head + "26x8", "26", "malformed length"},
		{"Template27NoGUI", withCRC(head + pix + "271401100123456789" + mid + tail), "27", "globally unique identifier"},
		{"Template80NoGUI", withCRC(head + pix + mid + tail + "801401100123456789"), "80", "globally unique identifier"},
		{"PixTemplateNoGUI", withCRC(head + "26400136123e4567-e12b-12d1-a456-426655440000" + mid + tail), "26", "globally unique identifier"},
		{"PixUnknownSub", withCRC(head + "26660014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400000404abcd" + mid + tail), "26.04", "unknown"},
		{"DuplicateSub", withCRC(head + pix + mid + "62140503***0503abc"), "62.05", "duplicate"},
		{"NoTxID", withCRC(head + pix + mid + "62070103abc"), "62.05", "required"},
		{"AdditionalRFU", withCRC(head + pix + mid + "62140503***1003abc"), "62.10", "not an additional data ID"},
		{"AmountZero", withCRC(head + pix + "52040000530398654040.005802BR5913Fulano de Tal6008BRASILIA" + tail), "54", "greater than zero"},
		{"AmountNoDecimals", withCRC(head + pix + "5204000053039865403100" + "5802BR5913Fulano de Tal6008BRASILIA" + tail), "54", "2 decimals"},
		{"AmountOneDecimal", withCRC(head + pix + "520400005303986540410.0" + "5802BR5913Fulano de Tal6008BRASILIA" + tail), "54", "2 decimals"},
		{"Amount11Digits", withCRC(head + pix + "520400005303986541412345678901.00" + "5802BR5913Fulano de Tal6008BRASILIA" + tail), "54", "2 decimals"},
		{"PostalCode", withCRC(head + pix + mid + "61087007490A" + tail), "61", "8 digits"},
		{"KeyMasked", withCRC(head + "26390014br.gov.bcb.pix0117+55 61 91234 5678" + mid + tail), "26.01", "canonical"},
		{"PhoneNoPlus", withCRC(head + "26350014br.gov.bcb.pix01135561912345678" + mid + tail), "26.01", "canonical"},
		{"RecurrenceScheme", withCRC(head + "26180014br.gov.bcb.pix" + mid + tail + "80470014br.gov.bcb.pix2525https://pix.example.com/r"), "80.25", "scheme"},
		{"InfoWithURL", withCRC(head + "26450014br.gov.bcb.pix0203abc2516pix.example.com/" + mid + tail), "26.02", "only with a key"},
		{"NameControlChar", withCRC(head + pix + "52040000530398654041.005802BR5913Fulano\tde Tal6008BRASILIA" + tail), "59", "non-printable"},
		{"StaticTxIDSpace", withCRC(head + pix + mid + "62070503a b"), "62.05", "letters and digits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := Parse(tc.code)
			var pe *ParseError
			is.True(errors.As(err, &pe))                    // rejected with a ParseError
			is.Equal(pe.Tag, tc.tag)                        // naming the field
			is.True(strings.Contains(pe.Reason, tc.reason)) // and why
		})
	}

	ok := []struct{ name, code string }{
		{"LeadingZeroAmount", withCRC(head + pix + "520400005303986540500.015802BR5913Fulano de Tal6008BRASILIA" + tail)},
		{"MaxAmount", withCRC(head + pix + "52040000530398654139999999999.995802BR5913Fulano de Tal6008BRASILIA" + tail)},
		{"PhoneKey", withCRC(head + "26360014br.gov.bcb.pix0114+5561912345678" + mid + tail)},
		{"AlnumCNPJKey", withCRC(head + "26360014br.gov.bcb.pix011412ABC34501DE35" + mid + tail)},
		{"UpperEVP", withCRC(head + "26580014br.gov.bcb.pix0136123E4567-E12B-12D1-A456-426655440000" + mid + tail)},
		{"StaticPOI12", withCRC(head + "010212" + pix + mid + tail)}, // only indicative on static codes
		{"DynamicTxIDLabel", withCRC(head + "26370014br.gov.bcb.pix2515pix.example.com" + mid + "62100506ab-123")},
		{"Unordered", withCRC(head + pix + "5802BR52040000530398654041.005913Fulano de Tal6008BRASILIA" + tail)},
	}
	for _, tc := range ok {
		t.Run("OK/"+tc.name, func(t *testing.T) {
			is := is.New(t)
			c, err := Parse(tc.code)
			is.NoErr(err) // accepted
			out, err := c.Encode()
			is.NoErr(err) // and re-encodes
			c2, err := Parse(out)
			is.NoErr(err)   // to a valid code
			is.Equal(c2, c) // with the same fields
		})
	}
}

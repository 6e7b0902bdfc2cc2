package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/httpadapter"
)

func TestEMVDecode(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	c := s.createCharge(t, s.appID, `{"correlationID":"emv","value":1050,"comment":"Pedido 7"}`)
	code := str(c, "brCode")

	t.Run("Charge", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/decode/emv", s.appID, `{"emv":"`+code+`"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"cobLocation", "country", "crc", "crcValid", "currency", "dynamic", "emv", "info", "mcc", "merchantCity",
			"merchantName", "pixKey", "pixKeyType", "pointOfInitiation", "postalCode", "recLocation", "txid", "url", "value"})
		// the official document's shape: {emv: {...}, cobLocation, recLocation}
		is.Equal(r.body["emv"], map[string]any{"payloadFormatIndicator": "01",
			"merchantAccountInformationPix": map[string]any{"gui": "br.gov.bcb.pix", "pixKey": str(c, "pixKey"), "additionalInformation": "Pedido 7"},
			"merchantCategoryCode":          "0000", "transactionCurrency": "986", "transactionAmount": "10.50", "countryCode": "BR",
			"merchantName": "Loja Exemplo", "merchantCity": str(r.body, "merchantCity"),
			"additionalDataFieldTemplate": map[string]any{"referenceLabel": str(c, "identifier")[:25]}, "crc": code[len(code)-4:]})
		is.Equal(r.body["cobLocation"], nil) // nothing fetched
		is.Equal(r.body["recLocation"], nil)
		is.Equal(str(r.body, "pixKey"), str(c, "pixKey"))
		is.Equal(str(r.body, "pixKeyType"), "RANDOM") // the wire's name of an EVP key
		is.Equal(str(r.body, "merchantName"), "Loja Exemplo")
		is.Equal(num(r.body, "value"), 1050) // centavos
		is.Equal(str(r.body, "txid"), str(c, "identifier")[:25])
		is.Equal(str(r.body, "info"), "Pedido 7")
		is.Equal(r.body["dynamic"], false)
		is.Equal(str(r.body, "currency"), "986")
		is.Equal(str(r.body, "country"), "BR")
		is.Equal(str(r.body, "crc"), code[len(code)-4:])
		is.Equal(r.body["crcValid"], true)
	})
	t.Run("BRCodeKeyAndDynamic", func(t *testing.T) {
		is := is.New(t)
		dyn, err := brcode.EncodeDynamic(brcode.Dynamic{URL: "pix.example.com/qr/v2/cobv/abc", Name: "Loja", City: "Recife"})
		is.NoErr(err)
		r := s.do(t, "POST", "/api/v1/decode/emv", s.appID, `{"brCode":" `+dyn+`\n"}`)
		mustStatus(t, is, r, http.StatusOK) // the brCode name, spaces around trimmed
		is.Equal(r.body["dynamic"], true)
		is.Equal(str(r.body, "url"), "pix.example.com/qr/v2/cobv/abc")
		is.Equal(str(r.body, "pixKey"), "")
		is.Equal(num(r.body, "value"), 0) // no amount
		is.Equal(str(r.body, "pointOfInitiation"), "12")
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		badCRC := code[:len(code)-4] + "0000"
		if strings.HasSuffix(code, "0000") {
			badCRC = code[:len(code)-4] + "FFFF"
		}
		for _, tc := range []struct{ name, body, want string }{
			{"CRC", `{"emv":"` + badCRC + `"}`, "emv field 63: CRC mismatch"},
			{"Truncated", `{"emv":"` + code[:20] + `"}`, "emv field"},
			{"NotACode", `{"emv":"hello"}`, `emv: malformed ID "he"`},
			{"Empty", `{"emv":""}`, "emv is required"},
			{"Missing", `{}`, "emv is required"},
			{"WrongType", `{"emv":5}`, "emv must be a string"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/decode/emv", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
	})
}

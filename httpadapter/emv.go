package httpadapter

import (
	"cmp"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/pixfoundry/payments/brcode"
)

// emvBody is the body of POST /decode/emv: the BR Code as emv (the real API's name) or
// brCode; emv wins when both are sent.
type emvBody struct {
	EMV    string `json:"emv"`
	BRCode string `json:"brCode"`
}

// emvView is a decoded BR Code. Every key is always present: "" or 0 when the code does
// not carry it.
type emvView struct {
	PixKey string `json:"pixKey"`
	// PixKeyType is CPF, CNPJ, EMAIL, PHONE or RANDOM (the wire's name of EVP), "" when
	// the code has no key or one of no known type.
	PixKeyType   string `json:"pixKeyType"`
	MerchantName string `json:"merchantName"`
	MerchantCity string `json:"merchantCity"`
	// Value is the amount in centavos, 0 when the code carries none (the payer chooses).
	Value int64  `json:"value"`
	TxID  string `json:"txid"`
	// Dynamic codes carry a payload URL (url) instead of a key.
	Dynamic           bool   `json:"dynamic"`
	URL               string `json:"url"`
	Info              string `json:"info"`
	PostalCode        string `json:"postalCode"`
	MCC               string `json:"mcc"`
	Currency          string `json:"currency"`
	Country           string `json:"country"`
	PointOfInitiation string `json:"pointOfInitiation"` // "11" reusable, "12" single use, "" absent
	CRC               string `json:"crc"`
	CRCValid          bool   `json:"crcValid"` // always true: a code with a wrong CRC is refused
}

// handleEMVDecode: POST /decode/emv {emv} (or {brCode}) → 200 with the code's fields (see
// emvView); an invalid code → 400 {error} naming the offending field, e.g. "emv field 63:
// CRC mismatch: got 1D3E, computed 1D3D".
func handleEMVDecode(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[emvBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		v, err := decodeEMV(strings.TrimSpace(cmp.Or(body.EMV, body.BRCode)))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, v)
	})
}

func decodeEMV(s string) (emvView, error) {
	if s == "" {
		return emvView{}, invalid("emv", "emv is required: the BR Code (Pix copia e cola) to decode")
	}
	c, err := brcode.Parse(s)
	if err != nil {
		var pe *brcode.ParseError
		if errors.As(err, &pe) && pe.Tag != "" {
			return emvView{}, invalid("emv", "emv field %s: %s", pe.Tag, pe.Reason)
		} else if pe != nil {
			return emvView{}, invalid("emv", "emv: %s", pe.Reason)
		}
		return emvView{}, invalid("emv", "emv is not a valid BR Code")
	}
	keyType := string(c.KeyType())
	if c.KeyType() == brcode.KeyEVP {
		keyType = "RANDOM"
	}
	return emvView{
		PixKey: c.Key, PixKeyType: keyType, MerchantName: c.Name, MerchantCity: c.City,
		Value: c.Amount, TxID: c.TxID, Dynamic: c.Dynamic(), URL: c.URL, Info: c.Info,
		PostalCode: c.PostalCode, MCC: c.MCC, Currency: c.Currency, Country: c.Country,
		PointOfInitiation: c.PointOfInitiation, CRC: s[len(s)-4:], CRCValid: true,
	}, nil
}

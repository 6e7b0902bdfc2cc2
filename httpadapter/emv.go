package httpadapter

import (
	"cmp"
	"errors"
	"fmt"
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

	// EMV is the code in the official document's shape; CobLocation and RecLocation,
	// the charge and recurrence payloads a dynamic code points at, are always null: this
	// version fetches nothing from the payer's side of the network (the flat fields above,
	// kept for the clients written against earlier versions, say the same).
	EMV         emvDocument `json:"emv"`
	CobLocation *struct{}   `json:"cobLocation"`
	RecLocation *struct{}   `json:"recLocation"`
}

// emvDocument is a decoded BR Code as the official document's POST /decode/emv writes it:
// the EMV fields by their names, amounts as written.
type emvDocument struct {
	PayloadFormatIndicator        string             `json:"payloadFormatIndicator"`
	PointOfInitiationMethod       string             `json:"pointOfInitiationMethod,omitempty"`
	MerchantAccountInformationPix emvMerchantAccount `json:"merchantAccountInformationPix"`
	MerchantCategoryCode          string             `json:"merchantCategoryCode"`
	TransactionCurrency           string             `json:"transactionCurrency"`
	TransactionAmount             string             `json:"transactionAmount,omitempty"`
	CountryCode                   string             `json:"countryCode"`
	MerchantName                  string             `json:"merchantName"`
	MerchantCity                  string             `json:"merchantCity"`
	AdditionalDataFieldTemplate   struct {
		ReferenceLabel string `json:"referenceLabel"`
	} `json:"additionalDataFieldTemplate"`
	UnreservedTemplates *emvUnreserved `json:"unreservedTemplates,omitempty"`
	CRC                 string         `json:"crc"`
}

// emvMerchantAccount is the Pix merchant account (field 26).
type emvMerchantAccount struct {
	GUI                   string `json:"gui"`
	PixKey                string `json:"pixKey,omitempty"`
	URL                   string `json:"url,omitempty"`
	AdditionalInformation string `json:"additionalInformation,omitempty"`
}

// emvUnreserved is the Pix Automático recurrence template (80-99).
type emvUnreserved struct {
	GUI string `json:"gui"`
	URL string `json:"url"`
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
	v := emvView{
		PixKey: c.Key, PixKeyType: keyType, MerchantName: c.Name, MerchantCity: c.City,
		Value: c.Amount, TxID: c.TxID, Dynamic: c.Dynamic(), URL: c.URL, Info: c.Info,
		PostalCode: c.PostalCode, MCC: c.MCC, Currency: c.Currency, Country: c.Country,
		PointOfInitiation: c.PointOfInitiation, CRC: s[len(s)-4:], CRCValid: true,
	}
	d := &v.EMV
	d.PayloadFormatIndicator, d.PointOfInitiationMethod = "01", c.PointOfInitiation
	d.MerchantAccountInformationPix = emvMerchantAccount{GUI: cmp.Or(c.GUI, brcode.PixGUI), PixKey: c.Key, URL: c.URL, AdditionalInformation: c.Info}
	d.MerchantCategoryCode, d.TransactionCurrency, d.CountryCode = c.MCC, c.Currency, c.Country
	if c.HasAmount {
		d.TransactionAmount = fmt.Sprintf("%d.%02d", c.Amount/100, c.Amount%100)
	}
	d.MerchantName, d.MerchantCity, d.CRC = c.Name, c.City, v.CRC
	d.AdditionalDataFieldTemplate.ReferenceLabel = c.TxID
	if u := c.RecurrenceURL(); u != "" {
		d.UnreservedTemplates = &emvUnreserved{GUI: brcode.PixGUI, URL: u}
	}
	return v, nil
}

package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestPixQRCodes(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	var qr map[string]any

	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Caixa 1","correlationID":"qr-1","value":500,"comment":"Balcão"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"brCode", "correlationID", "pixQrCode"}) // the create envelope
		qr = get(r.body, "pixQrCode").(map[string]any)
		is.Equal(str(r.body, "correlationID"), "qr-1")
		is.Equal(str(r.body, "brCode"), str(qr, "brCode"))
		is.Equal(str(qr, "name"), "Caixa 1")
		is.Equal(num(qr, "value"), 500)
		is.True(strings.HasPrefix(str(qr, "brCode"), "000201"))
		for _, k := range []string{"identifier", "paymentLinkID", "paymentLinkUrl", "qrCodeImage", "pixKey", "createdAt", "updatedAt"} {
			is.True(str(qr, k) != "") // the fields the SDKs require
		}
		r = s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Livre"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "pixQrCode", "value"), 0)           // the payer chooses
		is.True(str(r.body, "pixQrCode", "correlationID") != "") // a correlationID is made
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{"qr-1", str(qr, "identifier"), str(qr, "id"), str(qr, "paymentLinkID")} {
			r := s.do(t, "GET", "/api/v1/qrcode-static/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(keys(r.body), []string{"pixQrCode"})
			is.Equal(str(r.body, "pixQrCode", "correlationID"), "qr-1")
		}
		mustStatus(t, is, s.do(t, "GET", "/api/v1/qrcode-static/nope", s.appID, ""), http.StatusBadRequest)
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/qrcode-static?limit=1&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pageInfo", "pixQrCodes"})
		is.Equal(len(list(r.body, "pixQrCodes")), 1)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 2)
		is.Equal(get(r.body, "pageInfo", "hasNextPage"), true)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct{ name, body, want string }{
			{"NoName", `{"value":100}`, "name is required"},
			{"FloatValue", `{"name":"x","value":5.5}`, "value must be a whole number of centavos"},
			{"NegativeValue", `{"name":"x","value":-5}`, "value must be 0 (payer chooses)"},
			{"OtherPixKey", `{"name":"x","pixKey":"someone@example.com"}`, "pixKey must be the company's Pix key"},
			{"Duplicate", `{"name":"x","correlationID":"qr-1"}`, `a pix QR code with correlationID "qr-1" already exists`},
			{"WrongType", `{"name":["x"]}`, "name must be a string"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/qrcode-static", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
	})
	t.Run("Delete", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "DELETE", "/api/v1/qrcode-static/qr-1", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"status": "OK", "id": "qr-1"})
		mustStatus(t, is, s.do(t, "GET", "/api/v1/qrcode-static/qr-1", s.appID, ""), http.StatusBadRequest)
		r = s.do(t, "DELETE", "/api/v1/qrcode-static/qr-1", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.body, map[string]any{"error": "Pix QR code not found", "status": "ERROR"}) // the reference's {error, status}
	})
}

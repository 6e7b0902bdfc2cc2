package httpadapter_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/internal/qrtest"
)

// decodeQR reads a PNG back to the text of its QR code and its width.
func decodeQR(t *testing.T, b []byte) (text string, width int) {
	t.Helper()
	text, width, err := qrtest.Decode(b, true)
	if err != nil {
		t.Fatal(err)
	}
	return text, width
}

func TestQRImagePublic(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	c := s.createCharge(t, s.appID, `{"correlationID":"img","value":1990}`)
	other := s.newCompany(t, "Outra Loja", "11222333000181")
	r := s.do(t, "POST", "/api/v1/qrcode-static", other, `{"name":"Caixa","value":500}`)
	mustStatus(t, is.New(t), r, http.StatusOK)
	qr := get(r.body, "pixQrCode").(map[string]any)

	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			name, url, brCode string
			width             int
		}{
			{"ChargeDefaultSize", str(c, "qrCodeImage"), str(c, "brCode"), 1024},
			{"ChargeSize600", str(c, "qrCodeImage") + "?size=600", str(c, "brCode"), 600},
			{"OtherCompanysQRCode", str(qr, "qrCodeImage") + "?size=600", str(qr, "brCode"), 600},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				w := s.raw(t, "GET", tc.url, "") // no App ID: browsers load it from <img>
				is.Equal(w.Code, http.StatusOK)
				is.Equal(w.Header().Get("Content-Type"), "image/png")
				is.Equal(w.Header().Get("Cache-Control"), "public, max-age=300")
				text, width := decodeQR(t, w.Body.Bytes())
				is.Equal(text, tc.brCode) // the record's exact BR Code
				is.Equal(width, tc.width)
			})
		}
	})
	t.Run("Err", func(t *testing.T) {
		link := "/openpix/charge/brcode/image/" + str(c, "paymentLinkID") + ".png"
		for _, tc := range []struct {
			name, url string
			status    int
			want      string
		}{
			{"SizeTooSmall", link + "?size=599", http.StatusBadRequest, "size must be a whole number from 600 to 4096"},
			{"SizeTooLarge", link + "?size=4097", http.StatusBadRequest, "size must be a whole number from 600 to 4096"},
			{"SizeZero", link + "?size=0", http.StatusBadRequest, "size must be a whole number from 600 to 4096"},
			{"SizeNotANumber", link + "?size=big", http.StatusBadRequest, "size must be a whole number from 600 to 4096"},
			{"UnknownLink", "/openpix/charge/brcode/image/00000000-0000-4000-8000-000000000000.png", http.StatusBadRequest, "QR code not found"},
			{"CorrelationIDIsNoLink", "/openpix/charge/brcode/image/img.png", http.StatusBadRequest, "QR code not found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "GET", tc.url, "", "")
				mustStatus(t, is, r, tc.status) // JSON {error}
				is.Equal(r.errMsg(), tc.want)
			})
		}
	})
	t.Run("NoLongerPayable", func(t *testing.T) {
		is := is.New(t)
		paid := s.createCharge(t, s.appID, `{"correlationID":"img-paid","value":1990}`)
		_, err := s.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E9999999920261122120000000000777", Value: 1990, TxID: str(paid, "identifier")[:25]})
		is.NoErr(err)
		r := s.do(t, "GET", str(paid, "qrCodeImage"), "", "")
		mustStatus(t, is, r, http.StatusBadRequest) // a paid charge's code is not shown
		is.Equal(r.errMsg(), "the charge is completed: its QR code is no longer shown")
		short := s.createCharge(t, s.appID, `{"correlationID":"img-short","value":1990,"expiresIn":900}`)
		s.clock.Advance(15 * time.Minute)
		r = s.do(t, "GET", str(short, "qrCodeImage"), "", "")
		mustStatus(t, is, r, http.StatusBadRequest) // nor an expired one's, before any pass records it
		is.Equal(r.errMsg(), "the charge is expired: its QR code is no longer shown")
		r = s.do(t, "GET", "/api/image/qrcode/base64/img-paid?size=600", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // the company itself still gets it
	})
	t.Run("Deleted", func(t *testing.T) {
		is := is.New(t)
		mustStatus(t, is, s.do(t, "DELETE", "/api/v1/charge/img", s.appID, ""), http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", str(c, "qrCodeImage"), "", ""), http.StatusBadRequest) // gone with its charge
	})
}

func TestQRImageBase64(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	c := s.createCharge(t, s.appID, `{"correlationID":"img","value":1990}`)
	for _, id := range []string{"img", str(c, "paymentLinkID"), str(c, "transactionID")} {
		t.Run(id, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", "/api/image/qrcode/base64/"+id+"?size=600", s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(keys(r.body), []string{"imageBase64", "success"})
			is.Equal(r.body["success"], true)
			data, ok := strings.CutPrefix(str(r.body, "imageBase64"), "data:image/png;base64,")
			is.True(ok) // a data URL
			b, err := base64.StdEncoding.DecodeString(data)
			is.NoErr(err)
			text, width := decodeQR(t, b)
			is.Equal(text, str(c, "brCode"))
			is.Equal(width, 600)
		})
	}
	t.Run("Err", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/image/qrcode/base64/img?size=5000", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.body, map[string]any{"success": false, "error": "size must be a whole number from 600 to 4096"})
		r = s.do(t, "GET", "/api/image/qrcode/base64/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.body["success"], false)
		r = s.do(t, "GET", "/api/image/qrcode/base64/img", "", "")
		mustStatus(t, is, r, http.StatusUnauthorized) // needs an App ID
		other := s.newCompany(t, "Outra Loja", "11222333000181")
		r = s.do(t, "GET", "/api/image/qrcode/base64/img", other, "")
		mustStatus(t, is, r, http.StatusBadRequest) // and only finds the caller's own
		is.True(strings.HasSuffix(r.errMsg(), "not found"))
	})
}

// BenchmarkQRImagePublic is the public PNG route on a warm cache: the system-space lookup
// of the paymentLinkID, the owner's charge read and the cached image.
func BenchmarkQRImagePublic(b *testing.B) {
	s := newServer(b, httpadapter.Options{})
	c, err := s.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "img", Value: 1990})
	if err != nil {
		b.Fatal(err)
	}
	url := c.QRCodeImage + "?size=600"
	if w := s.raw(b, "GET", url, ""); w.Code != http.StatusOK { // warm the cache
		b.Fatalf("status %d", w.Code)
	}
	b.ReportAllocs()
	for b.Loop() {
		if w := s.raw(b, "GET", url, ""); w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

package httpadapter

import (
	"encoding/base64"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/pixfoundry/payments"
)

// qrImageCacheControl lets browsers and proxies keep a QR image for five minutes: the BR
// Code of a paymentLinkID never changes, but the image stops being served once its charge
// is paid, expires or is deleted (or its static QR code deleted), and a day-long cache
// would go on showing a code that no longer pays anything.
const qrImageCacheControl = "public, max-age=300"

// qrSize reads the size query parameter of the image routes: absent means
// payments.DefaultQRSize; otherwise a whole number of pixels from payments.MinQRSize to
// payments.MaxQRSize.
func qrSize(r *http.Request) (int, error) {
	s := strings.TrimSpace(r.URL.Query().Get("size"))
	if s == "" {
		return payments.DefaultQRSize, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < payments.MinQRSize || n > payments.MaxQRSize {
		return 0, invalid("size", "size must be a whole number from %d to %d", payments.MinQRSize, payments.MaxQRSize)
	}
	return n, nil
}

// handleQRImagePublic: GET /<vendor>/charge/brcode/image/{file}?size, file =
// "<paymentLinkID>.png" → 200 image/png; 400 {error} for a bad size, an unknown link or
// a charge paid or expired; 503 {error} when too many images are being drawn at once.
//
// It is public, like the real API's: the qrCodeImage URLs a charge and a static QR code
// carry point here, and browsers load them without credentials. The image holds only the
// BR Code, which is meant to be shown, and the paymentLinkID is a random UUID (see
// payments.Service.QRCodeImageByLink). It is looked up across companies, by that exact id.
func handleQRImagePublic(svc *payments.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size, err := qrSize(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		id := strings.TrimSuffix(r.PathValue("file"), ".png")
		png, err := svc.QRCodeImageByLink(r.Context(), id, size)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "image/png")
		h.Set("Content-Length", strconv.Itoa(len(png)))
		h.Set("Cache-Control", qrImageCacheControl)
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		w.Write(png) // a failed write means the client left
	})
}

// imageBase64Body is the reply of GET /api/image/qrcode/base64/{id}: success and either
// imageBase64 or error.
type imageBase64Body struct {
	Success     bool   `json:"success"`
	ImageBase64 string `json:"imageBase64,omitempty"`
	Error       string `json:"error,omitempty"`
}

// handleQRImageBase64: GET /api/image/qrcode/base64/{id}?size (id = a charge's id,
// correlationID or paymentLinkID, or a static QR code's) → 200 {success:true,
// imageBase64:"data:image/png;base64,..."}; failures {success:false, error} with the
// status of the error (400 for a bad size or an unknown id).
func handleQRImageBase64(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(err error) {
			status, msg := errorStatus(r, log, err)
			encode(w, status, imageBase64Body{Error: msg})
		}
		size, err := qrSize(r)
		if err != nil {
			fail(err)
			return
		}
		png, err := company(r).QRCodeImage(r.Context(), r.PathValue("id"), size)
		if err != nil {
			fail(err)
			return
		}
		encode(w, http.StatusOK, imageBase64Body{Success: true, ImageBase64: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)})
	})
}

package httpadapter

import (
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// pixQRCodeBody is the body of POST /qrcode-static. value 0 or absent lets the payer
// choose the amount; pixKey, when sent, must be the company's key.
type pixQRCodeBody struct {
	Name          string   `json:"name"`
	CorrelationID string   `json:"correlationID"`
	Value         centavos `json:"value"`
	Comment       string   `json:"comment"`
	PixKey        string   `json:"pixKey"`
	Identifier    string   `json:"identifier"`
}

// handlePixQRCodeCreate: POST /qrcode-static → 200 {pixQrCode, correlationID, brCode}.
func handlePixQRCodeCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[pixQRCodeBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		q, err := company(r).CreatePixQRCode(r.Context(), payments.CreatePixQRCodeParams{
			Name: body.Name, CorrelationID: body.CorrelationID, Value: int64(body.Value),
			Comment: body.Comment, PixKey: body.PixKey, Identifier: body.Identifier,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, pixQRCodeCreatedReply{BRCode: q.BRCode, CorrelationID: q.CorrelationID, PixQRCode: q})
	})
}

// handlePixQRCodeGet: GET /qrcode-static/{id} (id, correlationID, identifier or
// paymentLinkID) → 200 {pixQrCode}.
func handlePixQRCodeGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := company(r).GetPixQRCode(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, pixQRCodeReply{PixQRCode: q})
	})
}

// handlePixQRCodeList: GET /qrcode-static?skip&limit → 200 {pixQrCodes, pageInfo}.
func handlePixQRCodeList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		qs, page, err := company(r).ListPixQRCodes(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, pixQRCodeListReply{PageInfo: page, PixQRCodes: qs})
	})
}

// handlePixQRCodeDelete: DELETE /qrcode-static/{id} → 200 {status:"OK", id}, id as given;
// a failure is {error, status:"ERROR"}, as the reference gives it.
func handlePixQRCodeDelete(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := company(r).DeletePixQRCode(r.Context(), id); err != nil {
			writeDeleteError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, deletedReply{ID: id, Status: "OK"})
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	pixQRCodeCreatedReply struct {
		BRCode        string             `json:"brCode"`
		CorrelationID string             `json:"correlationID"`
		PixQRCode     payments.PixQRCode `json:"pixQrCode"`
	}
	pixQRCodeReply struct {
		PixQRCode payments.PixQRCode `json:"pixQrCode"`
	}
	pixQRCodeListReply struct {
		PageInfo   payments.PageInfo    `json:"pageInfo"`
		PixQRCodes []payments.PixQRCode `json:"pixQrCodes"`
	}
)

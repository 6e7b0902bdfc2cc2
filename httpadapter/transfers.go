package httpadapter

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/pixfoundry/payments"
)

// transferBody is the body of POST /transfer. The key types are our extension, optional
// as in payments.CreateTransferParams.
type transferBody struct {
	Value          centavos `json:"value"`
	FromPixKey     string   `json:"fromPixKey"`
	FromPixKeyType string   `json:"fromPixKeyType"`
	ToPixKey       string   `json:"toPixKey"`
	ToPixKeyType   string   `json:"toPixKeyType"`
	CorrelationID  string   `json:"correlationID"`
}

// transferView is a transfer as the reply shows it: the reference's three fields.
type transferView struct {
	Value         int64     `json:"value"`
	Time          time.Time `json:"time"`
	CorrelationID string    `json:"correlationID"`
}

// transferReply is the reply of POST /transfer.
type transferReply struct {
	Transaction transferView `json:"transaction"`
}

// handleTransferCreate: POST /transfer {value, fromPixKey, toPixKey, correlationID} → 200
// {transaction:{value, time, correlationID}}: money moves between two accounts of the
// company, named by their Pix keys. The same correlationID (in the body or the
// Idempotency-Key header) again returns the first transfer and moves nothing; with other
// values it is 400.
func handleTransferCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[transferBody](r)
		if err == nil {
			body.CorrelationID, err = idempotencyID(r, body.CorrelationID)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		tr, err := company(r).TransferBetweenAccounts(r.Context(), payments.CreateTransferParams{
			Value: int64(body.Value), FromPixKey: body.FromPixKey, FromPixKeyType: body.FromPixKeyType,
			ToPixKey: body.ToPixKey, ToPixKeyType: body.ToPixKeyType, CorrelationID: body.CorrelationID,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, transferReply{Transaction: transferView{Value: tr.Value, Time: tr.Time, CorrelationID: tr.CorrelationID}})
	})
}

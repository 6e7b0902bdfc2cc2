package httpadapter

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// cashbackBody is the body of POST /cashback-fidelity. taxID is a string (an object is
// tolerated).
type cashbackBody struct {
	TaxID json.RawMessage `json:"taxID"`
	Value centavos        `json:"value"`
}

// Messages of POST /cashback-fidelity.
const (
	msgCashbackCreated = "Cashback created"
	msgCashbackPending = "Customer already has a pending cashback"
)

// handleCashbackCreate: POST /cashback-fidelity {taxID, value} → 201 (new) or 200 (one
// already pending for the tax ID, returned unchanged) {cashback, message}.
func handleCashbackCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[cashbackBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		taxID, err := taxIDString("taxID", body.TaxID)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		cb, created, err := company(r).GetOrCreateExclusiveCashback(r.Context(), taxID, int64(body.Value))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		msg := msgCashbackPending
		if created {
			msg = msgCashbackCreated
		}
		encode(w, createdStatus(created), cashbackReply{Cashback: cb, Message: msg})
	})
}

// handleCashbackBalance: GET /cashback-fidelity/balance/{taxID} → 200 {balance, status}:
// the exclusive cashback the customer has still to receive.
func handleCashbackBalance(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := company(r).GetCashbackBalance(r.Context(), r.PathValue("taxID"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, b)
	})
}

// cashbackReply is the response of POST /cashback-fidelity. Fields are in the order of
// their JSON names, as a map would write them.
type cashbackReply struct {
	Cashback payments.Cashback `json:"cashback"`
	Message  string            `json:"message"`
}

package httpadapter

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/pixfoundry/payments"
)

// subaccountBody is the body of POST /subaccount.
type subaccountBody struct {
	PixKey string `json:"pixKey"`
	Name   string `json:"name"`
}

// subaccountTransferBody is the body of POST /subaccount/transfer.
type subaccountTransferBody struct {
	Value          centavos `json:"value"`
	FromPixKey     string   `json:"fromPixKey"`
	FromPixKeyType string   `json:"fromPixKeyType"`
	ToPixKey       string   `json:"toPixKey"`
	ToPixKeyType   string   `json:"toPixKeyType"`
	CorrelationID  string   `json:"correlationID"`
}

// handleSubaccountCreate: POST /subaccount {pixKey, name} → 200 {SubAccount} (capital S,
// the wire's key), new or the existing one with that key, unchanged.
func handleSubaccountCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[subaccountBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		sa, _, err := company(r).CreateSubaccount(r.Context(), payments.CreateSubaccountParams{PixKey: body.PixKey, Name: body.Name})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subaccountReply{SubAccount: sa})
	})
}

// handleSubaccountGet: GET /subaccount/{id} (its Pix key) → 200 {SubAccount}.
func handleSubaccountGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sa, err := company(r).GetSubaccount(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subaccountReply{SubAccount: sa})
	})
}

// subaccountDeletedReply is the reply of DELETE /subaccount/{id}, as the official
// document gives it.
type subaccountDeletedReply struct {
	PixKey string `json:"pixKey"`
	Status string `json:"status"`
}

// handleSubaccountDelete: DELETE /subaccount/{id} (its Pix key) → 200 {pixKey,
// status:"OK"}: the subaccount is deleted (payments.Service.DeleteSubaccount). One with
// balance is 400 "Only subaccount without balance can be removed: ..."; an unknown key is
// 400 "Subaccount not found: <key>", as the document gives both, and so is GET on it
// afterwards.
func handleSubaccountDelete(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sa, err := company(r).DeleteSubaccount(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subaccountDeletedReply{PixKey: sa.PixKey, Status: "OK"})
	})
}

// handleSubaccountList: GET /subaccount?skip&limit → 200 {subAccounts, subaccounts, pageInfo}.
func handleSubaccountList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		sas, page, err := company(r).ListSubaccounts(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subaccountListReply{PageInfo: page, SubAccounts: sas, Subaccounts: sas})
	})
}

// handleSubaccountTransfer: POST /subaccount/transfer → 200 {value, originSubaccount,
// destinationSubaccount, correlationID, createdAt}, both subaccounts as the transfer left
// them. The same correlationID (in the body or the Idempotency-Key header) again returns
// the first transfer.
func handleSubaccountTransfer(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[subaccountTransferBody](r)
		if err == nil {
			body.CorrelationID, err = idempotencyID(r, body.CorrelationID)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		tr, err := company(r).TransferBetweenSubaccounts(r.Context(), payments.CreateSubaccountTransferParams{
			Value: int64(body.Value), FromPixKey: body.FromPixKey, FromPixKeyType: body.FromPixKeyType,
			ToPixKey: body.ToPixKey, ToPixKeyType: body.ToPixKeyType, CorrelationID: body.CorrelationID,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, tr)
	})
}

// subaccountMoveBody is the body of POST /subaccount/{id}/debit and /credit.
// correlationID is our extension (see payments.SubaccountMoveParams).
type subaccountMoveBody struct {
	Value         centavos `json:"value"`
	Description   string   `json:"description"`
	CorrelationID string   `json:"correlationID"`
}

// subaccountMoveReply is the reply of a subaccount debit or credit, as the reference
// documents it.
type subaccountMoveReply struct {
	PixKey      string `json:"pixKey"`
	Value       int64  `json:"value"`
	Description string `json:"description"`
	Success     string `json:"success"`
}

// handleSubaccountDebit: POST /subaccount/{id}/debit {value, description} → 200 {pixKey,
// value, description, success:"Subaccount debited, <value>"}: the value moves from the
// subaccount to the company account.
func handleSubaccountDebit(log *slog.Logger) http.Handler {
	return handleSubaccountMove(log, (*payments.Service).DebitSubaccount, "debited")
}

// handleSubaccountCredit: POST /subaccount/{id}/credit {value, description} → 200 {pixKey,
// value, description, success:"Subaccount credited, <value>"}: the value moves from the
// company account to the subaccount.
func handleSubaccountCredit(log *slog.Logger) http.Handler {
	return handleSubaccountMove(log, (*payments.Service).CreditSubaccount, "credited")
}

func handleSubaccountMove(log *slog.Logger, move func(*payments.Service, context.Context, payments.SubaccountMoveParams) (payments.SubaccountMove, error), done string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[subaccountMoveBody](r)
		if err == nil {
			body.CorrelationID, err = idempotencyID(r, body.CorrelationID)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		m, err := move(company(r), r.Context(), payments.SubaccountMoveParams{
			PixKey: r.PathValue("id"), Value: int64(body.Value), Description: body.Description, CorrelationID: body.CorrelationID,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subaccountMoveReply{PixKey: m.Subaccount.PixKey, Value: m.Value, Description: m.Description,
			Success: "Subaccount " + done + ", " + strconv.FormatInt(m.Value, 10)})
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	subaccountReply struct {
		SubAccount payments.Subaccount `json:"SubAccount"` // capitalised, as the real API
	}
	// subaccountListReply carries the list under subaccounts, the official document's
	// key, and subAccounts, its example's and the one SDK 1.3.3 reads.
	subaccountListReply struct {
		PageInfo    payments.PageInfo     `json:"pageInfo"`
		SubAccounts []payments.Subaccount `json:"subAccounts"`
		Subaccounts []payments.Subaccount `json:"subaccounts"`
	}
)

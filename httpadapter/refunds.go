package httpadapter

import (
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// refundBody is the body of POST /refund.
type refundBody struct {
	Value                 centavos `json:"value"` // 0 or absent: all that remains of the Pix
	TransactionEndToEndID string   `json:"transactionEndToEndId"`
	CorrelationID         string   `json:"correlationID"`
	Comment               string   `json:"comment"`
}

// handleRefundCreate: POST /refund {value, transactionEndToEndId, correlationID, comment}
// → 200 {refund} (status IN_PROCESSING). The same correlationID again returns the first
// refund.
func handleRefundCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[refundBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ref, err := company(r).CreateRefund(r.Context(), payments.CreateRefundParams{
			TransactionEndToEndID: body.TransactionEndToEndID, CorrelationID: body.CorrelationID,
			Value: int64(body.Value), Comment: body.Comment,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, refundReply{Refund: pixRefund(ref)})
	})
}

// pixRefund is r as the /refund routes write it: the official document's Refund, whose
// status is IN_PROCESSING, REFUNDED or NOT_ACCOMPLISHED. A charge's refunds
// (/charge/{id}/refund) keep the values the Service records (CONFIRMED, REJECTED), as the
// real API's charge refunds do.
func pixRefund(r payments.Refund) payments.Refund {
	switch r.Status {
	case payments.RefundConfirmed:
		r.Status = "REFUNDED"
	case payments.RefundRejected:
		r.Status = "NOT_ACCOMPLISHED"
	}
	return r
}

// handleRefundGet: GET /refund/{id} (refundId or correlationID) → 200
// {pixTransactionRefund, refund}: the real API's key for a single refund, and the one
// the Ruby SDK reads it under (the same refund twice).
func handleRefundGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ref, err := company(r).GetRefund(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ref = pixRefund(ref)
		encode(w, http.StatusOK, pixTransactionRefundReply{PixTransactionRefund: ref, Refund: ref})
	})
}

// handleRefundList: GET /refund?skip&limit → 200 {refunds, pageInfo}, newest first.
func handleRefundList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		rs, page, err := company(r).ListRefunds(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		for i := range rs {
			rs[i] = pixRefund(rs[i])
		}
		encode(w, http.StatusOK, refundListReply{PageInfo: page, Refunds: rs})
	})
}

// Replies, of these routes and of the charge's refunds. Fields are in the order of
// their JSON names, as a map would write them.
type (
	refundReply struct {
		Refund payments.Refund `json:"refund"`
	}
	pixTransactionRefundReply struct {
		PixTransactionRefund payments.Refund `json:"pixTransactionRefund"`
		Refund               payments.Refund `json:"refund"`
	}
	refundListReply struct {
		PageInfo payments.PageInfo `json:"pageInfo"`
		Refunds  []payments.Refund `json:"refunds"`
	}
)

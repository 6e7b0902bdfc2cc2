package httpadapter

import (
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// addPixAutomaticRoutes registers Pix Automático: a subscription's installments and
// their collection requests (cobr), a subscription's value, and, in the sandbox, the
// payer's and the payer's bank's answers. {id} is an installment's globalID (or the
// endToEndId of the Pix that paid it), or a subscription's globalID or correlationID.
func addPixAutomaticRoutes(k routeKit) {
	k.api("PUT /subscriptions/{id}/value", k.auth(handleSubscriptionValueUpdate(k.log)))
	k.api("GET /subscriptions/{id}/installments", k.auth(handleInstallmentList(k.log)))
	k.api("GET /installments/{id}", k.auth(handleInstallmentGet(k.log)))
	k.api("POST /installments/{id}/cobr", k.auth(handleInstallmentCobr(k.log, false)))
	k.api("POST /installments/{id}/cobr/retry", k.auth(handleInstallmentCobr(k.log, true)))
	if k.opts.Sandbox {
		for _, v := range k.vendors {
			prefix := "POST /" + v + "/testing/pix-automatic/{id}/"
			k.root(prefix+"approve", k.auth(handlePixAutomaticApprove(k.log, true)))
			k.root(prefix+"reject", k.auth(handlePixAutomaticApprove(k.log, false)))
			k.root(prefix+"fail-next-debit", k.auth(handlePixAutomaticFailNext(k.log)))
		}
	}
}

// installmentResponse is the answer of GET /installments/{id} and of the cobr routes.
type installmentResponse struct {
	Installment payments.Installment `json:"installment"`
}

// installmentListResponse is the answer of GET /subscriptions/{id}/installments.
type installmentListResponse struct {
	Installments []payments.Installment `json:"installments"`
	PageInfo     payments.PageInfo      `json:"pageInfo"`
}

// valueBody is the body of PUT /subscriptions/{id}/value and of the cobr routes: value in
// centavos. The official document gives the value route no body: the value it changes
// must come from somewhere, and it comes as the cobr routes' does.
type valueBody struct {
	Value centavos `json:"value"`
}

// handleSubscriptionValueUpdate: PUT /subscriptions/{id}/value {value} → 200 {subscription}
// with its new value, for a Pix Automático subscription whose mandate's value is variable
// (created with pixRecurringOptions.minimumValue); 400 for any other.
func handleSubscriptionValueUpdate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[valueBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		s, err := company(r).UpdateSubscriptionValue(r.Context(), r.PathValue("id"), int64(body.Value))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionResponse{Subscription: s})
	})
}

// handleInstallmentList: GET /subscriptions/{id}/installments?skip&limit → 200
// {installments, pageInfo}, newest first.
func handleInstallmentList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ins, page, err := company(r).ListInstallments(r.Context(), r.PathValue("id"), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, installmentListResponse{Installments: ins, PageInfo: page})
	})
}

// handleInstallmentGet: GET /installments/{id} → 200 {installment}.
func handleInstallmentGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, err := company(r).GetInstallment(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, installmentResponse{Installment: in})
	})
}

// handleInstallmentCobr: POST /installments/{id}/cobr and /cobr/retry, with an optional
// body {value} → 200 {installment} as the debit left it. The document answers "an object";
// the installment with its cobr is what a client can use.
func handleInstallmentCobr(log *slog.Logger, retry bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decodeOptional[valueBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		svc, id := company(r), r.PathValue("id")
		var in payments.Installment
		if retry {
			in, err = svc.RetryInstallmentCobr(r.Context(), id, int64(body.Value))
		} else {
			in, err = svc.CreateInstallmentCobr(r.Context(), id, int64(body.Value))
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, installmentResponse{Installment: in})
	})
}

// handlePixAutomaticApprove: POST /<vendor>/testing/pix-automatic/{id}/approve (or
// /reject) → 200 {subscription}: the payer approves (or refuses) the mandate of the
// subscription {id}. Sandbox only.
func handlePixAutomaticApprove(log *slog.Logger, approve bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svc, id := company(r), r.PathValue("id")
		var s payments.Subscription
		var err error
		if approve {
			s, err = svc.ApprovePixAutomatic(r.Context(), id)
		} else {
			s, err = svc.RejectPixAutomatic(r.Context(), id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionResponse{Subscription: s})
	})
}

// failNextBody is the optional body of the sandbox's fail-next-debit route.
type failNextBody struct {
	RejectCode string `json:"rejectCode"`
}

// handlePixAutomaticFailNext: POST /<vendor>/testing/pix-automatic/{id}/fail-next-debit
// with an optional body {rejectCode} (AM04 when absent) → 200 {subscription}: the payer's
// bank refuses the next debit attempt of the subscription {id}; each call one more.
// Sandbox only.
func handlePixAutomaticFailNext(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decodeOptional[failNextBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		s, err := company(r).FailNextPixAutomaticDebit(r.Context(), r.PathValue("id"), body.RejectCode)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionResponse{Subscription: s})
	})
}

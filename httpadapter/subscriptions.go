package httpadapter

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
)

// subscriptionBody is the body of POST /subscriptions, in the spec's shape and the Node
// SDK's (which sends chargeType and no correlationID or type): correlationID is generated
// when absent. type, when sent, is RECURRENT (charges generated each period; the default)
// or PIX_RECURRING (Pix Automático, with pixRecurringOptions {journey, retryPolicy,
// minimumValue}; on the sandbox bank only, 501 otherwise). frequency takes the spellings
// of both (SEMIANNUALY or SEMIANNUALLY, ANNUALY or ANNUALLY, TRIMONTHLY or QUARTERLY). name
// is kept and answered; installmentCount, when above 0, is how many charges (installments)
// it generates before it is COMPLETED.
type subscriptionBody struct {
	Customer          *customerBody             `json:"customer"`
	Value             centavos                  `json:"value"`
	CorrelationID     string                    `json:"correlationID"`
	Type              string                    `json:"type"`
	Comment           string                    `json:"comment"`
	AdditionalInfo    []payments.AdditionalInfo `json:"additionalInfo"`
	DayGenerateCharge json.RawMessage           `json:"dayGenerateCharge"`
	Frequency         string                    `json:"frequency"`
	ChargeType        string                    `json:"chargeType"`
	DayDue            *int                      `json:"dayDue"`
	Name              string                    `json:"name"`
	InstallmentCount  int                       `json:"installmentCount"`
	// PixRecurringOptions are Pix Automático's options, for type PIX_RECURRING.
	PixRecurringOptions *pixRecurringBody `json:"pixRecurringOptions"`
}

// pixRecurringBody is pixRecurringOptions in the official document's SubscriptionPayload.
type pixRecurringBody struct {
	Journey      string   `json:"journey"`
	RetryPolicy  string   `json:"retryPolicy"`
	MinimumValue centavos `json:"minimumValue"`
}

func (b subscriptionBody) params() (payments.CreateSubscriptionParams, error) {
	p := payments.CreateSubscriptionParams{
		CorrelationID: b.CorrelationID, Value: int64(b.Value), Comment: b.Comment, AdditionalInfo: b.AdditionalInfo,
		Frequency: b.Frequency, ChargeType: payments.ChargeType(b.ChargeType), DayDue: b.DayDue,
		Name: b.Name, InstallmentCount: b.InstallmentCount, Type: b.Type,
	}
	if o := b.PixRecurringOptions; o != nil {
		p.PixRecurring = &payments.PixRecurringOptions{Journey: o.Journey, RetryPolicy: o.RetryPolicy, MinimumValue: int64(o.MinimumValue)}
	}
	var err error
	if p.DayGenerateCharge, p.FirstChargeDate, err = dayGenerateCharge(b.DayGenerateCharge); err != nil {
		return p, err
	}
	if b.Customer != nil {
		c, err := b.Customer.params("customer.taxID")
		if err != nil {
			return p, err
		}
		p.Customer = &c
	}
	return p, nil
}

// dayGenerateCharge reads the field as the reference gives it: a day of the month, or an
// ISO date (YYYY-MM-DD, or a date-time, read as its date in Brasília) of the first charge.
// null or absent is neither.
func dayGenerateCharge(raw json.RawMessage) (day *int, date time.Time, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, time.Time{}, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return &n, time.Time{}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if at, ok := firstChargeDate(s); ok {
			return nil, at, nil
		}
	}
	return nil, time.Time{}, invalid("dayGenerateCharge", "dayGenerateCharge must be a day of the month (1 to 31) or the date of the first charge (YYYY-MM-DD)")
}

// subscriptionResponse is the answer of create, get and cancel.
type subscriptionResponse struct {
	Subscription payments.Subscription `json:"subscription"`
}

// subscriptionListResponse is the answer of GET /subscriptions.
type subscriptionListResponse struct {
	Subscriptions []payments.Subscription `json:"subscriptions"`
	PageInfo      payments.PageInfo       `json:"pageInfo"`
}

// handleSubscriptionCreate: POST /subscriptions → 200 {subscription}.
func handleSubscriptionCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[subscriptionBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		p, err := body.params()
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		s, err := company(r).CreateSubscription(r.Context(), p)
		if payments.ErrorField(err) == "firstChargeDate" { // sent as dayGenerateCharge
			err = invalid("dayGenerateCharge", "%s", strings.Replace(payments.ErrorMessage(err), "firstChargeDate", "dayGenerateCharge", 1))
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionResponse{Subscription: s})
	})
}

// handleSubscriptionGet: GET /subscriptions/{id} (globalID or correlationID) → 200
// {subscription}.
func handleSubscriptionGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := company(r).GetSubscription(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionResponse{Subscription: s})
	})
}

// handleSubscriptionList: GET /subscriptions?skip&limit → 200 {subscriptions, pageInfo},
// newest first.
func handleSubscriptionList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ss, page, err := company(r).ListSubscriptions(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionListResponse{Subscriptions: ss, PageInfo: page})
	})
}

// handleSubscriptionCancel: PUT /subscriptions/{id}/cancel → 200 {subscription}, CANCELED.
// The real API documents a bare 200; the subscription as canceled is what a client can use.
func handleSubscriptionCancel(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := company(r).CancelSubscription(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, subscriptionResponse{Subscription: s})
	})
}

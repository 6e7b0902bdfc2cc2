package httpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
)

// chargeBody is the body of POST /charge. Money is in centavos; interests, fines and
// discount percentages are basis points (see payments.Interests). The discount settings
// come as discountSettings (the wire's name) or discount (the spec's), not both.
type chargeBody struct {
	CorrelationID                     string                     `json:"correlationID"`
	Value                             centavos                   `json:"value"`
	Type                              string                     `json:"type"`
	Comment                           string                     `json:"comment"`
	ExpiresIn                         int64                      `json:"expiresIn"`
	ExpiresDate                       string                     `json:"expiresDate"`
	Customer                          *customerBody              `json:"customer"`
	DaysForDueDate                    int                        `json:"daysForDueDate"`
	DaysAfterDueDate                  int                        `json:"daysAfterDueDate"`
	Interests                         *payments.Interests        `json:"interests"`
	Fines                             *payments.Fines            `json:"fines"`
	DiscountSettings                  *payments.DiscountSettings `json:"discountSettings"`
	Discount                          *payments.DiscountSettings `json:"discount"`
	AdditionalInfo                    []payments.AdditionalInfo  `json:"additionalInfo"`
	EnableCashbackPercentage          bool                       `json:"enableCashbackPercentage"`
	EnableCashbackExclusivePercentage bool                       `json:"enableCashbackExclusivePercentage"`
	Subaccount                        string                     `json:"subaccount"`
	Splits                            []splitBody                `json:"splits"`
	// Read only to refuse them clearly rather than ignore them: see params.
	EnsureSameTaxID *bool `json:"ensureSameTaxID"`
	// EnsureSameTaxIDNode is the Node SDK's spelling, ensureSameTaxId: keys match exactly,
	// so it is a field of its own, read as ensureSameTaxID.
	EnsureSameTaxIDNode *bool           `json:"ensureSameTaxId"`
	DueDate             json.RawMessage `json:"dueDate"`
}

// splitBody is one element of a charge's splits.
type splitBody struct {
	Value     centavos `json:"value"`
	PixKey    string   `json:"pixKey"`
	SplitType string   `json:"splitType"`
}

// chargeRefundBody is the body of POST /charge/{id}/refund.
type chargeRefundBody struct {
	CorrelationID string   `json:"correlationID"`
	Value         centavos `json:"value"` // 0 or absent: all that remains
	Comment       string   `json:"comment"`
}

// params turns the body into the Service's params.
func (b chargeBody) params() (payments.CreateChargeParams, error) {
	p := payments.CreateChargeParams{
		CorrelationID: b.CorrelationID, Value: int64(b.Value), Type: payments.ChargeType(b.Type),
		Comment: b.Comment, ExpiresIn: b.ExpiresIn,
		DaysForDueDate: b.DaysForDueDate, DaysAfterDueDate: b.DaysAfterDueDate,
		Interests: b.Interests, Fines: b.Fines, Discount: b.DiscountSettings,
		AdditionalInfo:                    b.AdditionalInfo,
		EnableCashbackPercentage:          b.EnableCashbackPercentage,
		EnableCashbackExclusivePercentage: b.EnableCashbackExclusivePercentage,
		Subaccount:                        b.Subaccount,
	}
	var err error
	if p.ExpiresDate, err = expiresDate(b.ExpiresDate); err != nil {
		return p, err
	}
	if b.EnsureSameTaxID != nil && *b.EnsureSameTaxID || b.EnsureSameTaxIDNode != nil && *b.EnsureSameTaxIDNode {
		// Only the customer's tax ID may pay: not enforced here, so not accepted either.
		return p, invalid("ensureSameTaxID", "ensureSameTaxID (a charge only the customer's tax ID may pay) is not offered in this version")
	}
	if d := bytes.TrimSpace(b.DueDate); len(d) > 0 && string(d) != "null" {
		return p, invalid("dueDate", "dueDate is not read here: an OVERDUE charge is due daysForDueDate days after it is created")
	}
	if b.Discount != nil {
		if b.DiscountSettings != nil {
			return p, invalid("discount", "give discountSettings or discount, not both")
		}
		p.Discount = b.Discount
	}
	if b.Customer != nil {
		c, err := b.Customer.params("customer.taxID")
		if err != nil {
			return p, err
		}
		p.Customer = &c
	}
	for _, sp := range b.Splits {
		p.Splits = append(p.Splits, payments.Split{Value: int64(sp.Value), PixKey: sp.PixKey, SplitType: payments.SplitType(sp.SplitType)})
	}
	return p, nil
}

// handleChargeCreate: POST /charge?return_existing=true|false → 200 {charge,
// correlationID, brCode}. With return_existing=true a charge with the same correlationID
// is returned instead of a conflict.
func handleChargeCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		existing, err := queryBool(r, "return_existing")
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		body, err := decode[chargeBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		p, err := body.params()
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		p.ReturnExisting = existing
		c, err := company(r).CreateCharge(r.Context(), p)
		if err != nil {
			if body.DiscountSettings != nil {
				err = renameField(err, "discount", "discountSettings") // the name the client sent
			}
			writeError(w, r, log, err)
			return
		}
		subs, err := chargeSubscriptions(r, c)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, chargeCreatedReply{BRCode: c.BRCode, Charge: c, CorrelationID: c.CorrelationID, subs: subs})
	})
}

// handleChargeGet: GET /charge/{id} (correlationID, transactionID, paymentLinkID or
// globalID) → 200 {charge}.
func handleChargeGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := company(r).GetCharge(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		subs, err := chargeSubscriptions(r, c)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, chargeReply{Charge: c, subs: subs})
	})
}

// handleChargeList: GET /charge?start&end&status&customer&subscription&skip&limit → 200
// {charges, pageInfo}, newest first. start and end are RFC 3339 and bound createdAt.
func handleChargeList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := chargeFilter(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		cs, page, err := company(r).ListCharges(r.Context(), f)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		subs, err := chargeSubscriptions(r, cs...)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, chargeListReply{Charges: cs, PageInfo: page, subs: subs})
	})
}

func chargeFilter(r *http.Request) (payments.ChargeFilter, error) {
	var f payments.ChargeFilter
	var err error
	if f.ListParams, err = listParams(r); err != nil {
		return f, err
	}
	if f.Start, err = queryTime(r, "start"); err != nil {
		return f, err
	}
	if f.End, err = queryTime(r, "end"); err != nil {
		return f, err
	}
	q := r.URL.Query()
	f.Status = payments.ChargeStatus(q.Get("status"))
	f.Customer = q.Get("customer")
	f.Subscription = q.Get("subscription")
	return f, nil
}

// handleChargeDelete: DELETE /charge/{id} → 200 {status:"OK", id}, id as given. A paid
// charge is not deleted (400).
func handleChargeDelete(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := company(r).DeleteCharge(r.Context(), id); err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, deletedReply{ID: id, Status: "OK"})
	})
}

// handleChargeExpiryUpdate: PATCH /charge/{id} {expiresDate} → 200 {status:"OK", id,
// expiresDate}, id as given: moves when an ACTIVE DYNAMIC charge expires
// (payments.Service.UpdateChargeExpiry).
func handleChargeExpiryUpdate(log *slog.Logger) http.Handler {
	type request struct {
		ExpiresDate string `json:"expiresDate"`
	}
	type reply struct {
		ExpiresDate time.Time `json:"expiresDate"`
		ID          string    `json:"id"`
		Status      string    `json:"status"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[request](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		at, err := expiresDate(strings.TrimSpace(body.ExpiresDate)) // empty: the Service says it is required
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		id := r.PathValue("id")
		c, err := company(r).UpdateChargeExpiry(r.Context(), id, at)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, reply{ExpiresDate: c.ExpiresDate, ID: id, Status: "OK"})
	})
}

// handleChargeRefundCreate: POST /charge/{id}/refund {correlationID, value, comment} →
// 200 {refund}. The charge must be paid.
func handleChargeRefundCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[chargeRefundBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ref, err := company(r).CreateChargeRefund(r.Context(), r.PathValue("id"), payments.CreateChargeRefundParams{
			CorrelationID: body.CorrelationID, Value: int64(body.Value), Comment: body.Comment,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, refundReply{Refund: ref})
	})
}

// handleChargeRefundList: GET /charge/{id}/refund?skip&limit → 200 {refunds, pageInfo}.
func handleChargeRefundList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		rs, page, err := company(r).ListChargeRefunds(r.Context(), r.PathValue("id"), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, refundListReply{PageInfo: page, Refunds: rs})
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	chargeCreatedReply struct {
		BRCode        string          `json:"brCode"`
		Charge        payments.Charge `json:"charge"`
		CorrelationID string          `json:"correlationID"`
		subs          chargeSubs
	}
	chargeReply struct {
		Charge payments.Charge `json:"charge"`
		subs   chargeSubs
	}
	chargeListReply struct {
		Charges  []payments.Charge `json:"charges"`
		PageInfo payments.PageInfo `json:"pageInfo"`
		subs     chargeSubs
	}
)

// chargeSubs are the subscriptions that made the charges of a reply, by correlationID,
// written as the document's Subscription objects (charge_json.go); nil when none did.
type chargeSubs = map[string]*payments.Subscription

// chargeSubscriptions reads the subscriptions that made cs (Service.ChargeSubscriptions);
// a charge made by none costs nothing.
func chargeSubscriptions(r *http.Request, cs ...payments.Charge) (chargeSubs, error) {
	for _, c := range cs {
		if c.Subscription != "" {
			return company(r).ChargeSubscriptions(r.Context(), cs...)
		}
	}
	return nil, nil
}

// renameField is err with its field, and the field's name where its message starts with it,
// renamed from from (or from.x, from[i]) to to: the Service names the discount settings
// "discount", as the spec does, and a client that sent the wire's discountSettings is told
// about the field it sent.
func renameField(err error, from, to string) error {
	var e *payments.Error
	if !errors.As(err, &e) {
		return err
	}
	rest, ok := strings.CutPrefix(e.Field, from)
	if !ok || rest != "" && rest[0] != '.' && rest[0] != '[' {
		return err
	}
	msg := e.Message
	if m, ok := strings.CutPrefix(msg, e.Field); ok {
		msg = to + rest + m
	}
	return &payments.Error{Code: e.Code, Field: to + rest, Message: msg}
}

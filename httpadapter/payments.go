package httpadapter

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/pixfoundry/payments"
)

// paymentBody is the body of POST /payment: one of the reference's three shapes (PIX_KEY,
// also without type as the Node SDK sends it; QR_CODE; MANUAL), plus autoApprove. metadata
// and pixKeyEndToEndId are accepted and ignored.
type paymentBody struct {
	Type                 string   `json:"type"`
	Value                centavos `json:"value"`
	DestinationAlias     string   `json:"destinationAlias"`
	DestinationAliasType string   `json:"destinationAliasType"`
	QRCode               string   `json:"qrCode"`
	CorrelationID        string   `json:"correlationID"`
	Comment              string   `json:"comment"`
	SourceAccountID      string   `json:"sourceAccountId"`
	AutoApprove          bool     `json:"autoApprove"`
	PSP                  *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"psp"`
	Holder *struct {
		Name  string          `json:"name"`
		TaxID json.RawMessage `json:"taxID"`
	} `json:"holder"`
	Account *struct {
		Account     string `json:"account"`
		Branch      string `json:"branch"`
		AccountType string `json:"accountType"`
	} `json:"account"`
}

// paymentApproveBody is the body of POST /payment/approve.
type paymentApproveBody struct {
	CorrelationID string `json:"correlationID"`
}

// paymentView is a payment as the wire shows it.
type paymentView struct {
	ID                   string                 `json:"id"`
	Type                 payments.PaymentType   `json:"type"`
	Value                int64                  `json:"value"`
	DestinationAlias     string                 `json:"destinationAlias"`
	DestinationAliasType string                 `json:"destinationAliasType"`
	QRCode               string                 `json:"qrCode,omitempty"`
	CorrelationID        string                 `json:"correlationID"`
	Comment              string                 `json:"comment"`
	Status               payments.PaymentStatus `json:"status"`
	SourceAccountID      string                 `json:"sourceAccountId"`
	CreatedAt            time.Time              `json:"createdAt"`
	UpdatedAt            time.Time              `json:"updatedAt"`
}

// paymentReply is {payment, transaction, destination}: the reply of approve and get, an
// item of the list, and the create reply with autoApprove. transaction is null until the
// payment is approved.
type paymentReply struct {
	Payment     paymentView                  `json:"payment"`
	Transaction *payments.PaymentTransaction `json:"transaction"`
	Destination payments.PaymentDestination  `json:"destination"`
}

// paymentCreateReply is the reply of POST /payment without autoApprove: {payment}.
type paymentCreateReply struct {
	Payment paymentView `json:"payment"`
}

// paymentListReply is the reply of GET /payment.
type paymentListReply struct {
	Status   string            `json:"status"`
	Payments []paymentReply    `json:"payments"`
	PageInfo payments.PageInfo `json:"pageInfo"`
}

func viewPayment(p payments.Payment) paymentView {
	return paymentView{ID: p.ID, Type: p.Type, Value: p.Value, DestinationAlias: p.DestinationAlias,
		DestinationAliasType: p.DestinationAliasType, QRCode: p.QRCode, CorrelationID: p.CorrelationID,
		Comment: p.Comment, Status: p.Status, SourceAccountID: p.SourceAccountID, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func replyPayment(p payments.Payment) paymentReply {
	return paymentReply{Payment: viewPayment(p), Transaction: p.Transaction, Destination: p.Destination}
}

// handlePaymentCreate: POST /payment → 200 {payment} with status CREATED; with
// autoApprove, 200 {payment, transaction, destination} with status APPROVED. A repeated
// correlationID is 400 "Já existe um pagamento com o correlationID fornecido". Payments
// are paid from the default account: a sourceAccountId naming another is a 400.
func handlePaymentCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[paymentBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		svc := company(r)
		if body.SourceAccountID != "" {
			a, err := svc.DefaultAccount(r.Context())
			if err != nil {
				writeError(w, r, log, err)
				return
			}
			if body.SourceAccountID != a.AccountID {
				writeError(w, r, log, invalid("sourceAccountId", "sourceAccountId: payments are paid from the default account %s", a.AccountID))
				return
			}
		}
		p := payments.CreatePaymentParams{Type: payments.PaymentType(body.Type), Value: int64(body.Value),
			DestinationAlias: body.DestinationAlias, DestinationAliasType: body.DestinationAliasType, QRCode: body.QRCode,
			CorrelationID: body.CorrelationID, Comment: body.Comment, AutoApprove: body.AutoApprove}
		if p.Type == payments.PaymentManual {
			if p.Account, err = manualAccount(body); err != nil {
				writeError(w, r, log, err)
				return
			}
		}
		pay, err := svc.CreatePayment(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if body.AutoApprove {
			encode(w, http.StatusOK, replyPayment(pay))
			return
		}
		encode(w, http.StatusOK, paymentCreateReply{Payment: viewPayment(pay)})
	})
}

// manualAccount reads the psp, holder and account of a MANUAL payment.
func manualAccount(body paymentBody) (*payments.BankAccount, error) {
	switch {
	case body.PSP == nil:
		return nil, invalid("psp", "psp is required for a MANUAL payment")
	case body.Holder == nil:
		return nil, invalid("holder", "holder is required for a MANUAL payment")
	case body.Account == nil:
		return nil, invalid("account", "account is required for a MANUAL payment")
	}
	taxID, err := taxIDString("holder.taxID", body.Holder.TaxID)
	if err != nil {
		return nil, err
	}
	return &payments.BankAccount{ISPB: body.PSP.ID, PSPName: body.PSP.Name, Branch: body.Account.Branch,
		Account: body.Account.Account, AccountType: body.Account.AccountType, HolderName: body.Holder.Name, HolderTaxID: taxID}, nil
}

// handlePaymentApprove: POST /payment/approve {correlationID} → 200 {payment, transaction,
// destination}, the payment APPROVED (held and sent; a GET shows CONFIRMED or FAILED once
// the bank answers). Not enough balance is 400 "You do not have enough balance to make
// this payment"; a payment that is not CREATED is a 400 naming its status.
func handlePaymentApprove(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[paymentApproveBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		p, err := company(r).ApprovePayment(r.Context(), body.CorrelationID)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, replyPayment(p))
	})
}

// handlePaymentGet: GET /payment/{id} (id or correlationID) → 200 {payment, transaction,
// destination}, as stored: no call to the bank.
func handlePaymentGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := company(r).GetPayment(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, replyPayment(p))
	})
}

// handlePaymentList: GET /payment?start&end&skip&limit → 200 {status:"OK", payments:
// [{payment, transaction, destination}], pageInfo}, newest first; start and end filter on
// createdAt.
func handlePaymentList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f payments.PaymentFilter
		var err error
		if f.ListParams, err = listParams(r); err != nil {
			writeError(w, r, log, err)
			return
		}
		if f.Start, err = queryTime(r, "start"); err != nil {
			writeError(w, r, log, err)
			return
		}
		if f.End, err = queryTime(r, "end"); err != nil {
			writeError(w, r, log, err)
			return
		}
		ps, page, err := company(r).ListPayments(r.Context(), f)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		reply := paymentListReply{Status: "OK", Payments: make([]paymentReply, len(ps)), PageInfo: page}
		for i, p := range ps {
			reply.Payments[i] = replyPayment(p)
		}
		encode(w, http.StatusOK, reply)
	})
}

package httpadapter

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/internal/wiretime"
)

// The sandbox's simulated payment, as the real sandbox reports it.
const (
	sandboxInfoPagador = "OpenPix testing"
	sandboxPayerName   = "Sandbox Payer"
	sandboxPayerTaxID  = "11144477735" // a valid CPF, of nobody
)

// handleSandboxPay: GET /<vendor>/testing?transactionID=<charge> or ?identifier=<static QR
// code>, served only when Options.Sandbox is on, for the caller's company.
//
// transactionID (also a charge's identifier, correlationID or any id GetCharge accepts)
// pays an ACTIVE charge its amount due now (a value query parameter other than that is a
// 400 saying the amount, as for a static QR code's fixed value); a paid or expired charge
// is refused with 400, so the sandbox never makes a Pix the charge cannot take. identifier (or any id of a
// static QR code) pays the code its value, or the value query parameter (centavos) when
// the code has none. Either is a Pix received through payments.Service.ReceiveChargePix
// or ReceivePix, with everything a real one causes (ledger, charge completion, events),
// with a fresh endToEndId from the fictitious sandbox bank. Concurrent calls for one
// charge pay it once: one 200, the others 400 "charge <correlationID> is already paid".
//
// → 200 {transaction, charge} or {transaction, pixQrCode}, as they are after the payment.
func handleSandboxPay(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		chargeID, qrID := q.Get("transactionID"), q.Get("identifier") // as sent: a correlationID may end in spaces
		blank := func(s string) bool { return strings.TrimSpace(s) == "" }
		var body any
		var err error
		switch {
		case !blank(chargeID) && !blank(qrID):
			err = invalid("identifier", "give transactionID (a charge) or identifier (a static QR code), not both")
		case !blank(chargeID):
			body, err = sandboxPayCharge(r, chargeID)
		case !blank(qrID):
			body, err = sandboxPayQRCode(r, qrID)
		default:
			err = invalid("transactionID", "transactionID (a charge) or identifier (a static QR code) is required")
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, body)
	})
}

// sandboxPayCharge pays the charge through payments.Service.ReceiveChargePix: the check
// that the charge can be paid and the payment are one transaction, so of concurrent calls
// for one charge exactly one pays it and the others are refused.
func sandboxPayCharge(r *http.Request, id string) (any, error) {
	value, err := sandboxValue(r)
	if err != nil {
		return nil, err
	}
	x, c, err := company(r).ReceiveChargePix(r.Context(), id, sandboxPix(r, value, ""))
	if err != nil {
		return nil, err
	}
	subs, err := chargeSubscriptions(r, c)
	if err != nil {
		return nil, err
	}
	return sandboxChargePaidReply{Charge: wireCharge{c, subs[c.Subscription]}, Transaction: viewTransaction(x)}, nil
}

func sandboxPayQRCode(r *http.Request, id string) (any, error) {
	co := company(r)
	qr, err := co.GetPixQRCode(r.Context(), id)
	if err != nil {
		return nil, err
	}
	value, err := sandboxValue(r)
	switch {
	case err != nil:
		return nil, err
	case qr.Value != 0 && value != 0 && value != qr.Value:
		return nil, invalid("value", "this QR code has a fixed value of %d centavos", qr.Value)
	case value == 0:
		value = qr.Value
	}
	if value == 0 {
		return nil, invalid("value", "value is required: this QR code lets the payer choose the amount (centavos)")
	}
	x, err := co.ReceivePix(r.Context(), sandboxPix(r, value, qr.Identifier))
	if err != nil {
		return nil, err
	}
	return sandboxPixQRCodePaidReply{PixQRCode: qr, Transaction: viewTransaction(x)}, nil
}

// sandboxValue is the value query parameter in centavos, 0 when absent.
func sandboxValue(r *http.Request) (int64, error) {
	s := strings.TrimSpace(r.URL.Query().Get("value"))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, invalid("value", "value must be a positive whole number of centavos")
	}
	return n, nil
}

// sandboxPix is the Pix the sandbox's payer sends, with an endToEndId from the Service's
// clock and id source.
func sandboxPix(r *http.Request, value int64, txID string) payments.ReceivePixParams {
	return payments.ReceivePixParams{
		EndToEndID: company(r).NewSandboxEndToEndID(), Value: value, TxID: txID,
		Payer:       &payments.Payer{Name: sandboxPayerName, TaxID: sandboxPayerTaxID},
		InfoPagador: sandboxInfoPagador,
	}
}

// clockBody is the answer of the clock routes.
type clockBody struct {
	Now string `json:"now"` // RFC 3339, UTC
}

func clockAnswer(now time.Time) clockBody {
	// At millisecond precision, as the Service stamps every record: a record made right
	// after this answer is never earlier than it.
	return clockBody{Now: now.UTC().Truncate(time.Millisecond).Format(wiretime.Layout)}
}

// handleSandboxClockGet: GET /<vendor>/testing/clock → 200 {now}, the server's time.
func handleSandboxClockGet(log *slog.Logger, clock payments.MovableClock) http.Handler {
	if clock == nil {
		return handleNotImplemented(log, "this server's clock cannot be moved (httpadapter.Options.Clock is not set)")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, clockAnswer(clock.Now()))
	})
}

// handleSandboxClockAdvance: POST /<vendor>/testing/clock {"advance":"<Go duration>"} (e.g.
// "744h", "90m", "0s") moves the server's clock forward as if the time passed
// (payments.Service.AdvanceClock): the due pass runs at each moment work falls due on the
// way (a subscription's period, an expiry, an outgoing order's step, a webhook's retry)
// and at the end, before the answer, so a client that advances and then lists sees what
// the time made due, in the order it fell due. → 200 {now}. A missing, malformed or
// negative advance is a 400 naming "advance": the clock never moves back. The clock is
// the server's, one for every company: any company's App ID moves it. A move takes as
// long as the work it makes due (seconds for a year of thousands of subscriptions), so
// the handler lifts the server's write deadline (http.Server.WriteTimeout) for its answer.
// When the move was made but some due work failed on the way (payments.ErrDueFailed), the
// answer is still 200: the failure, maybe another company's, is logged by the pass and
// tried again by the next one, and an error would only lead the client to move again.
func handleSandboxClockAdvance(log *slog.Logger, clock payments.MovableClock) http.Handler {
	if clock == nil {
		return handleNotImplemented(log, "this server's clock cannot be moved (httpadapter.Options.Clock is not set)")
	}
	type request struct {
		Advance *string `json:"advance"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[request](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if req.Advance == nil || strings.TrimSpace(*req.Advance) == "" {
			writeError(w, r, log, invalid("advance", `advance is required: a duration such as "744h" or "90m"`))
			return
		}
		d, err := time.ParseDuration(strings.TrimSpace(*req.Advance))
		if err != nil {
			writeError(w, r, log, invalid("advance", `advance must be a duration such as "744h" or "90m"`))
			return
		}
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{}) // not supported: nothing to lift
		now, err := company(r).AdvanceClock(r.Context(), clock, d)
		if errors.Is(err, payments.ErrDueFailed) {
			log.LogAttrs(r.Context(), slog.LevelWarn, "clock moved, but due work failed", slog.String("err", err.Error()))
		} else if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, clockAnswer(now))
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	sandboxChargePaidReply struct {
		Charge      wireCharge      `json:"charge"`
		Transaction transactionView `json:"transaction"` // as the transaction routes show it
	}
	sandboxPixQRCodePaidReply struct {
		PixQRCode   payments.PixQRCode `json:"pixQrCode"`
		Transaction transactionView    `json:"transaction"`
	}
)

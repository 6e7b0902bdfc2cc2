package apipix

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/pixfoundry/payments/rail"
)

// Send hands o to the PSP. A refund is the API Pix's devolução, PUT
// /pix/{endToEndId}/devolucao/{OrderRef(o.ID)}; a payment or withdrawal goes to the
// Sender. Send is idempotent by o.ID: the PSP knows the order by OrderRef(o.ID), and a
// send it says is already there is read back.
func (d *Driver) Send(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	if err := rail.CheckOrder(o); err != nil {
		return rail.Settlement{}, err
	}
	if err := ctxErr(ctx); err != nil {
		return rail.Settlement{}, err
	}
	if o.Kind == rail.OrderRefund {
		return d.sendRefund(ctx, o)
	}
	s := d.getSender()
	if s == nil {
		return rail.Settlement{}, rail.Refused(rail.ReasonRefused, "no sender of payments is configured for this PSP")
	}
	if o.Kind == rail.OrderWithdrawal && o.Account == nil && (o.Key == "" || o.Key == d.pixKey) {
		// money out to the company's own account: not the key it receives at this PSP
		// (which would move nothing) but Config.WithdrawalKey, its account elsewhere
		if d.withdrawalKey == "" {
			return rail.Settlement{}, rail.Refused(rail.ReasonRefused, "a withdrawal to the company's own account needs a withdrawal key (Config.WithdrawalKey), its account at another bank")
		}
		o.Key, o.KeyType = d.withdrawalKey, ""
	}
	return s.Send(ctx, o, d.pixKey)
}

// Status asks the PSP where o stands: the devolução of a refund, the Sender's answer for
// a payment or withdrawal. rail.ErrUnknownOrder says the PSP has no record of it.
func (d *Driver) Status(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	if err := rail.CheckOrder(o); err != nil {
		return rail.Settlement{}, err
	}
	if err := ctxErr(ctx); err != nil {
		return rail.Settlement{}, err
	}
	if o.Kind == rail.OrderRefund {
		return d.refundStatus(ctx, o)
	}
	s := d.getSender()
	if s == nil {
		// Not ErrUnknownOrder: the order may have gone out through a sender configured
		// before, and an unknown order would be sent again.
		return rail.Settlement{}, fmt.Errorf("apipix: no sender is configured to ask about order %s", o.ID)
	}
	return s.Status(ctx, o)
}

// endToEndPattern is an endToEndId: 32 letters and digits (E, the ISPB, the date and
// hour yyyyMMddHHmm, 11 more).
var endToEndPattern = regexp.MustCompile(`^E\d{20}[a-zA-Z0-9]{11}$`)

// devolucaoRequest is the body of PUT /pix/{e2eid}/devolucao/{id}.
type devolucaoRequest struct {
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza,omitempty"`
	Descricao string `json:"descricao,omitempty"`
}

// devolucao is the PSP's record of a refund.
type devolucao struct {
	ID    string `json:"id"`
	RtrID string `json:"rtrId"`
	outgoingRecord
}

// outgoingRecord is what the PSP's record of a Pix going out says in the same fields
// for a devolução and for Efí's send: the value, when it was asked for and when it
// settled, the status and, for one that failed, why.
type outgoingRecord struct {
	Valor   string `json:"valor"`
	Horario struct {
		Solicitacao string `json:"solicitacao"`
		Liquidacao  string `json:"liquidacao"`
	} `json:"horario"`
	Status string `json:"status"`
	Motivo string `json:"motivo"`
}

// refundURL is the devolução of o.
func (d *Driver) refundURL(o rail.PixOrder) string {
	return d.base + "/pix/" + url.PathEscape(o.EndToEndID) + "/devolucao/" + url.PathEscape(OrderRef(o.ID))
}

// checkRefund checks what CheckOrder leaves to the driver: an endToEndId the PSP can
// take.
func checkRefund(o rail.PixOrder) error {
	if !endToEndPattern.MatchString(o.EndToEndID) {
		return rail.Invalid("endToEndId", "not an endToEndId (E, 8-digit ISPB, yyyyMMddHHmm, 11 letters or digits)")
	}
	return nil
}

// sendRefund asks the PSP to refund o.Value of the Pix o.EndToEndID. An answer that
// refuses the request is read back: a devolução already under this id is the order sent
// before (if its value agrees); none means the PSP did nothing, a refusal.
func (d *Driver) sendRefund(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	if err := checkRefund(o); err != nil {
		return rail.Settlement{}, err
	}
	valor, err := formatValor(o.Value)
	if err != nil {
		return rail.Settlement{}, rail.Invalid("value", err.Error())
	}
	req := devolucaoRequest{Valor: valor, Natureza: "ORIGINAL", Descricao: truncate(o.Comment, 140)}
	var dev devolucao
	err = d.Do(ctx, http.MethodPut, d.refundURL(o), req, &dev)
	if err == nil {
		if dev.Status != "EM_PROCESSAMENTO" {
			// A refund made before that has settled: its outcome is read where Status
			// reads it, for one answer about one refund.
			if st, err := d.refundStatus(ctx, o); err == nil {
				return st, nil
			}
		}
		return refundSettlement(dev)
	}
	if !rejected(err) && !notFound(err) {
		return rail.Settlement{}, err
	}
	var got devolucao
	rerr := d.Do(ctx, http.MethodGet, d.refundURL(o), nil, &got)
	switch {
	case rerr == nil:
		if v, perr := parseValor(got.Valor); perr != nil || v != o.Value {
			return rail.Settlement{}, fmt.Errorf("apipix: refund id %s of %s is in use by a refund of another value (%s): %w", OrderRef(o.ID), o.EndToEndID, got.Valor, err)
		}
		return refundSettlement(got)
	case notFound(rerr) && !isStatus(err, http.StatusConflict):
		// The PSP refused the refund (or has no such Pix, 404) and has none under its id.
		return rail.Settlement{}, d.refundRefusal(ctx, o, err)
	case notFound(rerr):
		return rail.Settlement{}, fmt.Errorf("apipix: the PSP answered a conflict for refund %s and has no record of it: %w", OrderRef(o.ID), err)
	default:
		return rail.Settlement{}, fmt.Errorf("apipix: reading refund %s back after %v: %w", OrderRef(o.ID), err, rerr)
	}
}

// refundWindow is how long after a Pix it can be refunded (the standard's 90 days).
const refundWindow = 90 * 24 * time.Hour

// refundRefusal is the refusal of refund o, which the PSP answered with perr and has no
// record of. The standard gives one error type for every reason (PixDevolucaoInvalida),
// so the reason is found from the Pix itself rather than from the PSP's words: a total
// above the Pix's value is AM02; the rest is ReasonRefused with the PSP's detail.
func (d *Driver) refundRefusal(ctx context.Context, o rail.PixOrder, perr error) error {
	detail := perr.Error()
	if e, ok := asError(perr); ok && e.describe() != "" {
		detail = e.describe()
	}
	var px pixItem
	err := d.Do(ctx, http.MethodGet, d.base+"/pix/"+url.PathEscape(o.EndToEndID), nil, &px)
	switch {
	case notFound(err):
		return rail.Refused(rail.ReasonRefused, "the PSP has no record of the Pix "+o.EndToEndID+": "+detail)
	case err != nil:
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr // an ended context is never a refusal: the retry is refused again
		}
		return rail.Refused(rail.ReasonRefused, detail)
	}
	value, verr := parseValor(px.Valor)
	if verr != nil {
		return rail.Refused(rail.ReasonRefused, detail)
	}
	refunded := int64(0)
	for _, dv := range px.Devolucoes {
		if v, err := parseValor(dv.Valor); err == nil && dv.Status != "NAO_REALIZADO" && dv.ID != OrderRef(o.ID) {
			refunded += v
		}
	}
	if refunded+o.Value > value {
		return rail.Refused(rail.ReasonAM02, fmt.Sprintf("the refunds would total more than the Pix's %s: %s", px.Valor, detail))
	}
	if at, err := time.Parse(time.RFC3339Nano, px.Horario); err == nil && d.now().Sub(at) > refundWindow {
		return rail.Refused(rail.ReasonRefused, "the Pix is older than the 90 days it can be refunded in: "+detail)
	}
	return rail.Refused(rail.ReasonRefused, detail)
}

// refundStatus reads the devolução of o.
func (d *Driver) refundStatus(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	if err := checkRefund(o); err != nil {
		return rail.Settlement{}, err
	}
	var dev devolucao
	if err := d.Do(ctx, http.MethodGet, d.refundURL(o), nil, &dev); err != nil {
		if notFound(err) {
			return rail.Settlement{}, fmt.Errorf("%w: %w", rail.ErrUnknownOrder, err)
		}
		return rail.Settlement{}, err
	}
	return refundSettlement(dev)
}

// refundSettlement maps a devolução to a settlement: EM_PROCESSAMENTO is pending,
// DEVOLVIDO confirmed with the rtrId as the Pix's id, NAO_REALIZADO failed. The bank
// reference is the devolução id.
func refundSettlement(dev devolucao) (rail.Settlement, error) {
	return settlement(dev.Status, "DEVOLVIDO", dev.ID, dev.RtrID, dev.Horario.Solicitacao, dev.Horario.Liquidacao, dev.Motivo)
}

// isoReason is an ISO 20022 reason code as a PSP may give it in motivo.
var isoReason = regexp.MustCompile(`^[A-Z]{2}\d{2}$`)

// settlement maps a PSP's status of an outgoing Pix (a send or a devolução) to a
// settlement. EM_PROCESSAMENTO is pending, done (REALIZADO, DEVOLVIDO) confirmed with the
// Pix's id e2e, NAO_REALIZADO failed with motivo as its reason when it is an ISO 20022
// code (else ReasonBankError, motivo the detail). At is when it settled (liquidacao),
// else when it was asked for (solicitacao).
func settlement(status, done, ref, e2e, solicitacao, liquidacao, motivo string) (rail.Settlement, error) {
	at, err := parseHorario(liquidacao, solicitacao)
	if err != nil {
		return rail.Settlement{}, err
	}
	s := rail.Settlement{BankRef: ref, At: at}
	switch status {
	case "EM_PROCESSAMENTO":
		s.Status = rail.SettlementPending
	case done:
		s.Status, s.EndToEndID = rail.SettlementConfirmed, e2e
		if e2e == "" {
			return rail.Settlement{}, fmt.Errorf("apipix: the PSP says %s is %s without the Pix's id", ref, status)
		}
	case "NAO_REALIZADO":
		s.Status, s.Reason, s.Detail = rail.SettlementFailed, rail.ReasonBankError, motivo
		if isoReason.MatchString(motivo) {
			s.Reason, s.Detail = motivo, ""
		}
	default:
		return rail.Settlement{}, fmt.Errorf("apipix: the PSP answered the unknown status %q for %s", status, ref)
	}
	return s, nil
}

// parseHorario reads the first of times that is set, an RFC 3339 time; none is the zero
// time.
func parseHorario(times ...string) (time.Time, error) {
	for _, t := range times {
		if t == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return time.Time{}, fmt.Errorf("apipix: the PSP's horario %q is not an RFC 3339 time", t)
		}
		return at, nil
	}
	return time.Time{}, nil
}

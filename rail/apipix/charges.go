package apipix

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// txidPattern is the txid of a charge the company creates (the standard's TxId, written
// unanchored in the document and anchored here, as PSPs apply it).
var txidPattern = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)

// Charge statuses of the standard (CobrancaStatus).
const (
	statusPaid            = "CONCLUIDA"
	statusRemovedByUser   = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	statusRemovedByPSP    = "REMOVIDA_PELO_PSP"
	maxSolicitacaoPagador = 140
	maxNome               = 200
)

// cobRequest is the body of PUT /cob/{txid} (CobSolicitada) and PUT /cobv/{txid}
// (CobVSolicitada); the calendario and valor of each are their own.
type cobRequest struct {
	Calendario         any      `json:"calendario"`
	Devedor            *devedor `json:"devedor,omitempty"`
	Valor              any      `json:"valor"`
	Chave              string   `json:"chave"`
	SolicitacaoPagador string   `json:"solicitacaoPagador,omitempty"`
}

// cobCalendario is an immediate charge's calendario: its life in seconds from creation.
type cobCalendario struct {
	Expiracao int64 `json:"expiracao"`
}

// cobvCalendario is a due-date charge's calendario.
type cobvCalendario struct {
	DataDeVencimento       string `json:"dataDeVencimento"`
	ValidadeAposVencimento int    `json:"validadeAposVencimento"`
}

// devedor is a charge's payer: a CPF or a CNPJ, with the name the standard requires with
// either.
type devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

// cobValor is an immediate charge's valor.
type cobValor struct {
	Original string `json:"original"`
}

// cobvValor is a due-date charge's valor (CobVValor).
type cobvValor struct {
	Original string        `json:"original"`
	Multa    *modalidade   `json:"multa,omitempty"`
	Juros    *modalidade   `json:"juros,omitempty"`
	Desconto *cobvDesconto `json:"desconto,omitempty"`
}

// modalidade is a fine's or interest's kind and amount or percentage.
type modalidade struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

// cobvDesconto is a discount: fixed-date tiers (modalidades 1 and 2) or an amount for
// each day of advance (3 to 6).
type cobvDesconto struct {
	Modalidade       int                `json:"modalidade"`
	DescontoDataFixa []descontoDataFixa `json:"descontoDataFixa,omitempty"`
	ValorPerc        string             `json:"valorPerc,omitempty"`
}

type descontoDataFixa struct {
	Data      string `json:"data"`
	ValorPerc string `json:"valorPerc"`
}

// The modalidades of CobVValor the driver writes, as the document's tables number them.
const (
	multaValorFixo      = 1 // fine: a fixed amount
	multaPercentual     = 2 // fine: a percentage
	jurosValorDia       = 1 // interest: an amount per calendar day
	jurosPercentualDia  = 2 // interest: a percentage per calendar day
	descontoValorData   = 1 // discount: a fixed amount until the date(s)
	descontoPercData    = 2 // discount: a percentage until the date(s)
	descontoValorDia    = 3 // discount: an amount per calendar day of advance
	descontoPercDia     = 5 // discount: a percentage per calendar day of advance
	maxDescontoDataFixa = 3 // the document's maxItems
)

// cobAnswer is the PSP's record of a charge (CobGerada, CobCompleta and their cobv
// kin), as far as the driver reads it.
type cobAnswer struct {
	TxID          string `json:"txid"`
	Status        string `json:"status"`
	Location      string `json:"location"`
	PixCopiaECola string `json:"pixCopiaECola"`
	Loc           struct {
		Location string `json:"location"`
	} `json:"loc"`
	Valor struct {
		Original string `json:"original"`
	} `json:"valor"`
}

// chargeURL is where the charge txid lives: /cob/{txid}, or /cobv/{txid} when due.
func (d *Driver) chargeURL(txid string, due bool) string {
	if due {
		return d.base + "/cobv/" + url.PathEscape(txid)
	}
	return d.base + "/cob/" + url.PathEscape(txid)
}

// IssueCharge registers c at the PSP and returns its BR Code (pixCopiaECola) and
// location. It first asks for the charge (GET /cob/{txid}, or /cobv/{txid} when c.Due is
// set): issuing a charge again, as a retry after a lost answer does, returns the one the
// PSP has and changes nothing there (a second PUT would revise it, and the PSP counts a
// revised expiracao from the charge's creation). A charge the PSP does not have is made
// with PUT; a PUT the PSP refuses (two issuers of one txid at once: it may say the txid is
// in use) is read back once more. A charge found under the txid with another value, or
// removed, is an *rail.InvalidError on "txid"; a charge the PSP refuses is one on
// "charge".
func (d *Driver) IssueCharge(ctx context.Context, c rail.Charge) (rail.IssuedCharge, error) {
	req, err := d.chargeRequest(c)
	if err != nil {
		return rail.IssuedCharge{}, err
	}
	if have, found, err := d.existingCharge(ctx, c); found || err != nil {
		return have, err
	}
	var got cobAnswer
	err = d.Do(ctx, http.MethodPut, d.chargeURL(c.TxID, c.Due != nil), req, &got)
	if err == nil {
		return issued(c, got)
	}
	if !rejected(err) {
		return rail.IssuedCharge{}, err
	}
	have, found, rerr := d.existingCharge(ctx, c)
	switch {
	case found:
		return have, rerr
	case rerr != nil:
		return rail.IssuedCharge{}, fmt.Errorf("apipix: reading charge %s back after %v: %w", c.TxID, err, rerr)
	case isStatus(err, http.StatusConflict):
		return rail.IssuedCharge{}, err
	}
	e, _ := asError(err)
	return rail.IssuedCharge{}, rail.Invalid("charge", "the PSP refused the charge: "+e.TypeName()+": "+e.describe())
}

// existingCharge asks the PSP for the charge under c's txid: found, it is c's if it has
// c's value and was not removed (else an *rail.InvalidError on "txid"); the PSP's 404 is
// not found.
func (d *Driver) existingCharge(ctx context.Context, c rail.Charge) (rail.IssuedCharge, bool, error) {
	var have cobAnswer
	err := d.Do(ctx, http.MethodGet, d.chargeURL(c.TxID, c.Due != nil), nil, &have)
	switch {
	case notFound(err):
		return rail.IssuedCharge{}, false, nil
	case err != nil:
		return rail.IssuedCharge{}, false, err
	}
	if v, perr := parseValor(have.Valor.Original); perr != nil || v != c.Value {
		return rail.IssuedCharge{}, true, rail.Invalid("txid", fmt.Sprintf("the PSP has another charge under txid %s (of %s)", c.TxID, have.Valor.Original))
	}
	if have.Status == statusRemovedByUser || have.Status == statusRemovedByPSP {
		return rail.IssuedCharge{}, true, rail.Invalid("txid", "the charge "+c.TxID+" was removed ("+have.Status+") and its txid cannot be used again")
	}
	got, err := issued(c, have)
	return got, true, err
}

// issued is the IssuedCharge of the PSP's record a of c. A PSP that gives no
// pixCopiaECola (older versions of the standard had none) gets a dynamic BR Code made from
// the location and c's merchant.
func issued(c rail.Charge, a cobAnswer) (rail.IssuedCharge, error) {
	loc := a.Location
	if loc == "" {
		loc = a.Loc.Location
	}
	txid := a.TxID
	if txid == "" {
		txid = c.TxID
	}
	if txid != c.TxID {
		return rail.IssuedCharge{}, fmt.Errorf("apipix: the PSP answered charge %s with txid %s", c.TxID, txid)
	}
	code := a.PixCopiaECola
	if code == "" {
		if loc == "" {
			return rail.IssuedCharge{}, fmt.Errorf("apipix: the PSP's charge %s has neither pixCopiaECola nor location", c.TxID)
		}
		var err error
		code, err = brcode.EncodeDynamic(brcode.Dynamic{URL: loc, Name: c.MerchantName, City: c.MerchantCity})
		if err != nil {
			return rail.IssuedCharge{}, fmt.Errorf("apipix: charge %s: a BR Code from the PSP's location: %w", c.TxID, err)
		}
	}
	return rail.IssuedCharge{TxID: txid, BRCode: code, Location: loc}, nil
}

// chargeRequest is the body that registers c, checked.
func (d *Driver) chargeRequest(c rail.Charge) (cobRequest, error) {
	if !txidPattern.MatchString(c.TxID) {
		return cobRequest{}, rail.Invalid("txid", "a charge's txid must be 26 to 35 letters and digits")
	}
	original, err := formatValor(c.Value)
	if err != nil || c.Value <= 0 {
		return cobRequest{}, rail.Invalid("value", "value must be a positive number of centavos the API Pix can write")
	}
	key := d.pixKey
	if c.Key != "" {
		if key, err = checkKey(c.Key, ""); err != nil {
			return cobRequest{}, rail.Invalid("key", err.Error())
		}
	}
	req := cobRequest{Chave: key, SolicitacaoPagador: truncate(c.Message, maxSolicitacaoPagador)}
	if c.PayerTaxID != "" || c.Due != nil {
		if req.Devedor, err = payer(c); err != nil {
			return cobRequest{}, err
		}
	}
	if c.Due == nil {
		secs := int64(c.Expires.Sub(d.now()) / time.Second)
		req.Calendario = cobCalendario{Expiracao: min(max(secs, 1), math.MaxInt32)}
		req.Valor = cobValor{Original: original}
		return req, nil
	}
	cal, valor, err := dueTerms(*c.Due, original)
	if err != nil {
		return cobRequest{}, err
	}
	req.Calendario, req.Valor = cal, valor
	return req, nil
}

// payer is the devedor of c: its CPF or CNPJ with its name, both required (a due-date
// charge must name its payer; the standard takes no tax id without a name).
func payer(c rail.Charge) (*devedor, error) {
	if c.PayerTaxID == "" {
		return nil, rail.Invalid("payer", "a charge with a due date needs the payer's CPF or CNPJ and name")
	}
	id, typ, err := brcode.ParseTaxID(c.PayerTaxID)
	if err != nil {
		return nil, rail.Invalid("payer", "payerTaxID: "+err.Error())
	}
	name := strings.TrimSpace(c.PayerName)
	if name == "" {
		return nil, rail.Invalid("payer", "the API Pix requires the payer's name with the CPF or CNPJ")
	}
	p := &devedor{Nome: truncate(name, maxNome)}
	if typ == brcode.CPF {
		p.CPF = id
	} else {
		p.CNPJ = id
	}
	return p, nil
}

// dueTerms maps t to a cobv's calendario and valor. Percentages are basis points and
// the standard writes them with two decimals, so 250 basis points (2.50%) is "2.50": the
// same digits as 250 centavos.
func dueTerms(t rail.DueTerms, original string) (cobvCalendario, cobvValor, error) {
	due, err := time.Parse(time.DateOnly, t.Date)
	if err != nil {
		return cobvCalendario{}, cobvValor{}, rail.Invalid("due.date", "the due date must be YYYY-MM-DD")
	}
	if t.DaysAfter < 0 {
		return cobvCalendario{}, cobvValor{}, rail.Invalid("due.daysAfter", "must not be negative")
	}
	cal := cobvCalendario{DataDeVencimento: t.Date, ValidadeAposVencimento: t.DaysAfter}
	v := cobvValor{Original: original}
	if v.Multa, err = pick("due.fine", multaPercentual, t.FineBasisPoints, multaValorFixo, t.FineCentavos); err != nil {
		return cobvCalendario{}, cobvValor{}, err
	}
	if v.Juros, err = pick("due.interest", jurosPercentualDia, t.InterestBasisPointsPerDay, jurosValorDia, t.InterestCentavosPerDay); err != nil {
		return cobvCalendario{}, cobvValor{}, err
	}
	if v.Desconto, err = discount(t, due); err != nil {
		return cobvCalendario{}, cobvValor{}, err
	}
	return cal, v, nil
}

// pick is the modalidade of a term given as basis points (percentual) or centavos (fixed),
// at most one of them; nil when neither is set.
func pick(field string, percModalidade int, bp int64, fixedModalidade int, centavos int64) (*modalidade, error) {
	switch {
	case bp < 0 || centavos < 0:
		return nil, rail.Invalid(field, "must not be negative")
	case bp > 0 && centavos > 0:
		return nil, rail.Invalid(field, "give a percentage or an amount, not both")
	case bp > 0:
		s, err := formatValor(bp)
		if err != nil {
			return nil, rail.Invalid(field, err.Error())
		}
		return &modalidade{Modalidade: percModalidade, ValorPerc: s}, nil
	case centavos > 0:
		s, err := formatValor(centavos)
		if err != nil {
			return nil, rail.Invalid(field, err.Error())
		}
		return &modalidade{Modalidade: fixedModalidade, ValorPerc: s}, nil
	}
	return nil, nil
}

// discount is the desconto of t: tiers until their dates (all of basis points or all of
// centavos, at most three, none after the due date), or an amount for each calendar day
// of advance; nil when t has none.
func discount(t rail.DueTerms, due time.Time) (*cobvDesconto, error) {
	perDay, err := pick("due.discount", descontoPercDia, t.DiscountBasisPointsPerDay, descontoValorDia, t.DiscountCentavosPerDay)
	if err != nil {
		return nil, err
	}
	if len(t.DiscountTiers) == 0 {
		if perDay == nil {
			return nil, nil
		}
		return &cobvDesconto{Modalidade: perDay.Modalidade, ValorPerc: perDay.ValorPerc}, nil
	}
	if perDay != nil {
		return nil, rail.Invalid("due.discount", "give discount tiers or a discount per day, not both")
	}
	if len(t.DiscountTiers) > maxDescontoDataFixa {
		return nil, rail.Invalid("due.discount", fmt.Sprintf("at most %d discount tiers", maxDescontoDataFixa))
	}
	d := &cobvDesconto{}
	for i, tier := range t.DiscountTiers {
		day, err := time.Parse(time.DateOnly, tier.Date)
		if err != nil || day.After(due) {
			return nil, rail.Invalid("due.discount", fmt.Sprintf("tier %d: its date must be YYYY-MM-DD, on or before the due date", i+1))
		}
		m, err := pick("due.discount", descontoPercData, tier.BasisPoints, descontoValorData, tier.Centavos)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, rail.Invalid("due.discount", fmt.Sprintf("tier %d has no discount", i+1))
		}
		if i > 0 && m.Modalidade != d.Modalidade {
			return nil, rail.Invalid("due.discount", "the tiers must all be percentages or all amounts")
		}
		d.Modalidade = m.Modalidade
		d.DescontoDataFixa = append(d.DescontoDataFixa, descontoDataFixa{Data: tier.Date, ValorPerc: m.ValorPerc})
	}
	return d, nil
}

// removal is the body of PATCH /cob/{txid} and /cobv/{txid} that removes the charge.
type removal struct {
	Status string `json:"status"`
}

// RemoveCharge removes the charge txid: PATCH /cob/{txid} with status
// REMOVIDA_PELO_USUARIO_RECEBEDOR, and /cobv/{txid} when the PSP has no cob of that txid.
// A charge the PSP has under neither, or has already removed, is rail.ErrUnknownCharge; a
// charge already paid cannot be removed (an error that says so).
func (d *Driver) RemoveCharge(ctx context.Context, txid string) error {
	if !txidPattern.MatchString(txid) {
		return rail.Invalid("txid", "a charge's txid must be 26 to 35 letters and digits")
	}
	err := d.remove(ctx, txid, false)
	if notFound(err) {
		err = d.remove(ctx, txid, true)
		if notFound(err) {
			return fmt.Errorf("%w: %s", rail.ErrUnknownCharge, txid)
		}
	}
	return err
}

// remove removes the cob (or cobv, if due) txid. A removal the PSP refuses is read back:
// a charge already removed is rail.ErrUnknownCharge.
func (d *Driver) remove(ctx context.Context, txid string, due bool) error {
	err := d.Do(ctx, http.MethodPatch, d.chargeURL(txid, due), removal{Status: statusRemovedByUser}, nil)
	if err == nil || notFound(err) || !rejected(err) {
		return err
	}
	var have cobAnswer
	rerr := d.Do(ctx, http.MethodGet, d.chargeURL(txid, due), nil, &have)
	switch {
	case notFound(rerr):
		return rerr
	case rerr != nil:
		return fmt.Errorf("apipix: reading charge %s back after %v: %w", txid, err, rerr)
	case have.Status == statusRemovedByUser || have.Status == statusRemovedByPSP:
		return fmt.Errorf("%w: %s was removed before (%s)", rail.ErrUnknownCharge, txid, have.Status)
	case have.Status == statusPaid:
		return fmt.Errorf("apipix: charge %s is paid and cannot be removed: %w", txid, err)
	}
	return err
}

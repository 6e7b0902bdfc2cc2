package apipix

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// NewEfiSender returns the Sender of Efí's extension of the API Pix, which sends through
// d's authenticated client: PUT {Origin}/v3/gn/pix/{idEnvio} to send (idEnvio is
// OrderRef of the order, Efí's idempotency key) and GET
// {Origin}/v2/gn/pix/enviados/id-envio/{idEnvio} to ask. Efí requires the payer's key
// (Config.PixKey) to have a webhook registered (Driver.RegisterWebhook) before it sends.
func NewEfiSender(d *Driver) Sender { return &efiSender{d: d} }

// efiSender is NewEfiSender's Sender.
type efiSender struct{ d *Driver }

// efiSendRequest is the body of Efí's PUT /v3/gn/pix/{idEnvio}.
type efiSendRequest struct {
	Valor      string        `json:"valor"`
	Pagador    efiPagador    `json:"pagador"`
	Favorecido efiFavorecido `json:"favorecido"`
}

type efiPagador struct {
	Chave       string `json:"chave"`
	InfoPagador string `json:"infoPagador,omitempty"`
}

// efiFavorecido is where the Pix goes: a key, or bank details.
type efiFavorecido struct {
	Chave      string         `json:"chave,omitempty"`
	ContaBanco *efiContaBanco `json:"contaBanco,omitempty"`
}

type efiContaBanco struct {
	Nome        string `json:"nome"`
	CPF         string `json:"cpf,omitempty"`
	CNPJ        string `json:"cnpj,omitempty"`
	CodigoBanco string `json:"codigoBanco"`
	Agencia     string `json:"agencia"`
	Conta       string `json:"conta"`
	TipoConta   string `json:"tipoConta"`
}

// efiSend is Efí's record of a send, as PUT answers it (e2eId) and GET does
// (endToEndId).
type efiSend struct {
	IDEnvio    string `json:"idEnvio"`
	E2EID      string `json:"e2eId"`
	EndToEndID string `json:"endToEndId"`
	outgoingRecord
}

func (s *efiSender) sendURL(o rail.PixOrder) string {
	return s.d.Origin() + "/v3/gn/pix/" + url.PathEscape(OrderRef(o.ID))
}

func (s *efiSender) statusURL(o rail.PixOrder) string {
	return s.d.Origin() + "/v2/gn/pix/enviados/id-envio/" + url.PathEscape(OrderRef(o.ID))
}

// Send sends o to its key or bank account. An answer that refuses the send (Efí's 400
// and 422) or says the idEnvio is in use (409) is read back: a send already under the
// idEnvio is the order sent before (if its value agrees); none means Efí sent nothing, a
// refusal whose reason comes from Efí's error name.
func (s *efiSender) Send(ctx context.Context, o rail.PixOrder, payerKey string) (rail.Settlement, error) {
	req, err := efiRequest(o, payerKey)
	if err != nil {
		return rail.Settlement{}, err
	}
	var sent efiSend
	err = s.d.Do(ctx, http.MethodPut, s.sendURL(o), req, &sent)
	if err == nil {
		if sent.Status != "EM_PROCESSAMENTO" {
			// A send made before that has settled: PUT's answer has no liquidacao, so its
			// outcome is read where Status reads it, for one answer about one send.
			if st, err := s.Status(ctx, o); err == nil {
				return st, nil
			}
		}
		return efiSettlement(sent, OrderRef(o.ID))
	}
	if !rejected(err) {
		return rail.Settlement{}, err
	}
	var got efiSend
	rerr := s.d.Do(ctx, http.MethodGet, s.statusURL(o), nil, &got)
	switch {
	case rerr == nil:
		if v, perr := parseValor(got.Valor); got.Valor != "" && (perr != nil || v != o.Value) {
			return rail.Settlement{}, fmt.Errorf("apipix: idEnvio %s is in use by a send of another value (%s): %w", OrderRef(o.ID), got.Valor, err)
		}
		return efiSettlement(got, OrderRef(o.ID))
	case notFound(rerr) && !isStatus(err, http.StatusConflict):
		e, _ := asError(err)
		return rail.Settlement{}, rail.Refused(efiReason(e), e.describe())
	case notFound(rerr):
		return rail.Settlement{}, fmt.Errorf("apipix: Efí answered a conflict for idEnvio %s and has no record of it: %w", OrderRef(o.ID), err)
	default:
		return rail.Settlement{}, fmt.Errorf("apipix: reading idEnvio %s back after %v: %w", OrderRef(o.ID), err, rerr)
	}
}

// Status reads the send of o; Efí's 404 is rail.ErrUnknownOrder.
func (s *efiSender) Status(ctx context.Context, o rail.PixOrder) (rail.Settlement, error) {
	var got efiSend
	if err := s.d.Do(ctx, http.MethodGet, s.statusURL(o), nil, &got); err != nil {
		if notFound(err) {
			return rail.Settlement{}, fmt.Errorf("%w: %w", rail.ErrUnknownOrder, err)
		}
		return rail.Settlement{}, err
	}
	return efiSettlement(got, OrderRef(o.ID))
}

// efiSettlement maps Efí's send to a settlement: EM_PROCESSAMENTO pending, REALIZADO
// confirmed, NAO_REALIZADO failed. The bank reference is the idEnvio.
func efiSettlement(e efiSend, ref string) (rail.Settlement, error) {
	e2e := e.EndToEndID
	if e2e == "" {
		e2e = e.E2EID
	}
	return settlement(e.Status, "REALIZADO", ref, e2e, e.Horario.Solicitacao, e.Horario.Liquidacao, e.Motivo)
}

// efiReason is the refusal reason of Efí's error: its nome names a key (chave_invalida,
// a key nobody owns), a key whose owner is not the document given (BE01), a balance
// (AM04) or a payment denied by Efí's analysis (DS04); anything else is ReasonRefused.
func efiReason(e *Error) string {
	name := strings.ToLower(e.Name)
	switch {
	case name == "chave_nao_pertence_ao_documento":
		return rail.ReasonBE01
	case strings.Contains(name, "chave"):
		return rail.ReasonInvalidPixKey
	case strings.Contains(name, "saldo"):
		return rail.ReasonAM04
	case name == "pagamento_negado":
		return rail.ReasonDS04
	}
	return rail.ReasonRefused
}

// efiRequest is the body that sends o: to its key, or to its bank account.
func efiRequest(o rail.PixOrder, payerKey string) (efiSendRequest, error) {
	valor, err := formatValor(o.Value)
	if err != nil {
		return efiSendRequest{}, rail.Invalid("value", err.Error())
	}
	req := efiSendRequest{
		Valor:   valor,
		Pagador: efiPagador{Chave: payerKey, InfoPagador: truncate(o.Comment, 140)},
	}
	if o.Key != "" {
		key, err := checkKey(o.Key, o.KeyType)
		if err != nil {
			return efiSendRequest{}, rail.Invalid("key", err.Error())
		}
		req.Favorecido.Chave = key
		return req, nil
	}
	if o.Account == nil {
		return efiSendRequest{}, rail.Invalid("key", "the order names no Pix key and no bank account")
	}
	conta, err := efiAccount(*o.Account)
	if err != nil {
		return efiSendRequest{}, err
	}
	req.Favorecido.ContaBanco = conta
	return req, nil
}

// efiAccount is a bank account as Efí takes it: the holder's bare CPF or CNPJ, the
// institution's ISPB, branch and account digits only, and Efí's account type names.
func efiAccount(a rail.BankAccount) (*efiContaBanco, error) {
	taxID, typ, err := brcode.ParseTaxID(a.HolderTaxID)
	if err != nil {
		return nil, rail.Invalid("account", "holderTaxID: "+err.Error())
	}
	ispb := digits(a.ISPB)
	if len(ispb) != 8 || ispb != a.ISPB {
		return nil, rail.Invalid("account", "ispb must be the institution's 8-digit ISPB")
	}
	branch, number := digits(a.Branch), alnum(a.Account)
	if branch == "" || number == "" {
		return nil, rail.Invalid("account", "branch and account are required")
	}
	if strings.TrimSpace(a.HolderName) == "" {
		return nil, rail.Invalid("account", "holderName is required")
	}
	tipo, ok := efiAccountTypes[strings.ToUpper(a.AccountType)]
	if !ok {
		return nil, rail.Invalid("account", "accountType "+a.AccountType+" is not one Efí takes (CACC, SVGS, SLRY, TRAN)")
	}
	c := &efiContaBanco{
		Nome:        truncate(a.HolderName, 200),
		CodigoBanco: ispb,
		Agencia:     branch,
		Conta:       number,
		TipoConta:   tipo,
	}
	if typ == brcode.CPF {
		c.CPF = taxID
	} else {
		c.CNPJ = taxID
	}
	return c, nil
}

// efiAccountTypes maps ISO 20022 account types to Efí's tipoConta ("" is a checking
// account).
var efiAccountTypes = map[string]string{
	"":     "cacc",
	"CACC": "cacc",
	"SVGS": "svgs",
	"SLRY": "slry",
	"TRAN": "tran",
}

// digits keeps the digits of s.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// alnum keeps the letters and digits of s (an account number's check digit may be X).
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z':
			return r
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return -1
	}, s)
}

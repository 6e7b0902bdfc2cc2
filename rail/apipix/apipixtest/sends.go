package apipixtest

import (
	"net/http"
	"regexp"
	"time"

	"github.com/pixfoundry/payments/brcode"
)

// Keys that make a send (Efí's PUT /v3/gn/pix/{idEnvio}) go wrong. Any other valid key is
// accepted and ends REALIZADO once Options.SettleDelay has passed.
const (
	// KeyRefused is a key nobody owns: the send is refused at once, nothing is sent
	// (400, Efí's chave_invalida).
	KeyRefused = "recusada@psp.example.com"
	// KeyFails is accepted (EM_PROCESSAMENTO) and ends NAO_REALIZADO when it settles, as a
	// Pix the receiving bank turns back does.
	KeyFails = "falha@psp.example.com"
)

// send is a Pix the company sent through Efí's extension.
type send struct {
	id, e2e    string
	value      int64
	payerKey   string
	info       string
	favorecido map[string]any
	body       string // canonical, to tell a reused idEnvio from a repeated request
	at         time.Time
	fails      bool
}

// sendAccepted is PUT /v3/gn/pix/{idEnvio}'s answer.
type sendAccepted struct {
	IDEnvio string  `json:"idEnvio"`
	E2EID   string  `json:"e2eId"`
	Valor   string  `json:"valor"`
	Horario horario `json:"horario"`
	Status  string  `json:"status"`
}

// sendView is a send as GET /v2/gn/pix/enviados/... answers it. favorecido is echoed as
// the send gave it.
type sendView struct {
	EndToEndID  string         `json:"endToEndId"`
	IDEnvio     string         `json:"idEnvio"`
	Valor       string         `json:"valor"`
	Chave       string         `json:"chave"`
	Status      string         `json:"status"`
	InfoPagador string         `json:"infoPagador,omitempty"`
	Horario     horario        `json:"horario"`
	Favorecido  map[string]any `json:"favorecido"`
}

func (p *PSP) sendStatus(s *send, now time.Time) (status string, h horario) {
	h.Solicitacao = timestamp(s.at)
	if !p.settled(s.at, now) {
		return statusEmProcessamento, h
	}
	h.Liquidacao = timestamp(s.at.Add(p.o.SettleDelay))
	if s.fails {
		return statusNaoRealizado, h
	}
	return statusRealizado, h
}

// Sent reports the status (EM_PROCESSAMENTO, REALIZADO or NAO_REALIZADO) and endToEndId
// of the send idEnvio.
func (p *PSP) Sent(idEnvio string) (status string, e2eID string, ok bool) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sends[idEnvio]
	if s == nil {
		return "", "", false
	}
	status, _ = p.sendStatus(s, now)
	return status, s.e2e, true
}

// SendCount is how many distinct idEnvio the PSP has accepted.
func (p *PSP) SendCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sends)
}

// sendSchema is the body of Efí's send: the value, the payer (the company's key) and the
// receiver, by Pix key (optionally with the owner's CPF or CNPJ, which Efí checks) or by
// bank account.
var sendSchema = object(
	req("valor", positiveMoney),
	req("pagador", object(req("chave", text(77)), opt("infoPagador", text(140)))),
	req("favorecido", favorecido),
)

// favorecido is who a send pays: a Pix key, which may come with its owner's cpf or cnpj,
// or a bank account, which carries its own.
func favorecido(c *checker, path string, v any) {
	if m, ok := v.(map[string]any); ok {
		exactlyOne(c, path, m, "chave", "contaBanco")
		_, hasCPF := m["cpf"]
		_, hasCNPJ := m["cnpj"]
		if _, byAccount := m["contaBanco"]; byAccount && (hasCPF || hasCNPJ) {
			c.add(path, nil, "oneOf", "cpf and cnpj go inside contaBanco")
		} else if hasCPF && hasCNPJ {
			c.add(path, nil, "oneOf", "has both cpf and cnpj: only one is allowed")
		}
	}
	// object says so when v is not an object.
	object(opt("chave", pixKey), opt("cpf", cpf), opt("cnpj", cnpj), opt("contaBanco", contaBanco))(c, path, v)
}

// contaBanco is a bank account: its holder's name and cpf or cnpj, the bank's ISPB, the
// branch, the account and its type.
func contaBanco(c *checker, path string, v any) {
	if m, ok := v.(map[string]any); ok {
		exactlyOne(c, path, m, "cpf", "cnpj")
	}
	object(
		req("nome", text(200)), opt("cpf", cpf), opt("cnpj", cnpj),
		req("codigoBanco", matching(ispbRE)), req("agencia", matching(agenciaRE)), req("conta", matching(contaRE)),
		req("tipoConta", enum("cacc", "svgs", "slry", "tran")),
	)(c, path, v)
}

// handleSendPut sends a Pix (Efí's PUT /v3/gn/pix/{idEnvio}). The idEnvio is the
// idempotency key: the same request again answers the send as it stands; another body
// under a used idEnvio is Efí's 409 id_envio_duplicado. As at Efí, the payer's key must
// be the company's and have a webhook registered.
func (p *PSP) handleSendPut(c *call) {
	var ck checker
	id := c.r.PathValue("idEnvio")
	matching(idRE)(&ck, "idEnvio", id)
	m, vs := decodeBody(c.r, c.body, ".body")
	ck.v = append(ck.v, vs...)
	if m != nil {
		sendSchema(&ck, ".body", m)
	}
	if !ck.ok() {
		c.reject(errorType{}, ck.v)
		return
	}
	pagador, fav := obj(m, "pagador"), obj(m, "favorecido")
	if k := str(pagador, "chave"); k != p.o.PixKey {
		c.p.addViolation(c.r, []violation{{Razao: "is not the key of the authenticated account (" + p.o.PixKey + ")", Propriedade: ".body.pagador.chave", Valor: k}})
		c.efiFail(http.StatusBadRequest, efiError{Nome: "chave_invalida", Mensagem: "A chave informada não faz referência à conta Efí autenticada"})
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sends[id]; s != nil {
		if s.body != canonical(m) {
			c.efiFail(http.StatusConflict, efiError{Nome: "id_envio_duplicado", Mensagem: "O id de envio informado já foi utilizado em outro pagamento"})
			return
		}
		c.ok(http.StatusCreated, p.accepted(s, now))
		return
	}
	if p.webhook == nil {
		// Efí documents that the payer's key needs a webhook, not the error it answers;
		// chave_sem_webhook is apipixtest's name for it.
		c.efiFail(http.StatusBadRequest, efiError{Nome: "chave_sem_webhook", Mensagem: "A chave do pagador não tem um webhook associado"})
		return
	}
	key := ""
	if k, ok := fav["chave"].(string); ok {
		_, key, _ = brcode.DetectKey(k)
	}
	if key == KeyRefused {
		c.efiFail(http.StatusBadRequest, efiError{Nome: "chave_invalida", Mensagem: "A chave do favorecido não foi encontrada"})
		return
	}
	value, _ := parseMoney(str(m, "valor"))
	s := &send{id: id, e2e: p.newID('E', now), value: value, payerKey: p.o.PixKey, info: str(pagador, "infoPagador"),
		favorecido: deepCopy(fav), body: canonical(m), at: now, fails: key == KeyFails}
	p.sends[id] = s
	c.ok(http.StatusCreated, p.accepted(s, now))
}

func (p *PSP) accepted(s *send, now time.Time) sendAccepted {
	status, h := p.sendStatus(s, now)
	h.Liquidacao = "" // the PUT's answer carries when it was asked only
	return sendAccepted{IDEnvio: s.id, E2EID: s.e2e, Valor: formatMoney(s.value), Horario: h, Status: status}
}

func (p *PSP) sendView(s *send, now time.Time) sendView {
	status, h := p.sendStatus(s, now)
	return sendView{EndToEndID: s.e2e, IDEnvio: s.id, Valor: formatMoney(s.value), Chave: s.payerKey,
		Status: status, InfoPagador: s.info, Horario: h, Favorecido: s.favorecido}
}

// handleSendGetByID answers a send by its idEnvio (Efí's GET
// /v2/gn/pix/enviados/id-envio/{idEnvio}). An unknown one is Efí's 404, which is the
// standard's RFC 7807 shape with the type PixEnviadoNaoEncontrado.
func (p *PSP) handleSendGetByID(c *call) { p.answerSend(c, "idEnvio", idRE, p.sendByID) }

// handleSendGetByE2E answers a send by its endToEndId (Efí's GET
// /v2/gn/pix/enviados/{e2eId}).
func (p *PSP) handleSendGetByE2E(c *call) { p.answerSend(c, "e2eId", e2eRE, p.sendByE2E) }

// answerSend answers a GET of one send: the path value name, which must match re, is
// what find looks the send up by. A send find does not know is Efí's 404,
// PixEnviadoNaoEncontrado.
func (p *PSP) answerSend(c *call, name string, re *regexp.Regexp, find func(string) *send) {
	var ck checker
	v := c.r.PathValue(name)
	matching(re)(&ck, name, v)
	if !ck.ok() {
		c.reject(errorType{}, ck.v)
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := find(v); s != nil {
		c.ok(http.StatusOK, p.sendView(s, now))
		return
	}
	c.refuse(errPixEnviadoNaoEncontrado)
}

// sendByID is the send under idEnvio id, or nil. The caller holds p.mu.
func (p *PSP) sendByID(id string) *send { return p.sends[id] }

// sendByE2E is the send whose endToEndId is e2e, or nil. The caller holds p.mu.
func (p *PSP) sendByE2E(e2e string) *send {
	for _, s := range p.sends {
		if s.e2e == e2e {
			return s
		}
	}
	return nil
}

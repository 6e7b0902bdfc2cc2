package apipixtest

import (
	"net/http"
	"time"
)

// RefundFails is a refund value, in centavos (R$ 6,66), that the PSP accepts and that ends
// NAO_REALIZADO when it settles, as a refund the payer's bank turns back does.
const RefundFails = 666

// refundWindow is how long after a Pix it can be refunded: the document's 90 days since
// it settled.
const refundWindow = 90 * 24 * time.Hour

// Refund and send statuses.
const (
	statusEmProcessamento = "EM_PROCESSAMENTO"
	statusDevolvido       = "DEVOLVIDO"
	statusRealizado       = "REALIZADO"
	statusNaoRealizado    = "NAO_REALIZADO"
)

// refund is a devolução of a received Pix.
type refund struct {
	id, rtrID           string
	value               int64
	natureza, descricao string
	body                string // canonical, to tell a reused id from a repeated request
	at                  time.Time
	fails               bool
}

// refundView is a refund as the API answers it (Devolucao).
type refundView struct {
	ID        string  `json:"id"`
	RtrID     string  `json:"rtrId"`
	Valor     string  `json:"valor"`
	Natureza  string  `json:"natureza,omitempty"`
	Descricao string  `json:"descricao,omitempty"`
	Horario   horario `json:"horario"`
	Status    string  `json:"status"`
	Motivo    string  `json:"motivo,omitempty"`
}

// horario is when a refund or a send was asked and, once final, settled.
type horario struct {
	Solicitacao string `json:"solicitacao"`
	Liquidacao  string `json:"liquidacao,omitempty"`
}

// settled reports whether something made at `at` has reached its final status by now.
func (p *PSP) settled(at, now time.Time) bool { return !now.Before(at.Add(p.o.SettleDelay)) }

func (p *PSP) refundView(rf *refund, now time.Time) refundView {
	v := refundView{ID: rf.id, RtrID: rf.rtrID, Valor: formatMoney(rf.value), Natureza: rf.natureza,
		Descricao: rf.descricao, Horario: horario{Solicitacao: timestamp(rf.at)}, Status: statusEmProcessamento}
	if p.settled(rf.at, now) {
		v.Horario.Liquidacao = timestamp(rf.at.Add(p.o.SettleDelay))
		v.Status = statusDevolvido
		if rf.fails {
			v.Status, v.Motivo = statusNaoRealizado, "Devolução recusada pela instituição do pagador"
		}
	}
	return v
}

// Refund reports the status of refund id of the Pix e2eID: EM_PROCESSAMENTO, DEVOLVIDO
// or NAO_REALIZADO.
func (p *PSP) Refund(e2eID, id string) (status string, ok bool) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if rf := p.findRefund(e2eID, id); rf != nil {
		return p.refundView(rf, now).Status, true
	}
	return "", false
}

func (p *PSP) findRefund(e2eID, id string) *refund {
	if rx := p.received[e2eID]; rx != nil {
		for _, rf := range rx.refunds {
			if rf.id == id {
				return rf
			}
		}
	}
	return nil
}

// refundPath checks the e2eid and id of a refund's path.
func refundPath(c *call) (e2e, id string, vs []violation) {
	var ck checker
	e2e, id = c.r.PathValue("e2eid"), c.r.PathValue("id")
	matching(e2eRE)(&ck, "e2eid", e2e)
	matching(idRE)(&ck, "id", id)
	return e2e, id, ck.v
}

// handleRefundPut asks a refund of a received Pix (PUT /pix/{e2eid}/devolucao/{id}). The
// id is the client's idempotency key: the same request again answers the refund as it
// stands; another body under a used id is refused, as are a total of refunds above the
// Pix's value (refunds that ended NAO_REALIZADO do not count) and a Pix older than 90
// days.
func (p *PSP) handleRefundPut(c *call) {
	e2e, id, vs := refundPath(c)
	m, bodyVs := decodeBody(c.r, c.body, "devolucao")
	ck := checker{v: append(vs, bodyVs...)}
	if m != nil {
		object(req("valor", positiveMoney), opt("natureza", enum("ORIGINAL", "RETIRADA")), opt("descricao", text(140)))(&ck, "devolucao", m)
	}
	if !ck.ok() {
		c.reject(errPixDevolucaoInvalida, ck.v)
		return
	}
	value, _ := parseMoney(str(m, "valor"))
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	rx := p.findReceived(c, e2e)
	if rx == nil {
		return // answered PixNaoEncontrado
	}
	if rf := p.findRefund(e2e, id); rf != nil {
		if rf.body != canonical(m) {
			c.refuse(errPixDevolucaoInvalida, violation{Razao: "the id is already used by another refund of this Pix", Propriedade: "id", Valor: id})
			return
		}
		c.ok(http.StatusCreated, p.refundView(rf, now))
		return
	}
	if now.After(rx.px.At.Add(refundWindow)) {
		c.refuse(errPixDevolucaoInvalida, violation{Razao: "the Pix is more than 90 days old", Propriedade: "e2eid", Valor: e2e})
		return
	}
	var total int64
	for _, rf := range rx.refunds {
		if !(rf.fails && p.settled(rf.at, now)) {
			total += rf.value
		}
	}
	if total+value > rx.px.Value {
		c.refuse(errPixDevolucaoInvalida, violation{Razao: "the refunds would add up to more than the Pix (" + formatMoney(rx.px.Value) + ")",
			Propriedade: "devolucao.valor", Valor: str(m, "valor")})
		return
	}
	rf := &refund{id: id, rtrID: p.newID('D', now), value: value, natureza: str(m, "natureza"),
		descricao: str(m, "descricao"), body: canonical(m), at: now, fails: value == RefundFails}
	rx.refunds = append(rx.refunds, rf)
	c.ok(http.StatusCreated, p.refundView(rf, now))
}

// handleRefundGet answers a refund (GET /pix/{e2eid}/devolucao/{id}).
func (p *PSP) handleRefundGet(c *call) {
	e2e, id, vs := refundPath(c)
	if len(vs) > 0 {
		c.reject(errPixDevolucaoInvalida, vs)
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	rf := p.findRefund(e2e, id)
	if rf == nil {
		c.refuse(errPixDevolucaoNaoEncontrada)
		return
	}
	c.ok(http.StatusOK, p.refundView(rf, now))
}

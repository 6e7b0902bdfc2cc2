package apipixtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pixfoundry/payments/brcode"
)

// chargeKind is the standard's two kinds of charge.
type chargeKind string

const (
	kindCob  chargeKind = "cob"  // immediate, with an expiry in seconds
	kindCobV chargeKind = "cobv" // with a due date
)

// Charge statuses (CobrancaStatus).
const (
	statusAtiva     = "ATIVA"
	statusConcluida = "CONCLUIDA"
	statusRemovida  = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
)

// defaultExpiracao is a cob's calendario.expiracao when it leaves it out. The document
// writes the default as the string "86400" on an integer field; it is the integer.
const defaultExpiracao = 86400

// The errors of a kind of charge.
func (k chargeKind) invalid() errorType {
	if k == kindCobV {
		return errCobVOperacaoInvalida
	}
	return errCobOperacaoInvalida
}

func (k chargeKind) notFound() errorType {
	if k == kindCobV {
		return errCobVNaoEncontrada
	}
	return errCobNaoEncontrado
}

func (k chargeKind) badQuery() errorType {
	if k == kindCobV {
		return errCobVConsultaInvalida
	}
	return errCobConsultaInvalida
}

// ChargeState is a charge as the PSP holds it, for tests to look at.
type ChargeState struct {
	// TxID is the charge's id, the one in its path.
	TxID string
	// Status is the standard's: ATIVA, CONCLUIDA or REMOVIDA_PELO_USUARIO_RECEBEDOR.
	Status string
	// Kind is "cob" or "cobv".
	Kind string
	// Value is valor.original in centavos.
	Value int64
	// Revisao is the charge's revision, 0 when created.
	Revisao int
	// PixCopiaECola is the BR Code the PSP made for it; Location is the payload location
	// it carries.
	PixCopiaECola, Location string
	// Body is the body of the last PUT of the charge, as it was sent.
	Body []byte
}

// charge is a registered cob or cobv.
type charge struct {
	kind      chargeKind
	txid      string
	revisions []map[string]any // the registered body of each revision; the last is current
	raw       []byte           // the last PUT's body
	status    string
	created   time.Time
	locID     int64
	location  string
	brcode    string
	pix       []string // endToEndIds of the Pix that paid it
}

func (ch *charge) body() map[string]any { return ch.revisions[len(ch.revisions)-1] }

func (ch *charge) value() int64 {
	v, _ := parseMoney(str(obj(ch.body(), "valor"), "original"))
	return v
}

// Charge returns the charge registered under txid.
func (p *PSP) Charge(txid string) (ChargeState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.charges[txid]
	if !ok {
		return ChargeState{}, false
	}
	return ChargeState{
		TxID: ch.txid, Status: ch.status, Kind: string(ch.kind), Value: ch.value(),
		Revisao: len(ch.revisions) - 1, PixCopiaECola: ch.brcode, Location: ch.location,
		Body: append([]byte(nil), ch.raw...),
	}, true
}

// recebedor is the receiver a cobv names (CobVGerada requires it): the PSP's customer.
var recebedor = map[string]any{
	"nome": "Empresa Fake SA", "cnpj": "11222333000181",
	"logradouro": "Rua do Teste 1", "cidade": "Sao Paulo", "uf": "SP", "cep": "01001000",
}

// view is revision rev of the charge as the API answers it: the registered body and what
// the PSP adds (calendario.criacao and defaults, txid, revisao, loc, location, status,
// pixCopiaECola, the Pix that paid it). The registered fields are echoed as they were
// sent, which is what PSPs do.
func (p *PSP) view(ch *charge, rev int, now time.Time) map[string]any {
	out := deepCopy(ch.revisions[rev])
	cal := obj(out, "calendario")
	if cal == nil {
		cal = map[string]any{}
	}
	cal["criacao"] = timestamp(ch.created)
	if _, ok := cal["expiracao"]; !ok && ch.kind == kindCob {
		cal["expiracao"] = json.Number(fmt.Sprint(defaultExpiracao))
	}
	if _, ok := cal["validadeAposVencimento"]; !ok && ch.kind == kindCobV {
		cal["validadeAposVencimento"] = json.Number(fmt.Sprint(defaultDaysAfter))
	}
	out["calendario"] = cal
	out["txid"] = ch.txid
	out["revisao"] = rev
	out["loc"] = map[string]any{"id": ch.locID, "location": ch.location, "tipoCob": string(ch.kind), "criacao": timestamp(ch.created)}
	out["location"] = ch.location
	out["status"] = ch.status
	out["pixCopiaECola"] = ch.brcode
	if ch.kind == kindCobV {
		out["recebedor"] = recebedor
	}
	if len(ch.pix) > 0 {
		pix := make([]pixView, 0, len(ch.pix))
		for _, e2e := range ch.pix {
			if rx := p.received[e2e]; rx != nil {
				pix = append(pix, p.pixView(rx, now))
			}
		}
		out["pix"] = pix
	}
	return out
}

// handleChargePut creates a charge (PUT /cob/{txid}, /cobv/{txid}), or revises an ATIVA
// one: the document's violations for PUT name only a charge that exists and is no longer
// ATIVA. The same body again changes nothing and answers the charge as it stands.
func (p *PSP) handleChargePut(kind chargeKind) func(*call) {
	return func(c *call) {
		txid, m, ck := p.readChargeRequest(c, kind, false)
		if !ck.ok() {
			c.reject(kind.invalid(), ck.v)
			return
		}
		now := p.now()
		var pastDue *violation
		if kind == kindCobV {
			if d, err := readDueTerms(m); err == nil && d.due.Before(day(now)) {
				pastDue = &violation{Razao: "dataDeVencimento is before today",
					Propriedade: "cobv.calendario.dataDeVencimento", Valor: d.due.Format(time.DateOnly)}
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		ch := p.charges[txid]
		switch {
		case ch == nil && pastDue != nil:
			c.refuse(kind.invalid(), *pastDue)
			return
		case ch == nil:
			var err error
			if ch, err = p.newCharge(kind, txid, now); err != nil {
				c.refuse(errErroInternoDoServidor, violation{Razao: err.Error()})
				return
			}
			ch.revisions = []map[string]any{m}
			p.charges[txid] = ch
		case ch.kind != kind:
			c.refuse(kind.invalid(), violation{Razao: "txid em uso: the txid is a " + string(ch.kind) + "'s", Propriedade: "txid", Valor: txid})
			return
		case p.o.RefuseTxIDReuse:
			c.refuse(kind.invalid(), violation{Razao: "txid em uso", Propriedade: "txid", Valor: txid})
			return
		case canonical(m) == canonical(ch.body()):
		case ch.status != statusAtiva:
			c.refuse(kind.invalid(), violation{Razao: "the charge exists, is not ATIVA, and the request would change it",
				Propriedade: string(kind) + ".status", Valor: ch.status})
			return
		case pastDue != nil:
			c.refuse(kind.invalid(), *pastDue)
			return
		default:
			ch.revisions = append(ch.revisions, m)
		}
		ch.raw = c.body
		c.ok(http.StatusCreated, p.view(ch, len(ch.revisions)-1, now))
	}
}

// readChargeRequest reads a PUT or PATCH of a charge: the txid of its path, which must
// match the standard's pattern, and its body, held to checkCharge (patch says which
// schema). It returns the txid, the body (nil when it is not a JSON object) and what is
// wrong with them.
func (p *PSP) readChargeRequest(c *call, kind chargeKind, patch bool) (txid string, m map[string]any, ck checker) {
	txid = c.r.PathValue("txid")
	matching(txidRE)(&ck, "txid", txid)
	m, vs := decodeBody(c.r, c.body, string(kind))
	ck.v = append(ck.v, vs...)
	if m != nil {
		p.checkCharge(&ck, kind, m, patch)
	}
	return txid, m, ck
}

// newCharge makes a charge's location and BR Code.
func (p *PSP) newCharge(kind chargeKind, txid string, now time.Time) (*charge, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	loc := p.host + "/qr/v2/" + hex.EncodeToString(b[:])
	if kind == kindCobV {
		loc = p.host + "/qr/v2/cobv/" + hex.EncodeToString(b[:])
	}
	code, err := brcode.EncodeDynamic(brcode.Dynamic{URL: loc, Name: MerchantName, City: MerchantCity})
	if err != nil {
		return nil, err
	}
	p.locSeq++
	return &charge{kind: kind, txid: txid, status: statusAtiva, created: now, locID: p.locSeq, location: loc, brcode: code}, nil
}

// handleChargeGet answers a charge (GET /cob/{txid}, /cobv/{txid}), at its current
// revision or the one the query's revisao names.
func (p *PSP) handleChargeGet(kind chargeKind) func(*call) {
	return func(c *call) {
		var ck checker
		txid := c.r.PathValue("txid")
		matching(txidRE)(&ck, "txid", txid)
		q := c.r.URL.Query()
		rev := -1
		for k, v := range q {
			switch {
			case k != "revisao":
				ck.add(k, v[0], "additionalProperties", "is not a parameter of GET /%s/{txid}", kind)
			case len(v) != 1:
				ck.add(k, v[0], "type", "must be given once")
			default:
				var n json.Number = json.Number(v[0])
				integer(0, maxInt32)(&ck, k, n)
				if i, err := n.Int64(); err == nil {
					rev = int(i)
				}
			}
		}
		if !ck.ok() {
			c.reject(kind.badQuery(), ck.v)
			return
		}
		now := p.now()
		p.mu.Lock()
		defer p.mu.Unlock()
		ch := p.findCharge(c, kind, txid)
		switch {
		case ch == nil:
			// answered: no such charge
		case rev >= len(ch.revisions):
			c.refuse(kind.badQuery(), violation{Razao: "the charge has no such revision", Propriedade: "revisao", Valor: fmt.Sprint(rev)})
		case rev >= 0:
			c.ok(http.StatusOK, p.view(ch, rev, now))
		default:
			c.ok(http.StatusOK, p.view(ch, len(ch.revisions)-1, now))
		}
	}
}

// findCharge is the charge of kind under txid. When there is none (a charge of the
// other kind under txid is none either) it answers c the kind's "not found" and is nil.
// The caller holds p.mu.
func (p *PSP) findCharge(c *call, kind chargeKind, txid string) *charge {
	ch := p.charges[txid]
	if ch == nil || ch.kind != kind {
		c.refuse(kind.notFound())
		return nil
	}
	return ch
}

// handleChargePatch revises an ATIVA charge (PATCH /cob/{txid}, /cobv/{txid}): it
// removes it ({"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}, alone) or changes the fields
// the body gives, the result held to the same rules as a PUT. Every change is a new
// revision; a body that changes nothing is none.
func (p *PSP) handleChargePatch(kind chargeKind) func(*call) {
	return func(c *call) {
		txid, m, ck := p.readChargeRequest(c, kind, true)
		if _, ok := m["status"]; ok && len(m) > 1 {
			ck.add(string(kind)+".status", nil, "oneOf", "a removal cannot change anything else")
		}
		if !ck.ok() {
			c.reject(kind.invalid(), ck.v)
			return
		}
		now := p.now()
		p.mu.Lock()
		defer p.mu.Unlock()
		ch := p.findCharge(c, kind, txid)
		if ch == nil {
			return // answered: no such charge
		}
		if ch.status != statusAtiva {
			c.refuse(kind.invalid(), violation{Razao: "the charge is not ATIVA and the request would change it",
				Propriedade: string(kind) + ".status", Valor: ch.status})
			return
		}
		if _, ok := m["status"]; ok {
			ch.status = statusRemovida
			ch.revisions = append(ch.revisions, ch.body())
		} else if next := merge(ch.body(), m); canonical(next) != canonical(ch.body()) {
			var ck checker
			p.checkCharge(&ck, kind, next, false)
			if !ck.ok() {
				c.reject(kind.invalid(), ck.v)
				return
			}
			ch.revisions = append(ch.revisions, next)
		}
		c.ok(http.StatusOK, p.view(ch, len(ch.revisions)-1, now))
	}
}

// merge is body revised by patch: patch's fields replace body's, but valor and
// calendario change only the fields patch gives of them.
func merge(body, patch map[string]any) map[string]any {
	out := deepCopy(body)
	for k, v := range deepCopy(patch) {
		sub, isObj := v.(map[string]any)
		if old := obj(out, k); isObj && old != nil && (k == "valor" || k == "calendario") {
			for sk, sv := range sub {
				old[sk] = sv
			}
			continue
		}
		out[k] = v
	}
	return out
}

// AmountDue is what a payer must pay, at Now, for the charge under txid (what Pay takes):
// a cob's valor.original; a cobv's original less its abatimento, and after the due date
// plus the fine and the interest of the days late, on or before it less the discount of
// the day. The document leaves some conventions to the PSP; this one counts days in
// Brasília's calendar, moves a due date on a weekend to the Monday (it knows no
// holidays), takes a month as 30 days and a year as 365, counts weekdays for the
// business-day modalidades, rounds each part to the centavo half up, and never asks less
// than a centavo. It is an error when the charge is unknown, not ATIVA, expired or past
// its last day.
func (p *PSP) AmountDue(txid string) (int64, error) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := p.charges[txid]
	if ch == nil {
		return 0, fmt.Errorf("apipixtest: no charge has txid %q", txid)
	}
	v, _, err := ch.due(now)
	return v, err
}

// due is what the charge takes at now, whether the payer may choose the value
// (valor.modalidadeAlteracao 1), or why it cannot be paid.
func (ch *charge) due(now time.Time) (value int64, anyValue bool, err error) {
	if ch.status != statusAtiva {
		return 0, false, fmt.Errorf("apipixtest: charge %s is %s, not ATIVA", ch.txid, ch.status)
	}
	body := ch.body()
	if ch.kind == kindCob {
		exp, ok := num(obj(body, "calendario"), "expiracao")
		if !ok {
			exp = defaultExpiracao
		}
		if !now.Before(ch.created.Add(time.Duration(exp) * time.Second)) {
			return 0, false, fmt.Errorf("apipixtest: charge %s expired at %s", ch.txid, timestamp(ch.created.Add(time.Duration(exp)*time.Second)))
		}
		mod, _ := num(obj(body, "valor"), "modalidadeAlteracao")
		return ch.value(), mod == 1, nil
	}
	d, err := readDueTerms(body)
	if err != nil {
		return 0, false, err
	}
	v, err := d.amountDue(day(now))
	if errors.Is(err, errPastLastDay) {
		return 0, false, fmt.Errorf("apipixtest: charge %s: %w (last day %s)", ch.txid, err, d.lastDay().Format(time.DateOnly))
	}
	return v, false, err
}

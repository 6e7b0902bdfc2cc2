package apipixtest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// Payer is who pays a Pix: a name and a bare CPF or CNPJ (either may be empty).
type Payer struct{ Name, TaxID string }

// received is a Pix the PSP received for the company, and its refunds.
type received struct {
	px      rail.ReceivedPix
	refunds []*refund // in the order they were asked
}

// pixView is a received Pix as the API answers it (the standard's Pix), with Efí's
// gnExtras.pagador: the standard's Pix names no payer, and Efí's extension is where a
// PSP that says who paid says it.
type pixView struct {
	EndToEndID  string       `json:"endToEndId"`
	TxID        string       `json:"txid,omitempty"`
	Valor       string       `json:"valor"`
	Chave       string       `json:"chave,omitempty"`
	Horario     string       `json:"horario"`
	InfoPagador string       `json:"infoPagador,omitempty"`
	Devolucoes  []refundView `json:"devolucoes,omitempty"`
	GnExtras    *gnExtras    `json:"gnExtras,omitempty"`
}

// gnExtras is Efí's extension of a Pix.
type gnExtras struct {
	Pagador *gnPagador `json:"pagador,omitempty"`
}

// gnPagador is who paid a Pix, as Efí says it.
type gnPagador struct {
	Nome string `json:"nome,omitempty"`
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
}

// pixView is rx as the API answers it at now (its refunds' statuses depend on the time).
func (p *PSP) pixView(rx *received, now time.Time) pixView {
	px := rx.px
	v := pixView{
		EndToEndID: px.EndToEndID, TxID: px.TxID, Valor: formatMoney(px.Value), Chave: px.Key,
		Horario: timestamp(px.At), InfoPagador: px.Message,
	}
	if px.PayerName != "" || px.PayerTaxID != "" {
		pg := &gnPagador{Nome: px.PayerName}
		if len(px.PayerTaxID) == 11 {
			pg.CPF = px.PayerTaxID
		} else {
			pg.CNPJ = px.PayerTaxID
		}
		v.GnExtras = &gnExtras{Pagador: pg}
	}
	for _, rf := range rx.refunds {
		v.Devolucoes = append(v.Devolucoes, p.refundView(rf, now))
	}
	return v
}

// Pay has a payer pay txid at Now, value centavos, with message as infoPagador. A
// charge under txid must be ATIVA and unexpired (a cobv: not past its last day) and be
// paid exactly what it takes (see AmountDue; a cob whose payer may change the value takes
// any), and becomes CONCLUIDA. A txid no charge has is taken as a static QR code's
// reference (1 to 35 letters and digits; "" for none): any value is paid. Pay records the
// Pix under a new endToEndId (E, the ISPB, Now as yyyyMMddHHmm in UTC, 11 letters and
// digits) and, if it has a txid, notifies the webhook (see SetNotify) before it returns.
func (p *PSP) Pay(txid string, value int64, payer Payer, message string) (rail.ReceivedPix, error) {
	switch {
	case value <= 0:
		return rail.ReceivedPix{}, fmt.Errorf("apipixtest: Pay: value %d is not a positive number of centavos", value)
	case txid != "" && !pixTxidRE.MatchString(txid):
		return rail.ReceivedPix{}, fmt.Errorf("apipixtest: Pay: txid %q is not 1 to 35 letters and digits", txid)
	case payer.TaxID != "" && !brcode.ValidCPF(payer.TaxID) && !brcode.ValidCNPJ(payer.TaxID):
		return rail.ReceivedPix{}, fmt.Errorf("apipixtest: Pay: %q is not a bare CPF or CNPJ", payer.TaxID)
	case utf8.RuneCountInString(message) > 140:
		return rail.ReceivedPix{}, errors.New("apipixtest: Pay: the message is longer than 140 characters")
	}
	now := p.now()
	p.mu.Lock()
	px := rail.ReceivedPix{TxID: txid, Key: p.o.PixKey, Value: value, At: now,
		PayerName: payer.Name, PayerTaxID: payer.TaxID, Message: message}
	ch := p.charges[txid]
	if ch != nil {
		due, anyValue, err := ch.due(now)
		if err == nil && !anyValue && value != due {
			err = fmt.Errorf("apipixtest: Pay: charge %s takes %s, not %s", txid, formatMoney(due), formatMoney(value))
		}
		if err != nil {
			p.mu.Unlock()
			return rail.ReceivedPix{}, err
		}
		px.Key = str(ch.body(), "chave")
	}
	px.EndToEndID = p.newID('E', now)
	p.received[px.EndToEndID] = &received{px: px}
	if ch != nil {
		ch.status = statusConcluida
		ch.pix = append(ch.pix, px.EndToEndID)
	}
	p.mu.Unlock()
	p.notifyPix(px)
	return px, nil
}

// Receive records px exactly as given, as a payer's bank delivers it (an empty Key is the
// PSP's key; a zero At is Now; an empty EndToEndID is a new one), and notifies the webhook
// if it has a txid. A Pix already received under its EndToEndID stays as it was first
// recorded, and is notified again: a PSP that delivers a Pix twice does so.
func (p *PSP) Receive(px rail.ReceivedPix) {
	now := p.now()
	p.mu.Lock()
	if px.Key == "" {
		px.Key = p.o.PixKey
	}
	if px.At.IsZero() {
		px.At = now
	}
	if px.EndToEndID == "" {
		px.EndToEndID = p.newID('E', now)
	}
	if rx, ok := p.received[px.EndToEndID]; ok {
		px = rx.px
	} else {
		p.received[px.EndToEndID] = &received{px: px}
	}
	p.mu.Unlock()
	p.notifyPix(px)
}

// Received is every Pix the PSP received, oldest first (ties by endToEndId).
func (p *PSP) Received() []rail.ReceivedPix {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]rail.ReceivedPix, 0, len(p.received))
	for _, rx := range p.sortedReceived() {
		out = append(out, rx.px)
	}
	return out
}

func (p *PSP) sortedReceived() []*received {
	all := make([]*received, 0, len(p.received))
	for _, rx := range p.received {
		all = append(all, rx)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].px, all[j].px
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.EndToEndID < b.EndToEndID
	})
	return all
}

const idChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newID is a new endToEndId (kind E) or rtrId (kind D): the kind, the PSP's ISPB, now in
// UTC as yyyyMMddHHmm and 11 random letters and digits, 32 characters none other has.
func (p *PSP) newID(kind byte, now time.Time) string {
	for {
		var b [11]byte
		_, _ = rand.Read(b[:])
		for i := range b {
			b[i] = idChars[int(b[i])%len(idChars)]
		}
		id := string(kind) + p.o.ISPB + now.UTC().Format("200601021504") + string(b[:])
		if !p.idTaken(id) {
			return id
		}
	}
}

func (p *PSP) idTaken(id string) bool {
	if _, ok := p.received[id]; ok || p.sendByE2E(id) != nil {
		return true
	}
	for _, rx := range p.received {
		for _, rf := range rx.refunds {
			if rf.rtrID == id {
				return true
			}
		}
	}
	return false
}

// handlePixGet answers a received Pix (GET /pix/{e2eid}).
func (p *PSP) handlePixGet(c *call) {
	e2e := c.r.PathValue("e2eid")
	if !e2eRE.MatchString(e2e) {
		c.reject(errPixConsultaInvalida, []violation{{Razao: "does not match " + e2eRE.String(), Propriedade: "e2eid", Valor: e2e, keyword: "pattern"}})
		return
	}
	if q := c.r.URL.Query(); len(q) > 0 {
		var ck checker
		for _, k := range sortedKeys(anyMap(q)) {
			ck.add(k, q.Get(k), "additionalProperties", "is not a parameter of GET /pix/{e2eid}")
		}
		c.reject(errPixConsultaInvalida, ck.v)
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if rx := p.findReceived(c, e2e); rx != nil {
		c.ok(http.StatusOK, p.pixView(rx, now))
	}
}

// findReceived is the Pix received under e2e. When the PSP has none it answers c
// PixNaoEncontrado and is nil. The caller holds p.mu.
func (p *PSP) findReceived(c *call, e2e string) *received {
	rx := p.received[e2e]
	if rx == nil {
		c.refuse(errPixNaoEncontrado)
	}
	return rx
}

// pixPage is GET /pix's answer (PixConsultados).
type pixPage struct {
	Parametros pixParams `json:"parametros"`
	Pix        []pixView `json:"pix"`
}

type pixParams struct {
	Inicio            string    `json:"inicio"`
	Fim               string    `json:"fim"`
	TxID              string    `json:"txid,omitempty"`
	TxIDPresente      *bool     `json:"txIdPresente,omitempty"`
	DevolucaoPresente *bool     `json:"devolucaoPresente,omitempty"`
	CPF               string    `json:"cpf,omitempty"`
	CNPJ              string    `json:"cnpj,omitempty"`
	Paginacao         paginacao `json:"paginacao"`
}

type paginacao struct {
	PaginaAtual            int `json:"paginaAtual"`
	ItensPorPagina         int `json:"itensPorPagina"`
	QuantidadeDePaginas    int `json:"quantidadeDePaginas"`
	QuantidadeTotalDeItens int `json:"quantidadeTotalDeItens"`
}

// handlePixList lists the Pix received (GET /pix): those whose horario is from inicio to
// fim, both included (the document's Inicio is "maior ou igual", its Fim "menor ou
// igual"), narrowed by the filters given, oldest first with ties by endToEndId, a page
// at a time (paginaAtual from 0; itensPorPagina from 1 to 1000, 100 by default).
func (p *PSP) handlePixList(c *call) {
	var ck checker
	q := c.r.URL.Query()
	params := pixParams{Paginacao: paginacao{ItensPorPagina: 100}}
	var from, to time.Time
	instant := func(k string, t *time.Time, s *string) {
		if len(q[k]) == 0 {
			ck.add(k, nil, "required", "is required")
			return
		}
		*s = q.Get(k)
		v, err := time.Parse(time.RFC3339Nano, *s)
		if err != nil {
			ck.add(k, *s, "format", "is not an RFC 3339 date-time")
		}
		*t = v
	}
	boolean := func(k string) *bool {
		switch q.Get(k) {
		case "true":
			return new(true)
		case "false":
			return new(false)
		}
		ck.add(k, q.Get(k), "type", "must be true or false")
		return nil
	}
	whole := func(k string, min, max int) int {
		n, err := strconv.Atoi(q.Get(k))
		if err != nil || n < min || n > max {
			ck.add(k, q.Get(k), "minimum", "must be an integer from %d to %d", min, max)
		}
		return n
	}
	instant("inicio", &from, &params.Inicio)
	instant("fim", &to, &params.Fim)
	for _, k := range sortedKeys(anyMap(q)) {
		if len(q[k]) > 1 {
			ck.add(k, q[k][1], "type", "is given more than once")
		}
		var c checker
		switch k {
		case "inicio", "fim":
		case "txid":
			params.TxID = q.Get(k)
			matching(pixTxidRE)(&c, k, params.TxID)
		case "txIdPresente":
			params.TxIDPresente = boolean(k)
		case "devolucaoPresente":
			params.DevolucaoPresente = boolean(k)
		case "cpf":
			params.CPF = q.Get(k)
			cpf(&c, k, params.CPF)
		case "cnpj":
			params.CNPJ = q.Get(k)
			cnpj(&c, k, params.CNPJ)
		case "paginacao.paginaAtual":
			params.Paginacao.PaginaAtual = whole(k, 0, int(maxInt32))
		case "paginacao.itensPorPagina":
			params.Paginacao.ItensPorPagina = whole(k, 1, 1000)
		default:
			c.add(k, q.Get(k), "additionalProperties", "is not a parameter of GET /pix")
		}
		ck.v = append(ck.v, c.v...)
	}
	if params.CPF != "" && params.CNPJ != "" {
		ck.add("cpf", nil, "oneOf", "cpf and cnpj cannot be given together")
	}
	if ck.ok() && to.Before(from) {
		ck.add("fim", params.Fim, "minimum", "is before inicio")
	}
	if !ck.ok() {
		c.reject(errPixConsultaInvalida, ck.v)
		return
	}
	now := p.now()
	p.mu.Lock()
	var match []pixView
	for _, rx := range p.sortedReceived() {
		px := rx.px
		switch {
		case px.At.Before(from) || px.At.After(to):
		case params.TxID != "" && px.TxID != params.TxID:
		case params.TxIDPresente != nil && *params.TxIDPresente != (px.TxID != ""):
		case params.DevolucaoPresente != nil && *params.DevolucaoPresente != (len(rx.refunds) > 0):
		case params.CPF != "" && px.PayerTaxID != params.CPF:
		case params.CNPJ != "" && px.PayerTaxID != params.CNPJ:
		default:
			match = append(match, p.pixView(rx, now))
		}
	}
	p.mu.Unlock()
	pg := &params.Paginacao
	pg.QuantidadeTotalDeItens = len(match)
	pg.QuantidadeDePaginas = max(1, (len(match)+pg.ItensPorPagina-1)/pg.ItensPorPagina)
	start := min(len(match), pg.PaginaAtual*pg.ItensPorPagina)
	if pg.PaginaAtual >= pg.QuantidadeDePaginas {
		start = len(match)
	}
	end := min(len(match), start+pg.ItensPorPagina)
	c.ok(http.StatusOK, pixPage{Parametros: params, Pix: append([]pixView{}, match[start:end]...)})
}

func anyMap(q map[string][]string) map[string]any {
	m := make(map[string]any, len(q))
	for k, v := range q {
		m[k] = v
	}
	return m
}

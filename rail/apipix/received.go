package apipix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/rail"
)

// pixItem is a received Pix as the PSP lists and notifies it (the standard's Pix).
type pixItem struct {
	EndToEndID  string      `json:"endToEndId"`
	TxID        string      `json:"txid"`
	Valor       string      `json:"valor"`
	Chave       string      `json:"chave"`
	Horario     string      `json:"horario"`
	InfoPagador string      `json:"infoPagador"`
	Devolucoes  []devolucao `json:"devolucoes"`
	// Pagador is not in the standard's Pix; PSPs that say who paid give it here, and Efí
	// in gnExtras.
	Pagador  *pixPagador `json:"pagador"`
	GnExtras *struct {
		Pagador *pixPagador `json:"pagador"`
		// IDEnvio is set on Efí's callbacks about a Pix the company SENT (its idEnvio):
		// an outcome of a send, never money received.
		IDEnvio string `json:"idEnvio"`
	} `json:"gnExtras"`
	// Tipo and Status are not in the standard's received Pix; Efí's callbacks about a
	// sent Pix carry them (tipo SOLICITACAO, status REALIZADO or NAO_REALIZADO).
	Tipo   string `json:"tipo"`
	Status string `json:"status"`
}

// outgoing reports whether p is a PSP's callback about a Pix the company sent (Efí posts
// those to the same webhook), which must never be recorded as money received.
func (p pixItem) outgoing() bool {
	return p.GnExtras != nil && p.GnExtras.IDEnvio != "" || p.Tipo != "" || p.Status != ""
}

// pixPagador is who paid a Pix.
type pixPagador struct {
	Nome string `json:"nome"`
	CPF  string `json:"cpf"`
	CNPJ string `json:"cnpj"`
}

// receivedTxID is the txid a received Pix may carry. The document gives the Pix's txid
// both the charge's pattern (26 to 35 characters) and [a-zA-Z0-9]{1,35}; a static QR
// code's Pix carries 1 to 25 characters, or "***" for none, and PSPs list it, so any of
// those is taken here.
var receivedTxID = regexp.MustCompile(`^([a-zA-Z0-9]{1,35}|\*\*\*)$`)

// received maps a listed or notified Pix to a rail.ReceivedPix, checking every field;
// an error names the field.
func received(p pixItem) (rail.ReceivedPix, error) {
	if !endToEndPattern.MatchString(p.EndToEndID) {
		return rail.ReceivedPix{}, fmt.Errorf("endToEndId %q is not an endToEndId (E, 8-digit ISPB, yyyyMMddHHmm, 11 letters or digits)", p.EndToEndID)
	}
	value, err := parseValor(p.Valor)
	if err != nil {
		return rail.ReceivedPix{}, fmt.Errorf("valor: %w", err)
	}
	if p.Horario == "" {
		return rail.ReceivedPix{}, errors.New("horario: missing")
	}
	at, err := time.Parse(time.RFC3339Nano, p.Horario)
	if err != nil {
		return rail.ReceivedPix{}, fmt.Errorf("horario %q is not an RFC 3339 time", p.Horario)
	}
	txid := p.TxID
	if txid != "" && !receivedTxID.MatchString(txid) {
		return rail.ReceivedPix{}, fmt.Errorf("txid %q is not 1 to 35 letters and digits", txid)
	}
	if txid == "***" {
		txid = "" // a static code's "no txid"
	}
	r := rail.ReceivedPix{
		EndToEndID: p.EndToEndID,
		TxID:       txid,
		Key:        p.Chave,
		Value:      value,
		At:         at,
		Message:    p.InfoPagador,
	}
	who := p.Pagador
	if who == nil && p.GnExtras != nil {
		who = p.GnExtras.Pagador
	}
	if who != nil {
		r.PayerName = who.Nome
		r.PayerTaxID = who.CPF
		if r.PayerTaxID == "" {
			r.PayerTaxID = who.CNPJ
		}
	}
	return r, nil
}

// pixPage is the answer of GET /pix (PixConsultados).
type pixPage struct {
	Parametros struct {
		Paginacao struct {
			PaginaAtual            int `json:"paginaAtual"`
			ItensPorPagina         int `json:"itensPorPagina"`
			QuantidadeDePaginas    int `json:"quantidadeDePaginas"`
			QuantidadeTotalDeItens int `json:"quantidadeTotalDeItens"`
		} `json:"paginacao"`
	} `json:"parametros"`
	Pix []pixItem `json:"pix"`
}

// Paging of GET /pix: the document's default and largest page.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
	// maxEmptyPages is how many pages of Pix already listed one ListReceived call skips
	// before it answers an empty page with a cursor.
	maxEmptyPages = 16
)

// listCursor is where a listing stands: the next page to ask for, and the latest
// horario listed with the endToEndIds listed at that instant, to leave out a Pix listed
// before when Pix received meanwhile move the pages on.
type listCursor struct {
	page int
	last time.Time
	ids  []string
}

// String writes c as "page.unixnano.id,id": letters, digits, points and commas.
func (c listCursor) String() string {
	return strconv.Itoa(c.page) + "." + strconv.FormatInt(c.last.UnixNano(), 10) + "." + strings.Join(c.ids, ",")
}

// parseCursor reads a cursor String wrote.
func parseCursor(s string) (listCursor, error) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return listCursor{}, errors.New("malformed")
	}
	page, err := strconv.Atoi(parts[0])
	if err != nil || page < 0 {
		return listCursor{}, errors.New("malformed page")
	}
	ns, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return listCursor{}, errors.New("malformed time")
	}
	c := listCursor{page: page, last: time.Unix(0, ns)}
	if parts[2] != "" {
		c.ids = strings.Split(parts[2], ",")
	}
	return c, nil
}

// seen reports whether p was listed on an earlier page: it is older than the cursor, or
// of the cursor's instant and among its ids.
func (c listCursor) seen(p rail.ReceivedPix) bool {
	if c.page == 0 {
		return false
	}
	if p.At.Before(c.last) {
		return true
	}
	if p.At.Equal(c.last) {
		for _, id := range c.ids {
			if id == p.EndToEndID {
				return true
			}
		}
	}
	return false
}

// advance moves c past a page whose Pix in the window are ps (in the PSP's order,
// oldest first).
func (c listCursor) advance(ps []rail.ReceivedPix) listCursor {
	next := listCursor{page: c.page + 1, last: c.last, ids: append([]string(nil), c.ids...)}
	for _, p := range ps {
		switch {
		case p.At.After(next.last):
			next.last, next.ids = p.At, []string{p.EndToEndID}
		case p.At.Equal(next.last) && !slices.Contains(next.ids, p.EndToEndID):
			next.ids = append(next.ids, p.EndToEndID)
		}
	}
	return next
}

// ListReceived lists the Pix received from q.From (included) to q.To (excluded), oldest
// first: GET /pix with inicio and fim (fim = q.To, dropping what the PSP lists at q.To,
// as the standard's fim includes it) and the page asked. The cursor is the next page's
// number followed by the latest instant listed and the Pix listed at it, so that a Pix
// received while the window is paged, which moves the later pages on, is not listed
// twice. q.Limit is the page size (itensPorPagina), at most the document's 1000.
func (d *Driver) ListReceived(ctx context.Context, q rail.ReceivedQuery) (rail.ReceivedPage, error) {
	if err := ctxErr(ctx); err != nil {
		return rail.ReceivedPage{}, err
	}
	if q.Limit < 0 {
		return rail.ReceivedPage{}, rail.Invalid("limit", "must not be negative")
	}
	if q.From.IsZero() || q.To.IsZero() {
		return rail.ReceivedPage{}, rail.Invalid("from", "a listing needs a window: from and to")
	}
	cur := listCursor{}
	if q.Cursor != "" {
		var err error
		if cur, err = parseCursor(q.Cursor); err != nil {
			return rail.ReceivedPage{}, rail.Invalid("cursor", "not a cursor of this driver: "+err.Error())
		}
	}
	if !q.From.Before(q.To) {
		return rail.ReceivedPage{}, nil
	}
	size := min(q.Limit, maxPageSize)
	for range maxEmptyPages {
		page, err := d.pixPage(ctx, q, cur.page, size)
		if err != nil {
			return rail.ReceivedPage{}, err
		}
		var in, out []rail.ReceivedPix
		for _, p := range page.all {
			if p.At.Before(q.From) || !p.At.Before(q.To) {
				continue
			}
			in = append(in, p)
			if !cur.seen(p) {
				out = append(out, p)
			}
		}
		// Oldest first, should a PSP order a page otherwise; across pages the PSP's
		// order by horario is relied on.
		slices.SortStableFunc(out, func(a, b rail.ReceivedPix) int { return a.At.Compare(b.At) })
		if page.last {
			return rail.ReceivedPage{Pix: out}, nil
		}
		cur = cur.advance(in)
		if len(out) > 0 {
			return rail.ReceivedPage{Pix: out, Cursor: cur.String()}, nil
		}
	}
	return rail.ReceivedPage{Cursor: cur.String()}, nil
}

// listed is one page of GET /pix, mapped.
type listed struct {
	all  []rail.ReceivedPix
	last bool // no page follows
}

// pixPage asks for page n of the window of q, of size Pix (0: the PSP's default).
func (d *Driver) pixPage(ctx context.Context, q rail.ReceivedQuery, n, size int) (listed, error) {
	v := url.Values{}
	v.Set("inicio", q.From.UTC().Format(time.RFC3339Nano))
	v.Set("fim", q.To.UTC().Format(time.RFC3339Nano))
	v.Set("paginacao.paginaAtual", strconv.Itoa(n))
	if size > 0 {
		v.Set("paginacao.itensPorPagina", strconv.Itoa(size))
	}
	var ans pixPage
	if err := d.Do(ctx, http.MethodGet, d.base+"/pix?"+v.Encode(), nil, &ans); err != nil {
		return listed{}, err
	}
	out := listed{all: make([]rail.ReceivedPix, 0, len(ans.Pix))}
	for i, p := range ans.Pix {
		r, err := received(p)
		if err != nil {
			return listed{}, fmt.Errorf("apipix: GET /pix: pix[%d]: %w", i, err)
		}
		out.all = append(out.all, r)
	}
	per := ans.Parametros.Paginacao.ItensPorPagina
	if per <= 0 {
		per = size
	}
	if per <= 0 {
		per = defaultPageSize
	}
	switch pages := ans.Parametros.Paginacao.QuantidadeDePaginas; {
	case len(ans.Pix) == 0:
		out.last = true
	case pages > 0:
		out.last = n+1 >= pages
	default:
		out.last = len(ans.Pix) < per
	}
	return out, nil
}

// Notification is what a PSP's POST to the webhook says: Pix received (with a txid, as
// the standard notifies only those) and refunds that reached a final status, and, from a
// PSP that posts them to the same webhook (Efí), outcomes of Pix the company sent.
type Notification struct {
	Pix     []rail.ReceivedPix
	Refunds []RefundUpdate
	Sends   []SendUpdate
}

// SendUpdate is a PSP's callback about a Pix the company sent: never money received. The
// order's outcome is taken from Status (the Service asks it), so a callback only says when
// to ask.
type SendUpdate struct {
	// IDEnvio is the send's id at the PSP: OrderRef of the order, if it was one of ours.
	IDEnvio    string
	EndToEndID string
	// Status is the PSP's word for where the send stands (REALIZADO, NAO_REALIZADO, ...).
	Status string
}

// RefundUpdate is where a refund stands, as a notification reports it.
type RefundUpdate struct {
	// EndToEndID is the endToEndId of the Pix refunded.
	EndToEndID string
	// ID is the devolução id: OrderRef of the refund order.
	ID         string
	Settlement rail.Settlement
}

// ParseNotification reads the body of a PSP's POST to the webhook, {"pix": [...]}: the
// Pix received, and the devoluções each carries. Every Pix is checked (endToEndId, valor,
// horario, txid); a body that is not such an object, or a Pix that breaks a rule, is an
// error that names the field. Pix a PSP repeats (it may notify one twice) are returned
// as they come: the receiver keys them by EndToEndID.
func ParseNotification(body []byte) (Notification, error) {
	var msg struct {
		Pix *[]pixItem `json:"pix"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&msg); err != nil {
		return Notification{}, fmt.Errorf("apipix: notification: not a JSON object with a pix array: %w", err)
	}
	if dec.More() {
		return Notification{}, errors.New("apipix: notification: more than one JSON value")
	}
	if msg.Pix == nil {
		return Notification{}, errors.New("apipix: notification: pix: missing")
	}
	var n Notification
	for i, p := range *msg.Pix {
		if p.outgoing() {
			u := SendUpdate{EndToEndID: p.EndToEndID, Status: p.Status}
			if p.GnExtras != nil {
				u.IDEnvio = p.GnExtras.IDEnvio
			}
			n.Sends = append(n.Sends, u)
			continue
		}
		r, err := received(p)
		if err != nil {
			return Notification{}, fmt.Errorf("apipix: notification: pix[%d]: %w", i, err)
		}
		n.Pix = append(n.Pix, r)
		for j, dv := range p.Devolucoes {
			if !refPattern.MatchString(dv.ID) {
				return Notification{}, fmt.Errorf("apipix: notification: pix[%d].devolucoes[%d]: id %q is not 1 to 35 letters and digits", i, j, dv.ID)
			}
			if _, err := parseValor(dv.Valor); err != nil {
				return Notification{}, fmt.Errorf("apipix: notification: pix[%d].devolucoes[%d]: valor: %w", i, j, err)
			}
			s, err := refundSettlement(dv)
			if err != nil {
				return Notification{}, fmt.Errorf("apipix: notification: pix[%d].devolucoes[%d]: %w", i, j, err)
			}
			n.Refunds = append(n.Refunds, RefundUpdate{EndToEndID: r.EndToEndID, ID: dv.ID, Settlement: s})
		}
	}
	return n, nil
}

// webhookRequest is the body of PUT /webhook/{chave}.
type webhookRequest struct {
	WebhookURL string `json:"webhookUrl"`
}

// RegisterWebhook tells the PSP to POST the Pix received on the company's key to
// webhookURL: PUT /webhook/{PixKey}. The PSP appends "/pix" to the URL as a string, so a
// URL with a query (Efí's advice: "...?hmac=X&ignorar=") gets it in its last parameter.
// Efí also requires a webhook on the key before it sends from it.
func (d *Driver) RegisterWebhook(ctx context.Context, webhookURL string) error {
	u, err := url.Parse(webhookURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		return rail.Invalid("webhookUrl", "must be an absolute https URL")
	}
	return d.Do(ctx, http.MethodPut, d.base+"/webhook/"+url.PathEscape(d.pixKey), webhookRequest{WebhookURL: webhookURL}, nil)
}

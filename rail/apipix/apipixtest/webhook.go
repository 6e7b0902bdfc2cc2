package apipixtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pixfoundry/payments/rail"
)

// NotifyMode is how the PSP notifies the company's webhook of each Pix it receives.
type NotifyMode int

// Notify modes. PSPs lose notifications and repeat them; these make the PSP do so.
const (
	NotifyOnce  NotifyMode = iota // one POST per Pix (the default)
	NotifyNever                   // no POST: the notification is lost
	NotifyTwice                   // the same body POSTed twice
)

// webhookReg is the webhook registered for the PSP's key.
type webhookReg struct {
	url     string
	created time.Time
}

// webhookView is GET /webhook/{chave}'s answer.
type webhookView struct {
	WebhookURL string `json:"webhookUrl"`
	Chave      string `json:"chave"`
	Criacao    string `json:"criacao"`
}

// SetNotify sets how each Pix received from now on is notified.
func (p *PSP) SetNotify(m NotifyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = m
}

// WebhookURL is the webhookUrl last registered for the PSP's key by PUT /webhook/{chave};
// "" when none is.
func (p *PSP) WebhookURL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.webhook == nil {
		return ""
	}
	return p.webhook.url
}

// Notifications is how many POSTs the PSP has made to the webhook.
func (p *PSP) Notifications() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notifications
}

// NotifyErrors are the webhook POSTs that failed (a transport error or an answer other
// than 2xx), oldest first.
func (p *PSP) NotifyErrors() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.notifyErrs...)
}

// checkChave holds the path's key to the standard: a Pix key, and for a PUT the
// receiver's (PUT's violations name a key of somebody else; GET and DELETE of one find no
// webhook).
func (p *PSP) checkChave(c *call) (string, bool) {
	chave := c.r.PathValue("chave")
	var ck checker
	text(77)(&ck, "chave", chave)
	if ck.ok() {
		pixKey(&ck, "chave", chave)
	}
	if ck.ok() && chave != p.o.PixKey && c.r.Method == http.MethodPut {
		ck.add("chave", chave, "format", "is not a key of this receiver (%s)", p.o.PixKey)
	}
	if !ck.ok() {
		c.reject(errWebhookOperacaoInvalida, ck.v)
		return "", false
	}
	if chave != p.o.PixKey {
		c.refuse(errWebhookNaoEncontrado)
		return "", false
	}
	return chave, true
}

// handleWebhookPut registers the webhook of the PSP's key (PUT /webhook/{chave}).
func (p *PSP) handleWebhookPut(c *call) {
	chave, ok := p.checkChave(c)
	if !ok {
		return
	}
	m, vs := decodeBody(c.r, c.body, "webhook")
	ck := checker{v: vs}
	if m != nil {
		object(req("webhookUrl", absoluteURL))(&ck, "webhook", m)
	}
	if !ck.ok() {
		c.reject(errWebhookOperacaoInvalida, ck.v)
		return
	}
	now := p.now()
	p.mu.Lock()
	p.webhook = &webhookReg{url: str(m, "webhookUrl"), created: now}
	view := webhookView{WebhookURL: p.webhook.url, Chave: chave, Criacao: timestamp(now)}
	p.mu.Unlock()
	c.ok(http.StatusOK, view)
}

// handleWebhookGet answers the webhook of the PSP's key (GET /webhook/{chave}).
func (p *PSP) handleWebhookGet(c *call) {
	chave, ok := p.checkChave(c)
	if !ok {
		return
	}
	p.mu.Lock()
	w := p.webhook
	p.mu.Unlock()
	if w == nil {
		c.refuse(errWebhookNaoEncontrado)
		return
	}
	c.ok(http.StatusOK, webhookView{WebhookURL: w.url, Chave: chave, Criacao: timestamp(w.created)})
}

// handleWebhookDelete removes the webhook of the PSP's key (DELETE /webhook/{chave}).
func (p *PSP) handleWebhookDelete(c *call) {
	if _, ok := p.checkChave(c); !ok {
		return
	}
	p.mu.Lock()
	had := p.webhook != nil
	p.webhook = nil
	p.mu.Unlock()
	if !had {
		c.refuse(errWebhookNaoEncontrado)
		return
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// notifyPix POSTs px to the webhook, as the standard's callback says: {"pix": [...]} to
// the webhookUrl with "/pix" appended. Efí appends it to the URL as a string, so that a
// webhookUrl ending in "?ignorar=" gets the "/pix" in an ignored parameter; so does the
// PSP. Only a Pix with a txid is notified. It runs without the PSP's lock: the company's
// server may call the PSP while it handles the notification.
func (p *PSP) notifyPix(px rail.ReceivedPix) {
	if px.TxID == "" {
		return
	}
	now := p.now()
	p.mu.Lock()
	w, mode := p.webhook, p.notify
	var body []byte
	if rx := p.received[px.EndToEndID]; rx != nil && w != nil {
		body, _ = json.Marshal(struct {
			Pix []pixView `json:"pix"`
		}{[]pixView{p.pixView(&received{px: rx.px}, now)}})
	}
	p.mu.Unlock()
	if w == nil || mode == NotifyNever || body == nil {
		return
	}
	times := 1
	if mode == NotifyTwice {
		times = 2
	}
	for range times {
		err := p.post(w.url+"/pix", body)
		p.mu.Lock()
		p.notifications++
		if err != nil {
			p.notifyErrs = append(p.notifyErrs, err)
		}
		p.mu.Unlock()
	}
}

func (p *PSP) post(url string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("apipixtest: webhook %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.hook.Do(req)
	if err != nil {
		return fmt.Errorf("apipixtest: webhook %s: %w", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("apipixtest: webhook %s answered %s", url, resp.Status)
	}
	return nil
}

package apipixtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

func TestPSP_Notify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  apipixtest.NotifyMode
		posts int
	}{
		{"Once", apipixtest.NotifyOnce, 1},
		{"Never", apipixtest.NotifyNever, 0},
		{"Twice", apipixtest.NotifyTwice, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			p, _ := newPSP(t, apipixtest.Options{})
			c := dial(t, p)
			h := newHook(t)
			c.register(p, h.srv.URL+"/psp/webhook")
			is.Equal(p.WebhookURL(), h.srv.URL+"/psp/webhook")
			p.SetNotify(tc.mode)
			c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
			px, err := p.Pay(txid1, 1000, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "obrigada")
			is.NoErr(err)
			paths, bodies := h.posts()
			is.Equal(len(paths), tc.posts)        // POSTed as the mode says, before Pay returns
			is.Equal(p.Notifications(), tc.posts) // and counted
			is.Equal(len(p.NotifyErrors()), 0)
			for i := range paths {
				is.Equal(paths[i], "POST /psp/webhook/pix application/json") // the webhookUrl with /pix appended
				var got struct {
					Pix []map[string]any `json:"pix"`
				}
				is.NoErr(json.Unmarshal(bodies[i], &got))
				is.Equal(len(got.Pix), 1)
				is.Equal(got.Pix[0]["endToEndId"], px.EndToEndID)
				is.Equal(got.Pix[0]["txid"], txid1)
				is.Equal(got.Pix[0]["valor"], "10.00")
				is.Equal(got.Pix[0]["chave"], p.PixKey())
				is.Equal(got.Pix[0]["horario"], "2026-11-23T15:00:00Z")
				is.Equal(got.Pix[0]["infoPagador"], "obrigada")
				is.Equal(field(got.Pix[0], "gnExtras", "pagador", "cpf"), "52998224725") // who paid, as Efí says it
			}
			noViolations(t, p)
		})
	}
	t.Run("RawAppend", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		h := newHook(t)
		c.register(p, h.srv.URL+"/psp/webhook?hmac=x&ignorar=")
		_, err := p.Pay("estatico1", 500, apipixtest.Payer{}, "")
		is.NoErr(err)
		paths, _ := h.posts()
		is.Equal(paths, []string{"POST /psp/webhook?hmac=x&ignorar=/pix application/json"}) // "/pix" lands in the ignored parameter, as at Efí
	})
	t.Run("NoTxIDNoNotification", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		h := newHook(t)
		c.register(p, h.srv.URL)
		_, err := p.Pay("", 500, apipixtest.Payer{}, "")
		is.NoErr(err)
		is.Equal(p.Notifications(), 0) // only Pix with a txid are notified
	})
	t.Run("Errors", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		h := newHook(t)
		h.status = http.StatusInternalServerError
		c.register(p, h.srv.URL)
		_, err := p.Pay("estatico1", 500, apipixtest.Payer{}, "")
		is.NoErr(err)                      // the Pix is received all the same
		is.Equal(len(p.NotifyErrors()), 1) // and the failed POST told
		is.Equal(len(p.Received()), 1)
	})
	t.Run("WebhookRoutes", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, _ := c.do("GET", "/v2/webhook/"+p.PixKey(), "")
		is.Equal(status, http.StatusNotFound) // none yet
		c.register(p, "https://example.com/hook")
		status, w := c.do("GET", "/v2/webhook/"+p.PixKey(), "")
		is.Equal(status, http.StatusOK)
		is.Equal(w["webhookUrl"], "https://example.com/hook")
		status, _ = c.do("DELETE", "/v2/webhook/"+p.PixKey(), "")
		is.Equal(status, http.StatusNoContent)
		is.Equal(p.WebhookURL(), "")
		noViolations(t, p)
		status, _ = c.do("GET", "/v2/webhook/outra@psp.example.com", "")
		is.Equal(status, http.StatusNotFound) // nothing registered for a key of somebody else
		noViolations(t, p)
		status, _ = c.do("PUT", "/v2/webhook/outra@psp.example.com", `{"webhookUrl":"https://example.com/hook"}`)
		is.Equal(status, http.StatusBadRequest) // a key of somebody else
		is.Equal(len(p.Violations()), 1)
	})
}

func TestPSP_Receive(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	at := time.Date(2026, 11, 22, 12, 0, 0, 1, time.FixedZone("BRT", -3*60*60))
	px := rail.ReceivedPix{EndToEndID: "E12345678202611221500abcdefghijk", TxID: "estatico1", Key: p.PixKey(),
		Value: 123, At: at, PayerName: "Ana", PayerTaxID: "11222333000181", Message: "oi"}
	p.Receive(px)
	again := px
	again.Value = 999
	p.Receive(again) // the same Pix delivered again
	got := p.Received()
	is.Equal(len(got), 1)        // one Pix
	is.True(got[0].At.Equal(at)) // exactly as given
	got[0].At = at
	is.Equal(got[0], px)

	c := dial(t, p)
	status, body := c.do("GET", "/v2/pix/"+px.EndToEndID, "")
	is.Equal(status, http.StatusOK)
	is.Equal(body["horario"], "2026-11-22T15:00:00.000000001Z")            // to the nanosecond, in UTC
	is.Equal(field(body, "gnExtras", "pagador", "cnpj"), "11222333000181") // a company paid
	status, _ = c.do("GET", "/v2/pix/E12345678202611221500zzzzzzzzzzz", "")
	is.Equal(status, http.StatusNotFound)
	noViolations(t, p)
}

func TestPSP_ListPix(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	from := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var want []string
	add := func(n int, at time.Time, in bool) {
		e2e := fmt.Sprintf("E12345678%s%011d", at.UTC().Format("200601021504"), n)
		p.Receive(rail.ReceivedPix{EndToEndID: e2e, TxID: fmt.Sprintf("t%d", n), Value: 100, At: at})
		if in {
			want = append(want, e2e)
		}
	}
	add(1, from.Add(-time.Nanosecond), false)
	for n := 9; n >= 2; n-- {
		add(n, from.Add(10*time.Minute), true) // eight at one instant, received in reverse
	}
	add(10, from, true)                   // at inicio: in
	add(11, from.Add(time.Hour), true)    // at fim: in, fim is inclusive
	add(12, from.Add(time.Hour+1), false) // after fim
	// Oldest first, ties by endToEndId.
	want = []string{want[8], want[7], want[6], want[5], want[4], want[3], want[2], want[1], want[0], want[9]}

	c := dial(t, p)
	q := url.Values{"inicio": {"2026-11-22T09:00:00-03:00"}, "fim": {"2026-11-22T13:00:00Z"}, "paginacao.itensPorPagina": {"4"}}
	var got []string
	for page := 0; ; page++ {
		q.Set("paginacao.paginaAtual", fmt.Sprint(page))
		status, body := c.do("GET", "/v2/pix?"+q.Encode(), "")
		is.Equal(status, http.StatusOK)
		is.Equal(field(body, "parametros", "paginacao", "quantidadeDePaginas"), 3.0)
		is.Equal(field(body, "parametros", "paginacao", "quantidadeTotalDeItens"), 10.0)
		pix, _ := body["pix"].([]any)
		for _, x := range pix {
			got = append(got, x.(map[string]any)["endToEndId"].(string))
		}
		if page == 2 {
			is.Equal(len(pix), 2) // the last page holds the rest
			break
		}
		is.Equal(len(pix), 4) // a full page
	}
	is.Equal(got, want) // every Pix of the window once, oldest first, ties in a stable order

	q.Set("paginacao.paginaAtual", "3")
	_, body := c.do("GET", "/v2/pix?"+q.Encode(), "")
	is.Equal(len(body["pix"].([]any)), 0) // past the last page: none
	q.Set("txid", "t10")
	q.Set("paginacao.paginaAtual", "0")
	_, body = c.do("GET", "/v2/pix?"+q.Encode(), "")
	is.Equal(len(body["pix"].([]any)), 1) // filtered by txid
	noViolations(t, p)

	status, body := c.do("GET", "/v2/pix?fim=2026-11-22T13:00:00Z", "")
	is.Equal(status, http.StatusBadRequest)                                           // inicio is required
	is.Equal(body["type"], "https://pix.bcb.gov.br/api/v2/error/PixConsultaInvalida") // the standard's error
	is.Equal(len(p.Violations()), 1)
}

package apipixtest_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

func TestPSP_Refund(t *testing.T) {
	// setup starts a PSP that received a Pix of R$ 10,00, and returns the path of its
	// refunds. When the test ends it checks that the test's requests broke no rule.
	setup := func(t *testing.T) (*apipixtest.PSP, *apipixtest.Clock, *client, string) {
		p, clk := newPSP(t, apipixtest.Options{SettleDelay: 5 * time.Second})
		t.Cleanup(func() { noViolations(t, p) })
		px, err := p.Pay("estatico1", 10_00, apipixtest.Payer{}, "")
		is.New(t).NoErr(err)
		return p, clk, dial(t, p), "/v2/pix/" + px.EndToEndID + "/devolucao/"
	}
	t.Run("Idempotent", func(t *testing.T) {
		is := is.New(t)
		p, clk, c, path := setup(t)
		status, rf := c.do("PUT", path+"d1", `{"valor":"4.00","descricao":"troca"}`)
		is.Equal(status, http.StatusCreated)       // asked
		is.Equal(rf["status"], "EM_PROCESSAMENTO") // until SettleDelay has passed
		rtr, _ := rf["rtrId"].(string)
		is.Equal(len(rtr), 32)
		is.Equal(rtr[0], byte('D')) // a return's id
		status, again := c.do("PUT", path+"d1", `{"valor":"4.00","descricao":"troca"}`)
		is.Equal(status, http.StatusCreated) // the same request again
		is.Equal(again["rtrId"], rtr)        // is the same refund
		status, _ = c.do("PUT", path+"d1", `{"valor":"5.00"}`)
		is.Equal(status, http.StatusBadRequest) // the id of another refund
		clk.Advance(5 * time.Second)
		status, rf = c.do("GET", path+"d1", "")
		is.Equal(status, http.StatusOK)
		is.Equal(rf["status"], "DEVOLVIDO") // settled by the clock
		is.Equal(field(rf, "horario", "liquidacao"), "2026-11-23T15:00:05Z")
		got, ok := p.Refund(rtrPix(path), "d1")
		is.True(ok)
		is.Equal(got, "DEVOLVIDO")
	})
	t.Run("OverTotal", func(t *testing.T) {
		is := is.New(t)
		_, _, c, path := setup(t)
		status, _ := c.do("PUT", path+"d1", `{"valor":"6.00"}`)
		is.Equal(status, http.StatusCreated)
		status, body := c.do("PUT", path+"d2", `{"valor":"4.01"}`)
		is.Equal(status, http.StatusBadRequest)                                            // more than the Pix in all
		is.Equal(body["type"], "https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida") // the standard's error
		status, _ = c.do("PUT", path+"d2", `{"valor":"4.00"}`)
		is.Equal(status, http.StatusCreated) // up to the Pix's value
	})
	t.Run("FailedRefundFreesItsValue", func(t *testing.T) {
		is := is.New(t)
		_, clk, c, path := setup(t)
		status, _ := c.do("PUT", path+"d1", `{"valor":"6.66"}`)
		is.Equal(status, http.StatusCreated)
		clk.Advance(5 * time.Second)
		status, rf := c.do("GET", path+"d1", "")
		is.Equal(status, http.StatusOK)
		is.Equal(rf["status"], "NAO_REALIZADO") // apipixtest.RefundFails
		is.True(rf["motivo"] != nil)            // says why
		status, _ = c.do("PUT", path+"d2", `{"valor":"10.00"}`)
		is.Equal(status, http.StatusCreated) // a refund that failed counts for nothing
	})
	t.Run("NinetyDays", func(t *testing.T) {
		is := is.New(t)
		p, clk, c, path := setup(t)
		clk.Advance(90*24*time.Hour + time.Second)
		c.token = fetchToken(t, p, c.hc, "application/json", `{"grant_type":"client_credentials"}`)
		status, _ := c.do("PUT", path+"d1", `{"valor":"1.00"}`)
		is.Equal(status, http.StatusBadRequest) // too late
	})
	t.Run("UnknownPix", func(t *testing.T) {
		is := is.New(t)
		_, _, c, _ := setup(t)
		status, _ := c.do("PUT", "/v2/pix/E12345678202611221500zzzzzzzzzzz/devolucao/d1", `{"valor":"1.00"}`)
		is.Equal(status, http.StatusNotFound)
		status, _ = c.do("GET", "/v2/pix/E12345678202611221500zzzzzzzzzzz/devolucao/d1", "")
		is.Equal(status, http.StatusNotFound)
	})
}

// rtrPix is the endToEndId in a refund path.
func rtrPix(path string) string { return path[len("/v2/pix/") : len("/v2/pix/")+32] }

func sendBody(key string) string {
	return `{"valor":"12.34","pagador":{"chave":"pix@psp.example.com","infoPagador":"pedido 1"},"favorecido":{"chave":"` + key + `"}}`
}

func TestPSP_Send(t *testing.T) {
	// setup starts a PSP with a webhook registered, which sends need. When the test ends
	// it checks that the test's requests broke no rule.
	setup := func(t *testing.T) (*apipixtest.PSP, *apipixtest.Clock, *client) {
		p, clk := newPSP(t, apipixtest.Options{SettleDelay: 5 * time.Second})
		t.Cleanup(func() { noViolations(t, p) })
		c := dial(t, p)
		c.register(p, "https://example.com/hook")
		return p, clk, c
	}
	t.Run("Settles", func(t *testing.T) {
		is := is.New(t)
		p, clk, c := setup(t)
		status, s := c.do("PUT", "/v3/gn/pix/envio1", sendBody("ana@example.com"))
		is.Equal(status, http.StatusCreated)      // accepted
		is.Equal(s["status"], "EM_PROCESSAMENTO") // until SettleDelay has passed
		is.Equal(s["valor"], "12.34")
		e2e, _ := s["e2eId"].(string)
		is.Equal(len(e2e), 32)
		status, again := c.do("PUT", "/v3/gn/pix/envio1", sendBody("ana@example.com"))
		is.Equal(status, http.StatusCreated) // the same send again
		is.Equal(again["e2eId"], e2e)        // is the same Pix
		is.Equal(p.SendCount(), 1)
		status, body := c.do("PUT", "/v3/gn/pix/envio1", sendBody("bia@example.com"))
		is.Equal(status, http.StatusConflict)        // another send under a used idEnvio
		is.Equal(body["nome"], "id_envio_duplicado") // Efí's error
		clk.Advance(5 * time.Second)
		status, s = c.do("GET", "/v2/gn/pix/enviados/id-envio/envio1", "")
		is.Equal(status, http.StatusOK)
		is.Equal(s["status"], "REALIZADO") // settled by the clock
		is.Equal(s["endToEndId"], e2e)
		is.Equal(field(s, "horario", "liquidacao"), "2026-11-23T15:00:05Z")
		is.Equal(field(s, "favorecido", "chave"), "ana@example.com")
		status, _ = c.do("GET", "/v2/gn/pix/enviados/"+e2e, "")
		is.Equal(status, http.StatusOK) // found by its endToEndId too
		st, id, ok := p.Sent("envio1")
		is.True(ok)
		is.Equal(st, "REALIZADO")
		is.Equal(id, e2e)
	})
	t.Run("KeyFails", func(t *testing.T) {
		is := is.New(t)
		_, clk, c := setup(t)
		status, _ := c.do("PUT", "/v3/gn/pix/envio2", sendBody(apipixtest.KeyFails))
		is.Equal(status, http.StatusCreated) // accepted
		clk.Advance(5 * time.Second)
		_, s := c.do("GET", "/v2/gn/pix/enviados/id-envio/envio2", "")
		is.Equal(s["status"], "NAO_REALIZADO") // and failed when it settled
	})
	t.Run("KeyRefused", func(t *testing.T) {
		is := is.New(t)
		p, _, c := setup(t)
		status, body := c.do("PUT", "/v3/gn/pix/envio3", sendBody(apipixtest.KeyRefused))
		is.Equal(status, http.StatusBadRequest)  // refused at once
		is.Equal(body["nome"], "chave_invalida") // Efí's error
		is.Equal(p.SendCount(), 0)               // nothing was sent
		status, body = c.do("GET", "/v2/gn/pix/enviados/id-envio/envio3", "")
		is.Equal(status, http.StatusNotFound)                                                 // unknown
		is.Equal(body["type"], "https://pix.bcb.gov.br/api/v2/error/PixEnviadoNaoEncontrado") // as Efí answers it
	})
	t.Run("BankAccount", func(t *testing.T) {
		is := is.New(t)
		_, _, c := setup(t)
		status, _ := c.do("PUT", "/v3/gn/pix/envio4", `{"valor":"1.00","pagador":{"chave":"pix@psp.example.com"},`+
			`"favorecido":{"contaBanco":{"nome":"Ana","cpf":"52998224725","codigoBanco":"09089356","agencia":"1","conta":"123453","tipoConta":"cacc"}}}`)
		is.Equal(status, http.StatusCreated) // to a bank account
	})
	t.Run("NoWebhook", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, body := c.do("PUT", "/v3/gn/pix/envio5", sendBody("ana@example.com"))
		is.Equal(status, http.StatusBadRequest) // Efí sends only from a key with a webhook
		is.Equal(body["nome"], "chave_sem_webhook")
		is.Equal(p.SendCount(), 0)
	})
	t.Run("SettleAtOnce", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		c.register(p, "https://example.com/hook")
		_, s := c.do("PUT", "/v3/gn/pix/envio6", sendBody("ana@example.com"))
		is.Equal(s["status"], "REALIZADO") // SettleDelay 0 settles at once
	})
}

// Concurrent sends of one idEnvio are one Pix, as concurrent PUTs of one charge are one
// charge.
func TestPSP_Concurrent(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{SettleDelay: time.Second})
	c := dial(t, p)
	c.register(p, "https://example.com/hook")
	const n = 8
	type answer struct {
		status int
		body   map[string]any
		err    error
	}
	put := func(path, body string) answer {
		status, raw, err := c.try("PUT", path, body)
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		return answer{status, m, err}
	}
	sends, cobs := make([]answer, n), make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sends[i] = put("/v3/gn/pix/envio1", sendBody("ana@example.com"))
			cobs[i] = put("/v2/cob/"+txid1, cobBody("10.00"))
		})
	}
	wg.Wait()
	for i := range n {
		is.NoErr(sends[i].err)
		is.NoErr(cobs[i].err)
		is.Equal(sends[i].status, http.StatusCreated)                // every send answered
		is.Equal(sends[i].body["e2eId"], sends[0].body["e2eId"])     // with the one Pix
		is.Equal(cobs[i].status, http.StatusCreated)                 // every PUT answered
		is.Equal(cobs[i].body["location"], cobs[0].body["location"]) // with the one charge
	}
	is.Equal(p.SendCount(), 1)
	ch, _ := p.Charge(txid1)
	is.Equal(ch.Revisao, 0)
	noViolations(t, p)
}

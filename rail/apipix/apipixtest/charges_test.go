package apipixtest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

func TestPSP_Cob(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)

	status, cob := c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusCreated) // created
	is.Equal(cob["txid"], txid1)
	is.Equal(cob["revisao"], 0.0)
	is.Equal(cob["status"], "ATIVA")
	is.Equal(field(cob, "valor", "original"), "10.00")                    // the body is echoed
	is.Equal(field(cob, "solicitacaoPagador"), "pedido 1")                // field for field
	is.Equal(field(cob, "calendario", "expiracao"), 3600.0)               // with the calendar
	is.Equal(field(cob, "calendario", "criacao"), "2026-11-23T15:00:00Z") // made at the PSP's now
	loc, _ := cob["location"].(string)
	is.True(strings.HasPrefix(loc, strings.TrimPrefix(strings.TrimSuffix(p.URL(), "/v2"), "https://")+"/qr/v2/")) // no scheme, as PSPs write it
	is.Equal(field(cob, "loc", "location"), loc)
	is.Equal(field(cob, "loc", "tipoCob"), "cob")
	code, err := brcode.Parse(cob["pixCopiaECola"].(string))
	is.NoErr(err)           // a real BR Code
	is.Equal(code.URL, loc) // of the charge's location
	is.Equal(code.Name, apipixtest.MerchantName)
	status, _ = c.raw("GET", "/"+strings.SplitN(loc, "/", 2)[1], "")
	is.Equal(status, http.StatusNotFound) // the PSP serves no payloads
	noViolations(t, p)                    // but asking is no violation

	status, got := c.do("GET", "/v2/cob/"+txid1, "")
	is.Equal(status, http.StatusOK)
	is.Equal(got["pixCopiaECola"], cob["pixCopiaECola"]) // GET answers the same charge

	status, again := c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusCreated)                   // the same PUT again
	is.Equal(again["revisao"], 0.0)                        // changes nothing
	is.Equal(again["pixCopiaECola"], cob["pixCopiaECola"]) // and answers the same code

	status, revised := c.do("PUT", "/v2/cob/"+txid1, cobBody("12.00"))
	is.Equal(status, http.StatusCreated) // another body revises an ATIVA charge, as the document says
	is.Equal(revised["revisao"], 1.0)
	is.Equal(field(revised, "valor", "original"), "12.00")
	status, old := c.do("GET", "/v2/cob/"+txid1+"?revisao=0", "")
	is.Equal(status, http.StatusOK)
	is.Equal(field(old, "valor", "original"), "10.00") // every revision is kept
	ch, _ := p.Charge(txid1)
	is.Equal(ch.Value, int64(1200))
	is.Equal(string(ch.Body), cobBody("12.00")) // the last PUT's body

	status, removed := c.do("PATCH", "/v2/cob/"+txid1, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	is.Equal(status, http.StatusOK) // removed
	is.Equal(removed["status"], "REMOVIDA_PELO_USUARIO_RECEBEDOR")
	status, _ = c.do("PATCH", "/v2/cob/"+txid1, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	is.Equal(status, http.StatusBadRequest) // a charge no longer ATIVA cannot be changed
	status, _ = c.do("PUT", "/v2/cob/"+txid1, cobBody("12.00"))
	is.Equal(status, http.StatusCreated) // a PUT that changes nothing still answers it
	status, _ = c.do("PUT", "/v2/cob/"+txid1, cobBody("13.00"))
	is.Equal(status, http.StatusBadRequest) // one that would change it is refused
	_, err = p.Pay(txid1, 1200, apipixtest.Payer{}, "")
	is.True(err != nil) // a removed charge takes no payment
	noViolations(t, p)  // none of it broke the standard
}

func TestPSP_CobRefuseTxIDReuse(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{RefuseTxIDReuse: true})
	c := dial(t, p)
	status, _ := c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusCreated)
	status, body := c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusBadRequest)                                           // txid em uso
	is.Equal(body["type"], "https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida") // the standard's error
	noViolations(t, p)                                                                // a refusal, not a violation
}

func TestPSP_PayCob(t *testing.T) {
	is := is.New(t)
	p, clk := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))

	_, err := p.Pay(txid1, 999, apipixtest.Payer{}, "")
	is.True(err != nil) // not the charge's value
	due, err := p.AmountDue(txid1)
	is.NoErr(err)
	is.Equal(due, int64(1000))
	px, err := p.Pay(txid1, 1000, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "obrigada")
	is.NoErr(err)                                                                        // the exact value
	is.Equal(len(px.EndToEndID), 32)                                                     // a Pix network id
	is.True(strings.HasPrefix(px.EndToEndID, "E"+apipixtest.DefaultISPB+"202611231500")) // E, ISPB, yyyyMMddHHmm
	is.Equal(px.Key, p.PixKey())
	is.True(px.At.Equal(t0))

	status, cob := c.do("GET", "/v2/cob/"+txid1, "")
	is.Equal(status, http.StatusOK)
	is.Equal(cob["status"], "CONCLUIDA") // paid
	pix, _ := cob["pix"].([]any)
	is.Equal(len(pix), 1) // with the Pix that paid it
	is.Equal(field(pix[0].(map[string]any), "endToEndId"), px.EndToEndID)
	_, err = p.Pay(txid1, 1000, apipixtest.Payer{}, "")
	is.True(err != nil) // paid once
	status, _ = c.do("PATCH", "/v2/cob/"+txid1, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	is.Equal(status, http.StatusBadRequest) // a paid charge cannot be removed

	const txid3 = "apipixtest0000000000000003"
	status, _ = c.do("PUT", "/v2/cob/"+txid3, `{"calendario":{},"valor":{"original":"0.00","modalidadeAlteracao":1},"chave":"pix@psp.example.com"}`)
	is.Equal(status, http.StatusCreated) // a value the payer chooses
	_, err = p.Pay(txid3, 4321, apipixtest.Payer{}, "")
	is.NoErr(err) // takes any value

	const txid2 = "apipixtest0000000000000002"
	c.do("PUT", "/v2/cob/"+txid2, cobBody("10.00"))
	clk.Advance(time.Hour)
	_, err = p.Pay(txid2, 1000, apipixtest.Payer{}, "")
	is.True(err != nil) // expired after calendario.expiracao
	noViolations(t, p)
}

// cobvBody is a due-date charge of R$ 100,00 due on due.
func cobvBody(due string, valor string) string {
	return `{"calendario":{"dataDeVencimento":"` + due + `","validadeAposVencimento":10},` +
		`"devedor":{"cpf":"52998224725","nome":"Ana","cidade":"Recife"},` +
		`"valor":` + valor + `,"chave":"pix@psp.example.com"}`
}

func TestPSP_CobV(t *testing.T) {
	const terms = `{"original":"100.00","multa":{"modalidade":2,"valorPerc":"2.00"},"juros":{"modalidade":2,"valorPerc":"1.00"},` +
		`"desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2026-11-25","valorPerc":"5.00"},{"data":"2026-11-27","valorPerc":"2.50"}]}}`
	t.Run("Terms", func(t *testing.T) {
		is := is.New(t)
		p, clk := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, cobv := c.do("PUT", "/v2/cobv/"+txid1, cobvBody("2026-11-27", terms))
		is.Equal(status, http.StatusCreated) // a due-date charge
		is.Equal(field(cobv, "loc", "tipoCob"), "cobv")
		is.True(field(cobv, "recebedor", "cnpj") != nil) // names its receiver
		_, err := brcode.Parse(cobv["pixCopiaECola"].(string))
		is.NoErr(err)
		for _, step := range []struct {
			advance time.Duration
			want    int64
		}{
			{0, 95_00},                   // Monday: the first tier's discount
			{2 * 24 * time.Hour, 95_00},  // Wednesday, its last day
			{24 * time.Hour, 97_50},      // Thursday: the second tier's
			{24 * time.Hour, 97_50},      // Friday, the due date
			{4 * 24 * time.Hour, 106_00}, // Tuesday after: 2% fine and 1% a day for 4 days
		} {
			clk.Advance(step.advance)
			got, err := p.AmountDue(txid1)
			is.NoErr(err)
			is.Equal(got, step.want) // the amount of the day
		}
		_, err = p.Pay(txid1, 106_01, apipixtest.Payer{}, "")
		is.True(err != nil) // not the amount of the day
		_, err = p.Pay(txid1, 106_00, apipixtest.Payer{}, "")
		is.NoErr(err) // the amount of the day
		ch, _ := p.Charge(txid1)
		is.Equal(ch.Status, "CONCLUIDA")
		noViolations(t, p)
	})
	t.Run("DueOnWeekendMoves", func(t *testing.T) {
		is := is.New(t)
		p, clk := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, _ := c.do("PUT", "/v2/cobv/"+txid1, cobvBody("2026-11-28", `{"original":"100.00","multa":{"modalidade":1,"valorPerc":"3.00"}}`))
		is.Equal(status, http.StatusCreated)
		clk.Advance(7 * 24 * time.Hour) // Monday after the Saturday due date
		got, err := p.AmountDue(txid1)
		is.NoErr(err)
		is.Equal(got, int64(100_00)) // a due date on a Saturday moves to Monday: no fine
		clk.Advance(24 * time.Hour)
		got, _ = p.AmountDue(txid1)
		is.Equal(got, int64(103_00)) // Tuesday: the fixed fine
		clk.Advance(10 * 24 * time.Hour)
		_, err = p.AmountDue(txid1)
		is.True(err != nil) // past validadeAposVencimento
	})
	t.Run("SamePUTAfterDueDate", func(t *testing.T) {
		is := is.New(t)
		p, clk := newPSP(t, apipixtest.Options{TokenTTL: 30 * 24 * time.Hour})
		c := dial(t, p)
		status, _ := c.do("PUT", "/v2/cobv/"+txid1, cobvBody("2026-11-23", `{"original":"100.00"}`))
		is.Equal(status, http.StatusCreated) // due today
		clk.Advance(2 * 24 * time.Hour)
		status, _ = c.do("PUT", "/v2/cobv/"+txid1, cobvBody("2026-11-23", `{"original":"100.00"}`))
		is.Equal(status, http.StatusCreated) // a retry of the same PUT is answered after the due date
		status, _ = c.do("PUT", "/v2/cobv/"+txid1, cobvBody("2026-11-23", `{"original":"101.00"}`))
		is.Equal(status, http.StatusBadRequest) // a revision to a past due date is not
		noViolations(t, p)
	})
	t.Run("PastDueDate", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, _ := c.do("PUT", "/v2/cobv/"+txid1, cobvBody("2026-11-22", `{"original":"100.00"}`))
		is.Equal(status, http.StatusBadRequest) // due before it is created
		noViolations(t, p)                      // refused, not a violation
	})
	t.Run("NoDevedor", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, body := c.do("PUT", "/v2/cobv/"+txid1, `{"calendario":{"dataDeVencimento":"2026-12-01"},"valor":{"original":"10.00"},"chave":"pix@psp.example.com"}`)
		is.Equal(status, http.StatusBadRequest)                                            // a cobv needs its debtor
		is.Equal(body["type"], "https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida") // the standard's error
		is.Equal(field(body["violacoes"].([]any)[0].(map[string]any), "propriedade"), "cobv.devedor")
		is.Equal(len(p.Violations()), 1) // a violation
		is.True(strings.Contains(p.Violations()[0], "PUT /v2/cobv/"+txid1+": cobv.devedor: is required"))
	})
}

func TestPSP_PatchCob(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	status, cob := c.do("PATCH", "/v2/cob/"+txid1, `{"valor":{"original":"11.00"},"devedor":{"cnpj":"11222333000181","nome":"Loja"}}`)
	is.Equal(status, http.StatusOK)                         // revised
	is.Equal(cob["revisao"], 1.0)                           // a new revision
	is.Equal(field(cob, "valor", "original"), "11.00")      // with the new value
	is.Equal(field(cob, "calendario", "expiracao"), 3600.0) // and the rest as it was
	is.Equal(field(cob, "devedor", "cnpj"), "11222333000181")
	status, _ = c.do("PATCH", "/v2/cob/"+txid1, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR","solicitacaoPagador":"x"}`)
	is.Equal(status, http.StatusBadRequest) // a removal with other changes
	is.Equal(len(p.Violations()), 1)        // breaks the standard
	status, _ = c.do("PATCH", "/v2/cob/apipixtest0000000000000009", `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	is.Equal(status, http.StatusNotFound) // unknown charge
}

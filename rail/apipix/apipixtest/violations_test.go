package apipixtest_test

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

func TestPSP_Violations(t *testing.T) {
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	c.register(p, "https://example.com/hook")
	px, err := p.Pay("estatico1", 10_00, apipixtest.Payer{}, "")
	is.New(t).NoErr(err)
	cob := func(valor, devedor string) string {
		return `{"calendario":{"expiracao":3600},"valor":{"original":"` + valor + `"},"chave":"pix@psp.example.com"` + devedor + `}`
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string // in the violation's description; "" for none
	}{
		{"MoneyOneDecimal", "PUT", "/v2/cob/" + txid1, cob("10.5", ""), 400, "cob.valor.original: does not match"},
		{"MoneyNumber", "PUT", "/v2/cob/" + txid1, `{"calendario":{},"valor":{"original":10.50},"chave":"pix@psp.example.com"}`, 400, "cob.valor.original: must be a string"},
		{"TxIDShort", "PUT", "/v2/cob/abc123", cob("10.00", ""), 400, "txid: does not match"},
		{"RealCPFAccepted", "PUT", "/v2/cob/" + txid1, cob("10.00", `,"devedor":{"cpf":"52998224725","nome":"Ana"}`), 201, ""},
		{"CPFCheckDigit", "PUT", "/v2/cob/" + txid1, cob("10.00", `,"devedor":{"cpf":"52998224724","nome":"Ana"}`), 400, "cob.devedor.cpf: is not a valid CPF"},
		{"CPFAndCNPJ", "PUT", "/v2/cob/" + txid1, cob("10.00", `,"devedor":{"cpf":"52998224725","cnpj":"11222333000181","nome":"Ana"}`), 400, "only one is allowed"},
		{"DevedorWithoutNome", "PUT", "/v2/cob/" + txid1, cob("10.00", `,"devedor":{"cpf":"52998224725"}`), 400, "cob.devedor.nome: is required"},
		{"UnknownField", "PUT", "/v2/cob/" + txid1, cob("10.00", `,"descricao":"x"`), 400, "cob.descricao: is not a field"},
		{"ExpiracaoString", "PUT", "/v2/cob/" + txid1, `{"calendario":{"expiracao":"3600"},"valor":{"original":"1.00"},"chave":"pix@psp.example.com"}`, 400, "cob.calendario.expiracao: must be an integer"},
		{"ExpiracaoZero", "PUT", "/v2/cob/" + txid1, `{"calendario":{"expiracao":0},"valor":{"original":"1.00"},"chave":"pix@psp.example.com"}`, 400, "cob.calendario.expiracao"},
		{"NoCalendario", "PUT", "/v2/cob/" + txid1, `{"valor":{"original":"1.00"},"chave":"pix@psp.example.com"}`, 400, "cob.calendario: is required"},
		{"ZeroValue", "PUT", "/v2/cob/" + txid1, cob("0.00", ""), 400, "is zero"},
		{"AnotherKey", "PUT", "/v2/cob/" + txid1, `{"calendario":{},"valor":{"original":"1.00"},"chave":"outra@psp.example.com"}`, 400, "not a key of this receiver"},
		{"BadJSON", "PUT", "/v2/cob/" + txid1, `{"calendario":`, 400, "not one JSON value"},
		{"TwoValues", "PUT", "/v2/cob/" + txid1, cob("1.00", "") + "{}", 400, "not one JSON value"},
		{"ModalidadeString", "PUT", "/v2/cobv/" + txid1, `{"calendario":{"dataDeVencimento":"2026-12-01"},"devedor":{"cpf":"52998224725","nome":"Ana"},` +
			`"valor":{"original":"10.00","multa":{"modalidade":"2","valorPerc":"2.00"}},"chave":"pix@psp.example.com"}`, 400, "cobv.valor.multa.modalidade: must be an integer"},
		{"DiscountAfterDue", "PUT", "/v2/cobv/" + txid1, `{"calendario":{"dataDeVencimento":"2026-12-01"},"devedor":{"cpf":"52998224725","nome":"Ana"},` +
			`"valor":{"original":"10.00","desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2026-12-02","valorPerc":"1.00"}]}},"chave":"pix@psp.example.com"}`, 400, "after calendario.dataDeVencimento"},
		{"DiscountForm", "PUT", "/v2/cobv/" + txid1, `{"calendario":{"dataDeVencimento":"2026-12-01"},"devedor":{"cpf":"52998224725","nome":"Ana"},` +
			`"valor":{"original":"10.00","desconto":{"modalidade":3,"descontoDataFixa":[{"data":"2026-11-30","valorPerc":"1.00"}]}},"chave":"pix@psp.example.com"}`, 400, "needs valorPerc"},
		{"WrongMethod", "DELETE", "/v2/cob/" + txid1, "", 405, "the method is not one of GET, PATCH, PUT"},
		{"UnknownPath", "GET", "/v2/cobranca/" + txid1, "", 404, "no such path"},
		{"PatchBadStatus", "PATCH", "/v2/cob/" + txid1, `{"status":"CONCLUIDA"}`, 400, "cob.status: must be one of"},
		{"RefundZero", "PUT", "/v2/pix/" + px.EndToEndID + "/devolucao/d1", `{"valor":"0.00"}`, 400, "must be more than zero"},
		{"RefundID", "PUT", "/v2/pix/" + px.EndToEndID + "/devolucao/d-1", `{"valor":"1.00"}`, 400, "id: does not match"},
		{"E2EShape", "GET", "/v2/pix/E123", "", 400, "e2eid: does not match"},
		{"ListNoInicio", "GET", "/v2/pix?fim=2026-11-23T00:00:00Z", "", 400, "inicio: is required"},
		{"ListBadTime", "GET", "/v2/pix?inicio=2026-11-23&fim=2026-11-23T00:00:00Z", "", 400, "inicio: is not an RFC 3339 date-time"},
		{"ListPage", "GET", "/v2/pix?inicio=2026-11-23T00:00:00Z&fim=2026-11-24T00:00:00Z&paginacao.itensPorPagina=1001", "", 400, "paginacao.itensPorPagina"},
		{"ListUnknownParam", "GET", "/v2/pix?inicio=2026-11-23T00:00:00Z&fim=2026-11-24T00:00:00Z&pagina=1", "", 400, "pagina: is not a parameter"},
		{"ListFimBeforeInicio", "GET", "/v2/pix?inicio=2026-11-23T00:00:00Z&fim=2026-11-22T00:00:00Z", "", 400, "fim: is before inicio"},
		{"ListRealCPF", "GET", "/v2/pix?inicio=2026-11-23T00:00:00Z&fim=2026-11-24T00:00:00Z&cpf=52998224725", "", 200, ""},
		{"WebhookURL", "PUT", "/v2/webhook/pix@psp.example.com", `{"webhookUrl":"example.com/hook"}`, 400, "webhook.webhookUrl: must be an absolute"},
		{"SendMoney", "PUT", "/v3/gn/pix/envio1", `{"valor":"12.3","pagador":{"chave":"pix@psp.example.com"},"favorecido":{"chave":"ana@example.com"}}`, 400, ".body.valor: does not match"},
		{"SendTopLevelInfo", "PUT", "/v3/gn/pix/envio1", `{"valor":"12.30","infoPagador":"x","pagador":{"chave":"pix@psp.example.com"},"favorecido":{"chave":"ana@example.com"}}`, 400, ".body.infoPagador: is not a field"},
		{"SendBadKey", "PUT", "/v3/gn/pix/envio1", `{"valor":"12.30","pagador":{"chave":"pix@psp.example.com"},"favorecido":{"chave":"not a key"}}`, 400, ".body.favorecido.chave: is not a Pix key"},
		{"SendKeyAndAccount", "PUT", "/v3/gn/pix/envio1", `{"valor":"12.30","pagador":{"chave":"pix@psp.example.com"},"favorecido":{"chave":"ana@example.com",` +
			`"contaBanco":{"nome":"Ana","cpf":"52998224725","codigoBanco":"09089356","agencia":"1","conta":"1","tipoConta":"cacc"}}}`, 400, "only one is allowed"},
		{"SendPayerKey", "PUT", "/v3/gn/pix/envio1", `{"valor":"12.30","pagador":{"chave":"outra@psp.example.com"},"favorecido":{"chave":"ana@example.com"}}`, 400, "not the key of the authenticated account"},
		{"SendKeyNotCanonical", "PUT", "/v3/gn/pix/envio1", sendBody("Ana@Example.com"), 400, "not in the DICT's form, ana@example.com"},
		{"SendIDShape", "PUT", "/v3/gn/pix/envio-1", sendBody("ana@example.com"), 400, "idEnvio: does not match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := len(p.Violations())
			status, body := c.do(tc.method, tc.path, tc.body)
			is.Equal(status, tc.status) // the answer
			after := p.Violations()
			if tc.want == "" {
				is.Equal(len(after), before) // no violation
				return
			}
			is.Equal(len(after), before+1) // one violation
			v := after[len(after)-1]
			is.True(strings.HasPrefix(v, tc.method+" "+strings.SplitN(tc.path, "?", 2)[0]+": ")) // named by method and path
			if !strings.Contains(v, tc.want) {
				t.Fatalf("violation %q does not say %q", v, tc.want)
			}
			if strings.HasPrefix(tc.path, "/v3/") && status == 400 {
				is.True(body["nome"] != nil) // Efí's routes answer Efí's errors
			} else {
				is.Equal(body["status"], float64(status)) // RFC 7807
				is.True(strings.HasPrefix(body["type"].(string), "https://pix.bcb.gov.br/api/v2/error/") || body["type"] == "about:blank")
			}
		})
	}
}

// Junk in every route is answered, never a dropped connection (which is what a panic in
// a handler would give).
func TestPSP_Junk(t *testing.T) {
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	paths := []string{"/v2/cob/" + txid1, "/v2/cobv/" + txid1, "/v2/pix", "/v2/pix/E12345678202611221500abcdefghijk",
		"/v2/pix/E12345678202611221500abcdefghijk/devolucao/1", "/v2/webhook/pix@psp.example.com",
		"/v3/gn/pix/envio1", "/v2/gn/pix/enviados/id-envio/envio1", "/v2/gn/pix/enviados/E12345678202611221500abcdefghijk", "/oauth/token"}
	bodies := []string{"", "null", "[]", "1", `"x"`, "{}", `{"valor":null}`, `{"valor":{}}`, `{"calendario":[]}`,
		`{"valor":{"original":"1.00"},"calendario":{"dataDeVencimento":"2026-02-30"},"devedor":{"cpf":1},"chave":{}}`,
		`{"valor":"1.00","pagador":[],"favorecido":{"contaBanco":"x"}}`, `{"valor":{"original":"99999999999.00"}}`,
		`{"valor":{"original":"1.00","desconto":{"modalidade":2,"descontoDataFixa":[{},{"data":1}]}}}`, "\xff\xfe", strings.Repeat("[", 10000)}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, path := range paths {
		for _, method := range []string{"GET", "PUT", "PATCH", "POST", "DELETE"} {
			for _, body := range bodies {
				status, _ := c.raw(method, path+junkQuery(rnd), body)
				if status < 200 || status > 499 {
					t.Fatalf("%s %s %q: %d", method, path, body, status)
				}
			}
		}
	}
}

func junkQuery(rnd *rand.Rand) string {
	qs := []string{"", "?revisao=x", "?inicio=2026-11-23T00:00:00Z&fim=x", "?paginacao.paginaAtual=-1&inicio=a&fim=b", "?revisao=99999999999"}
	return qs[rnd.IntN(len(qs))]
}

func TestPSP_BodyLimit(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	status, _ := c.raw("PUT", "/v2/cob/"+txid1, `{"x":"`+strings.Repeat("a", 1<<20)+`"}`)
	is.Equal(status, http.StatusRequestEntityTooLarge) // over 1 MiB
	is.Equal(len(p.Violations()), 1)
}

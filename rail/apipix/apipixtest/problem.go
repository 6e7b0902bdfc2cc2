package apipixtest

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// errorType is one of the standard's error types: the type URI's last segment, its HTTP
// status and the title and detail its examples give.
type errorType struct {
	name          string
	status        int
	title, detail string
}

// The error types the PSP answers, as the document names and describes them.
var (
	errRequisicaoInvalida        = errorType{"RequisicaoInvalida", 400, "Requisição inválida.", "A requisição não respeita o _schema_ da API Pix."}
	errAcessoNegado              = errorType{"AcessoNegado", 403, "Acesso Negado", "Requisição de participante autenticado que viola alguma regra de autorização."}
	errNaoEncontrado             = errorType{"NaoEncontrado", 404, "Não Encontrado", "Entidade não encontrada."}
	errPermanentementeRemovido   = errorType{"PermanentementeRemovido", 410, "Permanentemente Removido", "A entidade existia, mas foi permanentemente removida."}
	errErroInternoDoServidor     = errorType{"ErroInternoDoServidor", 500, "Erro Interno do Servidor", "Condição inesperada ao processar requisição."}
	errServicoIndisponivel       = errorType{"ServicoIndisponivel", 503, "Serviço Indisponível", "Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento."}
	errTempoEsgotado             = errorType{"IndisponibilidadePorTempoEsgotado", 504, "Tempo Esgotado", "O serviço demorou além do esperado para retornar."}
	errCobNaoEncontrado          = errorType{"CobNaoEncontrado", 404, "Cobrança não encontrada.", "Cobrança não encontrada para o txid informado."}
	errCobOperacaoInvalida       = errorType{"CobOperacaoInvalida", 400, "Cobrança inválida.", "A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o _schema_ ou está semanticamente errada."}
	errCobConsultaInvalida       = errorType{"CobConsultaInvalida", 400, "Consulta inválida.", "Os parâmetros de consulta não respeitam o _schema_ ou não fazem sentido semanticamente."}
	errCobVNaoEncontrada         = errorType{"CobVNaoEncontrada", 404, "Cobrança não encontrada.", "Cobrança com vencimento não encontrada para o txid informado."}
	errCobVOperacaoInvalida      = errorType{"CobVOperacaoInvalida", 400, "Cobrança inválida.", "A requisição que busca alterar ou criar uma cobrança com vencimento não respeita o _schema_ ou está semanticamente errada."}
	errCobVConsultaInvalida      = errorType{"CobVConsultaInvalida", 400, "Consulta inválida.", "Os parâmetros de consulta não respeitam o _schema_ ou não fazem sentido semanticamente."}
	errPixNaoEncontrado          = errorType{"PixNaoEncontrado", 404, "Pix não encontrado.", "Pix não encontrado para o e2eid informado."}
	errPixConsultaInvalida       = errorType{"PixConsultaInvalida", 400, "Consulta inválida.", "Os parâmetros de consulta à lista de pix recebidos não respeitam o _schema_ ou não fazem sentido semanticamente."}
	errPixDevolucaoNaoEncontrada = errorType{"PixDevolucaoNaoEncontrada", 404, "Devolução não encontrada.", "Devolução não encontrada para o e2eid informado."}
	errPixDevolucaoInvalida      = errorType{"PixDevolucaoInvalida", 400, "Devolução inválida.", "A presente requisição de devolução não respeita o _schema_ ou não faz sentido semanticamente."}
	errWebhookOperacaoInvalida   = errorType{"WebhookOperacaoInvalida", 400, "Webhook inválido.", "A presente requisição busca criar um webhook sem respeitar o _schema_ ou, ainda, com sentido semanticamente inválido."}
	errWebhookNaoEncontrado      = errorType{"WebhookNaoEncontrado", 404, "Webhook não encontrado.", "O webhook denotado por {chave} não encontra-se estabelecido."}
	errCobPayloadNaoEncontrado   = errorType{"CobPayloadNaoEncontrado", 404, "Cobrança não encontrada.", "apipixtest does not serve the payloads of its locations."}
	errPixEnviadoNaoEncontrado   = errorType{"PixEnviadoNaoEncontrado", 404, "Não Encontrado", "Pix enviado não encontrado para o identificador informado."}
	errMetodoNaoPermitido        = errorType{"", 405, "Method Not Allowed", "The standard defines no such method on this path."}
	errCorpoGrandeDemais         = errorType{"", 413, "Payload Too Large", "The body is larger than 1 MiB."}
	errNaoAutorizado             = errorType{"", 401, "Unauthorized", "A valid Bearer token is required."}
)

// errorTypeByStatus is the general error type of a status, for FailNext.
var errorTypeByStatus = map[int]errorType{
	400: errRequisicaoInvalida, 403: errAcessoNegado, 404: errNaoEncontrado, 410: errPermanentementeRemovido,
	500: errErroInternoDoServidor, 503: errServicoIndisponivel, 504: errTempoEsgotado,
}

const (
	errorTypeBase      = "https://pix.bcb.gov.br/api/v2/error/"
	errorTypeNone      = "about:blank" // RFC 7807's type of an error with no more meaning than its status
	problemContentType = "application/problem+json"
)

// problem is an RFC 7807 body as the standard shapes it.
type problem struct {
	Type      string      `json:"type"`
	Title     string      `json:"title"`
	Status    int         `json:"status"`
	Detail    string      `json:"detail,omitempty"`
	Violacoes []violation `json:"violacoes,omitempty"`
}

// problemOf is the body of an error of type t. A status the standard gives no type of
// (401, 405, 413, 429...) is RFC 7807's "about:blank".
func problemOf(t errorType, vs []violation) problem {
	typ := errorTypeNone
	if t.name != "" {
		typ = errorTypeBase + t.name
	}
	return problem{Type: typ, Title: t.title, Status: t.status, Detail: t.detail, Violacoes: vs}
}

// statusProblem is the body of FailNext's status.
func statusProblem(status int) problem {
	if t, ok := errorTypeByStatus[status]; ok {
		return problemOf(t, nil)
	}
	title := http.StatusText(status)
	if title == "" {
		title = "Error " + strconv.Itoa(status)
	}
	return problem{Type: errorTypeNone, Title: title, Status: status, Detail: "apipixtest failed this request on purpose (FailNext)."}
}

// efiError is the body of an error of Efí's own endpoints.
type efiError struct {
	Nome     string     `json:"nome"`
	Mensagem string     `json:"mensagem"`
	Erros    []efiCause `json:"erros,omitempty"`
}

// efiCause is one schema error in Efí's json_invalido body.
type efiCause struct {
	Chave    string `json:"chave"`
	Caminho  string `json:"caminho"`
	Mensagem string `json:"mensagem"`
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// call is one request on its way through a route: its body, read once, and the writers
// of its answers.
type call struct {
	p    *PSP
	w    http.ResponseWriter
	r    *http.Request
	body []byte
	// efi says the route is Efí's: its schema errors are Efí's json_invalido bodies.
	efi bool
}

// ok answers v as JSON.
func (c *call) ok(status int, v any) { writeJSON(c.w, status, "application/json", v) }

// refuse answers an error of type t without counting it a violation: an answer a correct
// client can get.
func (c *call) refuse(t errorType, vs ...violation) {
	writeJSON(c.w, t.status, problemContentType, problemOf(t, vs))
}

// reject answers a request that broke the standard and records it (see Violations).
// Efí's routes answer Efí's json_invalido; the others the standard's error of type t.
func (c *call) reject(t errorType, vs []violation) {
	c.p.addViolation(c.r, vs)
	if c.efi {
		c.efiReject(vs)
		return
	}
	writeJSON(c.w, t.status, problemContentType, problemOf(t, vs))
}

func (c *call) efiReject(vs []violation) {
	causes := make([]efiCause, len(vs))
	for i, v := range vs {
		causes[i] = efiCause{Chave: v.keyword, Caminho: v.Propriedade, Mensagem: v.Razao}
	}
	c.efiFail(http.StatusBadRequest, efiError{Nome: "json_invalido", Mensagem: "Valores ou tipos de campo inválidos", Erros: causes})
}

func (c *call) efiFail(status int, e efiError) { writeJSON(c.w, status, "application/json", e) }

package httpadapter

import (
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
)

// pageText is the wording of the payment link pages in one language.
type pageText struct {
	Lang                                       string // the html lang attribute
	Title, PayTo, Value, AnyAmount, DueDate    string
	OriginalValue, TimeLeft, Days              string
	Waiting, Paid, Expired                     string
	PaidNote, ExpiredNote                      string // under the status once it is final
	HowToPay, Step1, Step2, QRAlt              string
	CopyPaste, Copy, Copied, CopyFailed        string
	Sandbox, SandboxNote, Simulate, Simulating string
	SimulateFailed, Simulated, Footer          string
	NotFoundTitle, NotFoundText                string
	dateLayout                                 string // time.Format layout of a calendar day
}

// status is the wording of s.
func (t pageText) status(s payments.PaymentLinkStatus) string {
	switch s {
	case payments.PaymentLinkPaid:
		return t.Paid
	case payments.PaymentLinkExpired:
		return t.Expired
	default:
		return t.Waiting
	}
}

// doneNote is the note under a final status: "" while waiting.
func (t pageText) doneNote(s payments.PaymentLinkStatus) string {
	switch s {
	case payments.PaymentLinkPaid:
		return t.PaidNote
	case payments.PaymentLinkExpired:
		return t.ExpiredNote
	default:
		return ""
	}
}

// date formats the calendar day of d in Brasília, as a payer in Brazil reads a due date
// (and as the Service counts subscription periods): a fixed UTC-3, with no daylight
// saving since 2019. The Service keeps time in UTC, so a due time after 21:00 Brasília is
// on the next UTC day.
func (t pageText) date(d time.Time) string {
	return d.In(brasilia).Format(t.dateLayout)
}

// brasilia is Brasília time, UTC-3.
var brasilia = time.FixedZone("BRT", -3*60*60)

// textPT is the default wording: Brazilian Portuguese.
var textPT = pageText{
	Lang:           "pt-BR",
	Title:          "Pagar com Pix",
	PayTo:          "Pagamento para",
	Value:          "Valor",
	AnyAmount:      "Valor livre",
	DueDate:        "Vencimento",
	OriginalValue:  "Valor original",
	TimeLeft:       "Expira em",
	Days:           "d",
	Waiting:        "Aguardando pagamento",
	Paid:           "Pago",
	Expired:        "Expirado",
	PaidNote:       "Pagamento recebido. Obrigado!",
	ExpiredNote:    "Este link não aceita mais pagamentos. Peça um novo link a quem fez a cobrança.",
	HowToPay:       "Como pagar",
	Step1:          "Abra o app do seu banco e escolha pagar com Pix.",
	Step2:          "Leia o QR Code ou cole o código Pix Copia e Cola.",
	QRAlt:          "QR Code Pix deste pagamento",
	CopyPaste:      "Pix Copia e Cola",
	Copy:           "Copiar código Pix",
	Copied:         "Código copiado.",
	CopyFailed:     "Não foi possível copiar: selecione o código e copie.",
	Sandbox:        "Ambiente de testes",
	SandboxNote:    "Nenhum dinheiro de verdade é movimentado aqui.",
	Simulate:       "Simular pagamento",
	Simulating:     "Simulando o pagamento…",
	SimulateFailed: "A simulação falhou:",
	Simulated:      "Pagamento simulado.",
	Footer:         "Esta página se atualiza sozinha quando o pagamento chega.",
	NotFoundTitle:  "Link de pagamento não encontrado",
	NotFoundText:   "Este link não existe ou foi cancelado. Confira o endereço ou peça um novo link a quem fez a cobrança.",
	dateLayout:     "02/01/2006",
}

// textEN is the wording for browsers that prefer English.
var textEN = pageText{
	Lang:           "en",
	Title:          "Pay with Pix",
	PayTo:          "Payment to",
	Value:          "Amount",
	AnyAmount:      "Any amount",
	DueDate:        "Due date",
	OriginalValue:  "Original amount",
	TimeLeft:       "Expires in",
	Days:           "d",
	Waiting:        "Waiting for payment",
	Paid:           "Paid",
	Expired:        "Expired",
	PaidNote:       "Payment received. Thank you!",
	ExpiredNote:    "This link no longer takes payments. Ask whoever sent it for a new one.",
	HowToPay:       "How to pay",
	Step1:          "Open your bank's app and choose to pay with Pix.",
	Step2:          "Scan the QR code or paste the Pix copy-and-paste code.",
	QRAlt:          "Pix QR code for this payment",
	CopyPaste:      "Pix copy-and-paste code",
	Copy:           "Copy Pix code",
	Copied:         "Code copied.",
	CopyFailed:     "Could not copy: select the code and copy it.",
	Sandbox:        "Sandbox",
	SandboxNote:    "No real money moves here.",
	Simulate:       "Simulate payment",
	Simulating:     "Simulating the payment…",
	SimulateFailed: "The simulation failed:",
	Simulated:      "Payment simulated.",
	Footer:         "This page updates by itself when the payment arrives.",
	NotFoundTitle:  "Payment link not found",
	NotFoundText:   "This link does not exist or was cancelled. Check the address, or ask whoever sent it for a new link.",
	dateLayout:     "Jan 2, 2006",
}

// pageLanguage chooses the page's wording from an Accept-Language header: English when
// the browser ranks an English tag (en, en-US, ...) above every Portuguese one, Portuguese
// otherwise (no header, a header naming neither, a tie, a malformed one). Tags with q=0
// are refused ones; a missing q is 1; "*" names neither.
func pageLanguage(header string) pageText {
	bestPT, bestEN := -1.0, -1.0
	for part := range strings.SplitSeq(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		if q == 0 {
			continue
		}
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		switch primary {
		case "pt":
			bestPT = max(bestPT, q)
		case "en":
			bestEN = max(bestEN, q)
		}
	}
	if bestEN > bestPT {
		return textEN
	}
	return textPT
}

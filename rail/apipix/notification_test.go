package apipix_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/apipix"
)

// notification is a PSP's POST to the webhook with two Pix, the first with a refund that
// settled, as the standard's document shows them (and Efí's gnExtras with the payer).
const notification = `{"pix":[
 {"endToEndId":"E12345678202009091221abcdef12345","txid":"cd1fe328c875481285a6f233ae41b662","valor":"100.00",
  "chave":"pix@psp.example.com","horario":"2020-09-10T13:03:33.902Z","infoPagador":"Reforma da casa",
  "devolucoes":[{"id":"000AAA111","rtrId":"D12345678202009091000abcde123456","valor":"11.00",
   "horario":{"solicitacao":"2020-09-10T13:03:33.902Z","liquidacao":"2020-09-10T13:03:34Z"},"status":"DEVOLVIDO"}],
  "gnExtras":{"pagador":{"nome":"Gorbadoc Oldbuck","cpf":"52998224725"}}},
 {"endToEndId":"E09089356202611221200abcdefghijk","txid":"abc","valor":"0.01","horario":"2026-11-22T09:00:00-03:00",
  "pagador":{"nome":"Empresa","cnpj":"11222333000181"},"componentesValor":{"original":{"valor":"0.01"}}}
]}`

func TestParseNotification(t *testing.T) {
	is := is.New(t)
	n, err := apipix.ParseNotification([]byte(notification))
	is.NoErr(err) // the standard's notification
	is.Equal(len(n.Pix), 2)
	is.Equal(n.Pix[0], rail.ReceivedPix{
		EndToEndID: "E12345678202009091221abcdef12345", TxID: "cd1fe328c875481285a6f233ae41b662", Key: "pix@psp.example.com",
		Value: 10000, At: n.Pix[0].At, PayerName: "Gorbadoc Oldbuck", PayerTaxID: "52998224725", Message: "Reforma da casa",
	}) // every field read
	is.True(n.Pix[0].At.Equal(time.Date(2020, 9, 10, 13, 3, 33, 902e6, time.UTC)))
	is.Equal(n.Pix[1].TxID, "abc") // a static QR code's short txid is taken
	is.Equal(n.Pix[1].Value, int64(1))
	is.Equal(n.Pix[1].PayerTaxID, "11222333000181")
	is.True(n.Pix[1].At.Equal(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))) // an offset is read as the instant it is

	is.Equal(len(n.Refunds), 1)
	r := n.Refunds[0]
	is.Equal(r.EndToEndID, "E12345678202009091221abcdef12345") // of the Pix refunded
	is.Equal(r.ID, "000AAA111")                                // the devolução id
	is.Equal(r.Settlement.Status, rail.SettlementConfirmed)
	is.Equal(r.Settlement.EndToEndID, "D12345678202009091000abcde123456") // the rtrId

	n, err = apipix.ParseNotification([]byte(`{"pix":[{"endToEndId":"E12345678202009091221abcdef12345","txid":"***","valor":"1.00","horario":"2020-09-10T13:03:33Z"}]}`))
	is.NoErr(err)
	is.Equal(n.Pix[0].TxID, "") // "***" is a static code's no txid

	n, err = apipix.ParseNotification([]byte(`{"pix":[]}`))
	is.NoErr(err)
	is.Equal(len(n.Pix), 0) // an empty batch is no error
}

func TestParseNotification_Malformed(t *testing.T) {
	pix := func(field, value string) string {
		f := map[string]string{
			"endToEndId": `"E12345678202009091221abcdef12345"`,
			"txid":       `"cd1fe328c875481285a6f233ae41b662"`,
			"valor":      `"100.00"`,
			"horario":    `"2020-09-10T13:03:33.902Z"`,
		}
		if value == "" {
			delete(f, field)
		} else {
			f[field] = value
		}
		var parts []string
		for k, v := range f {
			parts = append(parts, `"`+k+`":`+v)
		}
		return `{"pix":[{` + strings.Join(parts, ",") + `}]}`
	}
	cases := []struct {
		name, body, names string
	}{
		{"Empty", ``, "pix"},
		{"NotJSON", `pix=1`, "pix"},
		{"NoPix", `{"evento":"teste_webhook"}`, "pix"},
		{"PixNull", `{"pix":null}`, "pix"},
		{"PixNotArray", `{"pix":{}}`, "pix"},
		{"Trailing", `{"pix":[]} {}`, "JSON"},
		{"ShortEndToEnd", pix("endToEndId", `"E123"`), "endToEndId"},
		{"NoEndToEnd", pix("endToEndId", ""), "endToEndId"},
		{"EndToEndNotE", pix("endToEndId", `"D12345678202009091221abcdef12345"`), "endToEndId"},
		{"ValorFloat", pix("valor", `100.5`), "pix"},
		{"ValorOneDecimal", pix("valor", `"100.5"`), "valor"},
		{"ValorComma", pix("valor", `"100,50"`), "valor"},
		{"ValorNegative", pix("valor", `"-1.00"`), "valor"},
		{"NoValor", pix("valor", ""), "valor"},
		{"HorarioNotRFC3339", pix("horario", `"10/09/2020 13:03"`), "horario"},
		{"NoHorario", pix("horario", ""), "horario"},
		{"TxIDTooLong", pix("txid", `"`+strings.Repeat("a", 36)+`"`), "txid"},
		{"TxIDDash", pix("txid", `"a-b"`), "txid"},
		{"RefundBadValor", `{"pix":[{"endToEndId":"E12345678202009091221abcdef12345","valor":"1.00","horario":"2020-09-10T13:03:33Z",
			"devolucoes":[{"id":"1","rtrId":"D12345678202009091000abcde123456","valor":"1","status":"DEVOLVIDO"}]}]}`, "devolucoes[0]: valor"},
		{"RefundUnknownStatus", `{"pix":[{"endToEndId":"E12345678202009091221abcdef12345","valor":"1.00","horario":"2020-09-10T13:03:33Z",
			"devolucoes":[{"id":"1","rtrId":"D12345678202009091000abcde123456","valor":"1.00","status":"SUMIU"}]}]}`, "devolucoes[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := apipix.ParseNotification([]byte(tc.body))
			is.True(err != nil)                              // a malformed notification is an error
			is.True(strings.Contains(err.Error(), tc.names)) // that names the field
		})
	}
}

// FuzzParseNotification feeds ParseNotification anything: it never panics, and what it
// accepts is Pix of the network's shape.
func FuzzParseNotification(f *testing.F) {
	f.Add([]byte(notification))
	f.Add([]byte(`{"pix":[]}`))
	f.Add([]byte(`{"pix":[{"endToEndId":"E12345678202009091221abcdef12345","txid":"***","valor":"1.00","horario":"2020-09-10T13:03:33Z","devolucoes":[{}]}]}`))
	f.Add([]byte(`{"pix":[{"valor":1e400}]}`))
	f.Add([]byte(`{"pix":[null]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := apipix.ParseNotification(body)
		if err != nil {
			return
		}
		for _, p := range n.Pix {
			if len(p.EndToEndID) != 32 || p.Value < 0 {
				t.Fatalf("accepted a Pix that is no Pix: %+v", p)
			}
		}
	})
}

// TestParseNotification_SendsAreNotReceived: Efí posts the outcome of a Pix the company
// sent to the same webhook; it is a send's update, never money received.
func TestParseNotification_SendsAreNotReceived(t *testing.T) {
	is := is.New(t)
	n, err := apipix.ParseNotification([]byte(`{"pix":[
		{"endToEndId":"E09089356202611221200abcdefghijk","valor":"5.00","horario":"2026-11-22T12:00:00Z","chave":"bruno@example.com",
		 "tipo":"SOLICITACAO","status":"REALIZADO","gnExtras":{"idEnvio":"6740a3b2c1d0e9f8a7b6c5d4"}},
		{"endToEndId":"E12345678202611221201abcdefghijk","txid":"cd1fe328c875481285a6f233ae41b662","valor":"1.00","horario":"2026-11-22T12:01:00Z"}]}`))
	is.NoErr(err)
	is.Equal(len(n.Pix), 1) // only the Pix received
	is.Equal(n.Pix[0].EndToEndID, "E12345678202611221201abcdefghijk")
	is.Equal(n.Sends, []apipix.SendUpdate{{IDEnvio: "6740a3b2c1d0e9f8a7b6c5d4", EndToEndID: "E09089356202611221200abcdefghijk", Status: "REALIZADO"}})
}

package apipix

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail"
)

func TestValor(t *testing.T) {
	t.Run("Format", func(t *testing.T) {
		is := is.New(t)
		for c, want := range map[int64]string{0: "0.00", 1: "0.01", 99: "0.99", 100: "1.00", 1234: "12.34", maxValor: "9999999999.99"} {
			got, err := formatValor(c)
			is.NoErr(err)
			is.Equal(got, want) // centavos written with two decimals
		}
		_, err := formatValor(maxValor + 1)
		is.True(err != nil) // eleven integer digits do not fit the pattern
		_, err = formatValor(-1)
		is.True(err != nil) // nor a negative amount
	})
	t.Run("Parse", func(t *testing.T) {
		is := is.New(t)
		for s, want := range map[string]int64{"0.00": 0, "0.01": 1, "12.34": 1234, "9999999999.99": maxValor, "007.10": 710} {
			got, err := parseValor(s)
			is.NoErr(err)
			is.Equal(got, want) // read exactly
		}
		for _, s := range []string{"", "1", "1.0", "1.000", "-1.00", "+1.00", "1,00", " 1.00", "1.00 ", "12345678901.00", "1e2.00", "١.٠٠"} {
			_, err := parseValor(s)
			is.True(err != nil) // not the standard's money
		}
	})
}

func TestTruncate(t *testing.T) {
	is := is.New(t)
	is.Equal(truncate("abc", 5), "abc")
	is.Equal(truncate("abcdef", 3), "abc")
	is.Equal(truncate("ção ação", 4), "ção ") // runes, not bytes
	is.Equal(truncate(strings.Repeat("é", 200), 140), strings.Repeat("é", 140))
}

func TestOrderRef(t *testing.T) {
	is := is.New(t)
	is.Equal(OrderRef("0123456789abcdef01234567"), "0123456789abcdef01234567") // the Service's ids are themselves
	is.Equal(OrderRef("A"), "A")
	long := strings.Repeat("a", 36)
	for _, id := range []string{"pay-email", long, "ação", "a b"} {
		ref := OrderRef(id)
		is.Equal(len(ref), 32)               // a 32-character hash
		is.True(refPattern.MatchString(ref)) // that the PSP takes
		is.Equal(OrderRef(id), ref)          // deterministic
		is.True(ref != OrderRef(id+"x"))     // and distinct
	}
}

// httpClientNeverUsed stands in for the HTTP client of a Driver that makes no call.
var httpClientNeverUsed = http.Client{}

// testDriver is a Driver for tests of request bodies: no calls are made.
func testDriver(t *testing.T, now time.Time) *Driver {
	t.Helper()
	d, err := New(Config{
		BaseURL: "https://127.0.0.1:1/v2", ClientID: "id", ClientSecret: "secret",
		PixKey: "pix@psp.example.com", HTTPClient: &httpClientNeverUsed,
		Now: func() time.Time { return now },
	})
	is.New(t).NoErr(err)
	return d
}

// jsonOf is v as a generic JSON value, to compare bodies field by field.
func jsonOf(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	is.New(t).NoErr(err)
	var m map[string]any
	is.New(t).NoErr(json.Unmarshal(b, &m))
	return m
}

func TestChargeRequest(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	d := testDriver(t, now)
	const txid = "abcdefghijklmnopqrstuvwxyz0123"
	t.Run("Cob", func(t *testing.T) {
		is := is.New(t)
		req, err := d.chargeRequest(rail.Charge{TxID: txid, Value: 1050, Expires: now.Add(90*time.Minute + 500*time.Millisecond),
			Message: strings.Repeat("m", 150), PayerName: "Ana", PayerTaxID: "529.982.247-25"})
		is.NoErr(err)
		is.Equal(jsonOf(t, req), map[string]any{
			"calendario":         map[string]any{"expiracao": float64(5400)},
			"devedor":            map[string]any{"cpf": "52998224725", "nome": "Ana"},
			"valor":              map[string]any{"original": "10.50"},
			"chave":              "pix@psp.example.com",
			"solicitacaoPagador": strings.Repeat("m", 140),
		}) // the standard's CobSolicitada
	})
	t.Run("CobMinimal", func(t *testing.T) {
		is := is.New(t)
		req, err := d.chargeRequest(rail.Charge{TxID: txid, Key: "+5511987654321", Value: 1, Expires: now.Add(-time.Hour)})
		is.NoErr(err)
		is.Equal(jsonOf(t, req), map[string]any{
			"calendario": map[string]any{"expiracao": float64(1)}, // at least one second
			"valor":      map[string]any{"original": "0.01"},
			"chave":      "+5511987654321",
		})
	})
	t.Run("CobV", func(t *testing.T) {
		is := is.New(t)
		req, err := d.chargeRequest(rail.Charge{TxID: txid, Value: 10000, PayerName: "Empresa", PayerTaxID: "11222333000181",
			Due: &rail.DueTerms{Date: "2026-12-10", DaysAfter: 30, FineBasisPoints: 200, InterestCentavosPerDay: 33,
				DiscountTiers: []rail.DiscountTier{{Date: "2026-12-01", BasisPoints: 500}, {Date: "2026-12-05", BasisPoints: 250}}}})
		is.NoErr(err)
		is.Equal(jsonOf(t, req), map[string]any{
			"calendario": map[string]any{"dataDeVencimento": "2026-12-10", "validadeAposVencimento": float64(30)},
			"devedor":    map[string]any{"cnpj": "11222333000181", "nome": "Empresa"},
			"valor": map[string]any{
				"original": "100.00",
				"multa":    map[string]any{"modalidade": float64(2), "valorPerc": "2.00"},
				"juros":    map[string]any{"modalidade": float64(1), "valorPerc": "0.33"},
				"desconto": map[string]any{"modalidade": float64(2), "descontoDataFixa": []any{
					map[string]any{"data": "2026-12-01", "valorPerc": "5.00"},
					map[string]any{"data": "2026-12-05", "valorPerc": "2.50"},
				}},
			},
			"chave": "pix@psp.example.com",
		}) // the standard's CobVSolicitada with CobVValor's modalidades
	})
	t.Run("CobVOtherModalidades", func(t *testing.T) {
		is := is.New(t)
		req, err := d.chargeRequest(rail.Charge{TxID: txid, Value: 10000, PayerName: "Ana", PayerTaxID: "52998224725",
			Due: &rail.DueTerms{Date: "2026-12-10", FineCentavos: 150, InterestBasisPointsPerDay: 3, DiscountCentavosPerDay: 10}})
		is.NoErr(err)
		v := jsonOf(t, req)["valor"].(map[string]any)
		is.Equal(v["multa"], map[string]any{"modalidade": float64(1), "valorPerc": "1.50"})    // fixed fine
		is.Equal(v["juros"], map[string]any{"modalidade": float64(2), "valorPerc": "0.03"})    // percent per calendar day
		is.Equal(v["desconto"], map[string]any{"modalidade": float64(3), "valorPerc": "0.10"}) // amount per calendar day of advance

		req, err = d.chargeRequest(rail.Charge{TxID: txid, Value: 10000, PayerName: "Ana", PayerTaxID: "52998224725",
			Due: &rail.DueTerms{Date: "2026-12-10", DiscountBasisPointsPerDay: 5,
				DiscountTiers: nil}})
		is.NoErr(err)
		v = jsonOf(t, req)["valor"].(map[string]any)
		is.Equal(v["desconto"], map[string]any{"modalidade": float64(5), "valorPerc": "0.05"}) // percent per calendar day of advance
		_, hasFine := v["multa"]
		is.True(!hasFine) // no fine, no multa

		req, err = d.chargeRequest(rail.Charge{TxID: txid, Value: 10000, PayerName: "Ana", PayerTaxID: "52998224725",
			Due: &rail.DueTerms{Date: "2026-12-10", DiscountTiers: []rail.DiscountTier{{Date: "2026-12-10", Centavos: 700}}}})
		is.NoErr(err)
		v = jsonOf(t, req)["valor"].(map[string]any)
		is.Equal(v["desconto"], map[string]any{"modalidade": float64(1), "descontoDataFixa": []any{
			map[string]any{"data": "2026-12-10", "valorPerc": "7.00"}}}) // a fixed amount until the date
	})
	t.Run("Invalid", func(t *testing.T) {
		due := func(t rail.DueTerms) *rail.DueTerms { return &t }
		ok := rail.Charge{TxID: txid, Value: 100, Expires: now.Add(time.Hour)}
		cases := []struct {
			name  string
			edit  func(*rail.Charge)
			field string
		}{
			{"ShortTxID", func(c *rail.Charge) { c.TxID = "abc" }, "txid"},
			{"TxIDWithDash", func(c *rail.Charge) { c.TxID = "abcdefghijklmnopqrstuvwxyz-1" }, "txid"},
			{"ZeroValue", func(c *rail.Charge) { c.Value = 0 }, "value"},
			{"HugeValue", func(c *rail.Charge) { c.Value = maxValor + 1 }, "value"},
			{"BadKey", func(c *rail.Charge) { c.Key = "not a key" }, "key"},
			{"BadTaxID", func(c *rail.Charge) { c.PayerName, c.PayerTaxID = "Ana", "52998224726" }, "payer"},
			{"TaxIDWithoutName", func(c *rail.Charge) { c.PayerTaxID = "52998224725" }, "payer"},
			{"DueWithoutPayer", func(c *rail.Charge) { c.Due = due(rail.DueTerms{Date: "2026-12-10"}) }, "payer"},
			{"DueBadDate", func(c *rail.Charge) {
				c.PayerName, c.PayerTaxID, c.Due = "Ana", "52998224725", due(rail.DueTerms{Date: "10/12/2026"})
			}, "due.date"},
			{"FineBoth", func(c *rail.Charge) {
				c.PayerName, c.PayerTaxID, c.Due = "Ana", "52998224725", due(rail.DueTerms{Date: "2026-12-10", FineBasisPoints: 1, FineCentavos: 1})
			}, "due.fine"},
			{"TierAfterDue", func(c *rail.Charge) {
				c.PayerName, c.PayerTaxID, c.Due = "Ana", "52998224725", due(rail.DueTerms{Date: "2026-12-10",
					DiscountTiers: []rail.DiscountTier{{Date: "2026-12-11", Centavos: 1}}})
			}, "due.discount"},
			{"TiersMixed", func(c *rail.Charge) {
				c.PayerName, c.PayerTaxID, c.Due = "Ana", "52998224725", due(rail.DueTerms{Date: "2026-12-10",
					DiscountTiers: []rail.DiscountTier{{Date: "2026-12-01", Centavos: 1}, {Date: "2026-12-02", BasisPoints: 1}}})
			}, "due.discount"},
			{"FourTiers", func(c *rail.Charge) {
				tier := rail.DiscountTier{Date: "2026-12-01", Centavos: 1}
				c.PayerName, c.PayerTaxID, c.Due = "Ana", "52998224725", due(rail.DueTerms{Date: "2026-12-10",
					DiscountTiers: []rail.DiscountTier{tier, tier, tier, tier}})
			}, "due.discount"},
			{"TiersAndPerDay", func(c *rail.Charge) {
				c.PayerName, c.PayerTaxID, c.Due = "Ana", "52998224725", due(rail.DueTerms{Date: "2026-12-10", DiscountCentavosPerDay: 1,
					DiscountTiers: []rail.DiscountTier{{Date: "2026-12-01", Centavos: 1}}})
			}, "due.discount"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := ok
				tc.edit(&c)
				_, err := d.chargeRequest(c)
				var inv *rail.InvalidError
				is.New(t).True(errors.As(err, &inv)) // a *rail.InvalidError
				is.New(t).Equal(inv.Field, tc.field) // on the field at fault
			})
		}
	})
}

func TestListCursor(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 22, 12, 0, 0, 5, time.UTC)
	pix := func(id string, at time.Time) rail.ReceivedPix { return rail.ReceivedPix{EndToEndID: id, At: at} }
	c := listCursor{}.advance([]rail.ReceivedPix{pix("a", at.Add(-time.Second)), pix("b", at), pix("c", at)})
	is.Equal(c.page, 1)
	is.True(c.last.Equal(at))
	is.Equal(c.ids, []string{"b", "c"}) // the Pix listed at the latest instant

	back, err := parseCursor(c.String())
	is.NoErr(err)
	is.Equal(back.page, c.page)
	is.True(back.last.Equal(c.last))
	is.Equal(back.ids, c.ids) // a cursor reads back as written

	is.True(back.seen(pix("z", at.Add(-time.Nanosecond)))) // older: listed before
	is.True(back.seen(pix("b", at)))                       // listed at the instant
	is.True(!back.seen(pix("d", at)))                      // another at the instant is new
	is.True(!back.seen(pix("a", at.Add(time.Nanosecond)))) // later is new

	next := back.advance([]rail.ReceivedPix{pix("c", at), pix("d", at)})
	is.Equal(next.ids, []string{"b", "c", "d"}) // ties accumulate without repeats
	is.Equal(back.ids, []string{"b", "c"})      // and the earlier cursor is untouched

	for _, bad := range []string{"x", "1.2", "-1.0.", "1.x.a", "x.1.a"} {
		_, err := parseCursor(bad)
		is.True(err != nil) // not a cursor
	}
}

func TestSettlement(t *testing.T) {
	is := is.New(t)
	s, err := settlement("EM_PROCESSAMENTO", "REALIZADO", "ref", "E1", "2026-11-22T12:00:00Z", "", "")
	is.NoErr(err)
	is.Equal(s.Status, rail.SettlementPending)
	is.Equal(s.EndToEndID, "") // pending: no Pix out yet
	is.Equal(s.BankRef, "ref")

	s, err = settlement("REALIZADO", "REALIZADO", "ref", "E1", "2026-11-22T12:00:00Z", "2026-11-22T12:00:01.5Z", "")
	is.NoErr(err)
	is.Equal(s.Status, rail.SettlementConfirmed)
	is.Equal(s.EndToEndID, "E1")
	is.True(s.At.Equal(time.Date(2026, 11, 22, 12, 0, 1, 5e8, time.UTC))) // when it settled

	s, err = settlement("NAO_REALIZADO", "REALIZADO", "ref", "E1", "2026-11-22T12:00:00Z", "", "AC03")
	is.NoErr(err)
	is.Equal(s.Status, rail.SettlementFailed)
	is.Equal(s.Reason, "AC03") // an ISO code is the reason
	is.Equal(s.EndToEndID, "") // no Pix went out

	s, err = settlement("NAO_REALIZADO", "DEVOLVIDO", "ref", "", "", "", "saldo insuficiente")
	is.NoErr(err)
	is.Equal(s.Reason, rail.ReasonBankError)
	is.Equal(s.Detail, "saldo insuficiente") // free text is the detail

	_, err = settlement("REALIZADO", "REALIZADO", "ref", "", "", "", "")
	is.True(err != nil) // confirmed without the Pix's id
	_, err = settlement("PERDIDO", "REALIZADO", "ref", "", "", "", "")
	is.True(err != nil) // an unknown status
	_, err = settlement("EM_PROCESSAMENTO", "REALIZADO", "ref", "", "ontem", "", "")
	is.True(err != nil) // a horario that is no time
}

func TestEfiReason(t *testing.T) {
	is := is.New(t)
	for name, want := range map[string]string{
		"chave_invalida":                  rail.ReasonInvalidPixKey,
		"chave_nao_encontrada":            rail.ReasonInvalidPixKey,
		"chave_nao_pertence_ao_documento": rail.ReasonBE01,
		"saldo_insuficiente":              rail.ReasonAM04,
		"pagamento_negado":                rail.ReasonDS04,
		"documento_bloqueado":             rail.ReasonRefused,
		"":                                rail.ReasonRefused,
	} {
		is.Equal(efiReason(&Error{Name: name}), want) // Efí's error names
	}
}

func TestError(t *testing.T) {
	is := is.New(t)
	e := errorOf("PUT", "/v2/cob/x", 400, []byte(`{"type":"https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida","title":"Cobrança inválida.","status":400,
		"detail":"A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o schema.",
		"violacoes":[{"razao":"O campo cob.valor.original não respeita o schema.","propriedade":"cob.valor.original","valor":"10.5"}]}`))
	is.Equal(e.TypeName(), "CobOperacaoInvalida")
	is.Equal(len(e.Violations), 1)
	is.Equal(e.Violations[0].Property, "cob.valor.original")
	is.True(strings.Contains(e.Error(), "cob.valor.original")) // the message names the property

	e = errorOf("PUT", "/v3/gn/pix/1", 400, []byte(`{"nome":"chave_invalida","mensagem":"A chave informada não faz referência à conta Efí autenticada"}`))
	is.Equal(e.TypeName(), "chave_invalida") // Efí's body
	is.True(strings.Contains(e.Error(), "não faz referência"))

	e = errorOf("GET", "/v2/pix", 502, []byte(`<html>bad gateway</html>`))
	is.Equal(e.Status, 502) // a body that is no JSON still makes an error
	is.Equal(e.TypeName(), "")

	e = errorOf("POST", "/oauth/token", 401, []byte(`{"error":"invalid_client","error_description":"client secret s3cr3t is wrong"}`))
	e.redact("s3cr3t")
	is.True(!strings.Contains(e.Error(), "s3cr3t")) // a secret the PSP echoes is redacted
}

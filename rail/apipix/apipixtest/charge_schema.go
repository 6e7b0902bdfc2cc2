package apipixtest

import (
	"strconv"
	"time"
)

// checkCharge holds a cob's or cobv's body to the standard: its schema (CobSolicitada,
// CobVSolicitada; for a PATCH, CobRevisada, CobVRevisada, where every field is optional
// and status may be given) and the rules the document lists as violations that the body
// alone breaks. Rules that depend on the PSP's state are the handlers'.
func (p *PSP) checkCharge(c *checker, kind chargeKind, m map[string]any, patch bool) {
	root := string(kind)
	props := chargeProps(kind, patch)
	if patch {
		props = append(optional(props), opt("status", enum(statusRemovida)))
	}
	n := len(c.v)
	object(props...)(c, root, m)
	if len(c.v) > n {
		return // the rules below read the fields the schema vouched for
	}
	if k, ok := m["chave"]; ok {
		if pixKey(c, root+".chave", k); len(c.v) == n && k != p.o.PixKey {
			c.add(root+".chave", k, "format", "is not a key of this receiver (%s)", p.o.PixKey)
		}
	}
	if _, ok := m["loc"]; ok {
		c.add(root+".loc.id", nil, "format", "names a location that does not exist (apipixtest makes none)")
	}
	if patch {
		return // the revised charge as a whole is checked as a PUT's body
	}
	valor := obj(m, "valor")
	original, hasOriginal := int64(0), false
	if s := str(valor, "original"); s != "" {
		original, _ = parseMoney(s)
		hasOriginal = true
	}
	if kind == kindCob {
		mod, _ := num(valor, "modalidadeAlteracao")
		if hasOriginal && original == 0 && mod != 1 {
			c.add(root+".valor.original", str(valor, "original"), "minimum", "is zero (only a value the payer may change can be)")
		}
		return
	}
	if hasOriginal && original == 0 {
		c.add(root+".valor.original", str(valor, "original"), "minimum", "is zero")
	}
	if hasOriginal {
		checkDueValues(c, root, m, original)
	}
}

// chargeProps are the fields of a cob's or cobv's body. In a PATCH, valor.original is
// optional too.
func chargeProps(kind chargeKind, patch bool) []prop {
	original := req("original", money)
	if patch {
		original = opt("original", money)
	}
	base := []prop{
		req("chave", text(77)),
		opt("solicitacaoPagador", text(140)),
		// The document writes "maximum: 50" on the array; it means at most 50 items.
		opt("infoAdicionais", arrayOf(0, 50, object(req("nome", text(50)), req("valor", text(200))))),
		opt("loc", object(req("id", integer(1, maxInt64)))),
	}
	if kind == kindCob {
		return append(base,
			req("calendario", object(opt("expiracao", integer(1, maxInt32)))),
			opt("devedor", devedor(false)),
			req("valor", object(original,
				opt("modalidadeAlteracao", integer(0, 1)),
				opt("retirada", unsupported("Pix Saque and Pix Troco"))),
			),
		)
	}
	modVal := func(max int64) rule { return object(req("modalidade", integer(1, max)), req("valorPerc", money)) }
	return append(base,
		req("calendario", object(req("dataDeVencimento", date), opt("validadeAposVencimento", integer(0, maxInt32)))),
		req("devedor", devedor(true)),
		req("valor", object(original,
			opt("multa", modVal(2)),
			opt("juros", modVal(8)),
			opt("abatimento", modVal(2)),
			opt("desconto", object(
				req("modalidade", integer(1, 6)),
				opt("descontoDataFixa", arrayOf(1, 3, object(req("data", date), req("valorPerc", money)))),
				opt("valorPerc", money),
			)),
		)),
	)
}

// unsupported is a field of the standard the PSP does not implement: a request that
// uses it is refused as if it broke the standard, saying so.
func unsupported(what string) rule {
	return func(c *checker, path string, v any) {
		c.add(path, v, "not", "%s: apipixtest does not implement it", what)
	}
}

// devedor is the debtor of a charge: a person (cpf) or a company (cnpj), never both,
// with a name. A cobv's may also have an address and e-mail (DadosDevedor).
func devedor(address bool) rule {
	props := []prop{opt("cpf", cpf), opt("cnpj", cnpj), req("nome", text(200))}
	if address {
		props = append(props, opt("email", text(200)), opt("logradouro", text(200)),
			opt("cidade", text(200)), opt("uf", text(2)), opt("cep", text(8)))
	}
	return func(c *checker, path string, v any) {
		if m, ok := v.(map[string]any); ok {
			exactlyOne(c, path, m, "cpf", "cnpj")
		}
		// object says so when v is not an object.
		object(props...)(c, path, v)
	}
}

// checkDueValues holds a cobv's fine, interest, abatement and discount to the rules the
// document lists: a discount is of one form or the other as its modalidade says, no
// abatement or discount as large as the charge, no discount date after the due date.
func checkDueValues(c *checker, root string, m map[string]any, original int64) {
	valor := obj(m, "valor")
	dueDate, _ := time.Parse(time.DateOnly, str(obj(m, "calendario"), "dataDeVencimento"))
	tooBig := func(path string, mod, val int64, fixedMods ...int64) {
		for _, f := range fixedMods {
			if mod == f {
				if val >= original {
					c.add(path, formatMoney(val), "maximum", "is as large as the charge's value")
				}
				return
			}
		}
		if val >= 100_00 {
			c.add(path, formatMoney(val), "maximum", "is 100%% or more")
		}
	}
	if a := obj(valor, "abatimento"); a != nil {
		mod, _ := num(a, "modalidade")
		val, _ := parseMoney(str(a, "valorPerc"))
		tooBig(root+".valor.abatimento.valorPerc", mod, val, 1)
	}
	d := obj(valor, "desconto")
	if d == nil {
		return
	}
	path := root + ".valor.desconto"
	mod, _ := num(d, "modalidade")
	_, hasTiers := d["descontoDataFixa"]
	_, hasValue := d["valorPerc"]
	switch {
	case mod <= 2 && (!hasTiers || hasValue):
		c.add(path, nil, "oneOf", "modalidade %d needs descontoDataFixa and no valorPerc", mod)
	case mod >= 3 && (hasTiers || !hasValue):
		c.add(path, nil, "oneOf", "modalidade %d needs valorPerc and no descontoDataFixa", mod)
	case hasValue:
		val, _ := parseMoney(str(d, "valorPerc"))
		tooBig(path+".valorPerc", mod, val, 3, 4)
	default:
		tiers, _ := d["descontoDataFixa"].([]any)
		seen := map[string]bool{}
		for i, t := range tiers {
			t, _ := t.(map[string]any)
			at := path + ".descontoDataFixa[" + strconv.Itoa(i) + "]"
			day := str(t, "data")
			if seen[day] {
				c.add(at+".data", day, "uniqueItems", "repeats a date")
			}
			seen[day] = true
			if when, err := time.Parse(time.DateOnly, day); err == nil && when.After(dueDate) {
				c.add(at+".data", day, "maximum", "is after calendario.dataDeVencimento")
			}
			val, _ := parseMoney(str(t, "valorPerc"))
			tooBig(at+".valorPerc", mod, val, 1)
		}
	}
}

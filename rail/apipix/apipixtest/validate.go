package apipixtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixfoundry/payments/brcode"
)

// The standard's patterns, anchored: the document writes them unanchored (and the CPF's
// as a JavaScript literal, "/^\d{11}$/"), which taken literally would accept "x10.00y" as
// money and reject every real CPF. PSPs match whole values; so does the PSP.
var (
	moneyRE    = regexp.MustCompile(`^\d{1,10}\.\d{2}$`)
	txidRE     = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)
	pixTxidRE  = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`) // a received Pix's: static codes carry 1..25
	e2eRE      = regexp.MustCompile(`^[a-zA-Z0-9]{32}$`)
	idRE       = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`) // a refund's id, Efí's idEnvio
	cpfRE      = regexp.MustCompile(`^\d{11}$`)
	cnpjRE     = regexp.MustCompile(`^[0-9A-Z]{14}$`)
	dateRE     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	ispbRE     = regexp.MustCompile(`^\d{8}$`)
	agenciaRE  = regexp.MustCompile(`^\d{1,4}$`)
	contaRE    = regexp.MustCompile(`^\d{1,20}$`)
	maxInt32   = int64(1<<31 - 1)
	maxInt64   = int64(1<<63 - 1)
	errNoValue = errors.New("the body is empty")
)

// violation is one thing wrong with a request, as the standard's error bodies list it
// (violacoes[]). keyword says which kind of rule it broke, for Efí's error bodies.
type violation struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade,omitempty"`
	Valor       string `json:"valor,omitempty"`
	keyword     string
}

func (v violation) String() string {
	s := v.Razao
	if v.Propriedade != "" {
		s = v.Propriedade + ": " + s
	}
	if v.Valor != "" {
		s += " (" + strconv.Quote(v.Valor) + ")"
	}
	return s
}

// checker collects the violations of one request.
type checker struct{ v []violation }

func (c *checker) add(path string, value any, keyword, format string, args ...any) {
	c.v = append(c.v, violation{Razao: fmt.Sprintf(format, args...), Propriedade: path, Valor: show(value), keyword: keyword})
}

func (c *checker) ok() bool { return len(c.v) == 0 }

// show is a JSON value as a violation quotes it: strings as they are, anything else as
// JSON, cut to 100 characters.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		s = x
	default:
		b, _ := json.Marshal(x)
		s = string(b)
	}
	if utf8.RuneCountInString(s) > 100 {
		s = string([]rune(s)[:100]) + "…"
	}
	return s
}

// rule checks the value at path.
type rule func(c *checker, path string, v any)

// prop is a field of an object.
type prop struct {
	name     string
	required bool
	rule     rule
}

func req(name string, r rule) prop { return prop{name, true, r} }
func opt(name string, r rule) prop { return prop{name, false, r} }

// optional turns every required field of props optional: the shape of a PATCH body.
func optional(props []prop) []prop {
	out := make([]prop, len(props))
	for i, p := range props {
		out[i] = prop{p.name, false, p.rule}
	}
	return out
}

// object checks a JSON object: every required field present, every field known (the
// standard's objects have no others) and none null.
func object(props ...prop) rule {
	return func(c *checker, path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			c.add(path, v, "type", "must be an object")
			return
		}
		known := map[string]bool{}
		for _, p := range props {
			known[p.name] = true
			x, present := m[p.name]
			switch {
			case !present && p.required:
				c.add(join(path, p.name), nil, "required", "is required")
			case !present:
			case x == nil:
				c.add(join(path, p.name), nil, "type", "must not be null")
			default:
				p.rule(c, join(path, p.name), x)
			}
		}
		for _, k := range sortedKeys(m) {
			if !known[k] {
				c.add(join(path, k), m[k], "additionalProperties", "is not a field the standard defines here")
			}
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// text is a string of at most max characters (characters, not bytes: the standard counts
// what the payer reads).
func text(max int) rule {
	return func(c *checker, path string, v any) {
		s, ok := v.(string)
		switch {
		case !ok:
			c.add(path, v, "type", "must be a string")
		case utf8.RuneCountInString(s) > max:
			c.add(path, v, "maxLength", "is longer than %d characters", max)
		}
	}
}

// matching is a string that matches re as a whole.
func matching(re *regexp.Regexp) rule {
	return func(c *checker, path string, v any) {
		s, ok := v.(string)
		switch {
		case !ok:
			c.add(path, v, "type", "must be a string")
		case !re.MatchString(s):
			c.add(path, v, "pattern", "does not match %s", re)
		}
	}
}

// money is the standard's decimal string, "123.45".
var money = matching(moneyRE)

// positiveMoney is money above zero.
func positiveMoney(c *checker, path string, v any) {
	n := len(c.v)
	money(c, path, v)
	if len(c.v) == n && v.(string) != "" {
		if cents, _ := parseMoney(v.(string)); cents == 0 {
			c.add(path, v, "minimum", "must be more than zero")
		}
	}
}

// integer is a JSON integer (no fraction, no exponent) from min to max.
func integer(min, max int64) rule {
	return func(c *checker, path string, v any) {
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, v, "type", "must be an integer")
			return
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		switch {
		case err != nil:
			c.add(path, v, "type", "must be an integer")
		case i < min || i > max:
			c.add(path, v, "minimum", "must be from %d to %d", min, max)
		}
	}
}

// enum is one of the strings values.
func enum(values ...string) rule {
	return func(c *checker, path string, v any) {
		s, _ := v.(string)
		for _, x := range values {
			if s == x {
				return
			}
		}
		c.add(path, v, "enum", "must be one of %s", strings.Join(values, ", "))
	}
}

// date is "YYYY-MM-DD", a day that exists.
func date(c *checker, path string, v any) {
	s, ok := v.(string)
	if ok && dateRE.MatchString(s) {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return
		}
	}
	c.add(path, v, "format", "must be a date, YYYY-MM-DD")
}

// arrayOf is an array of min to max items, each checked by item.
func arrayOf(min, max int, item rule) rule {
	return func(c *checker, path string, v any) {
		a, ok := v.([]any)
		switch {
		case !ok:
			c.add(path, v, "type", "must be an array")
			return
		case len(a) < min || len(a) > max:
			c.add(path, v, "maxItems", "must have from %d to %d items", min, max)
		}
		for i, x := range a {
			item(c, fmt.Sprintf("%s[%d]", path, i), x)
		}
	}
}

// cpf is a bare CPF with valid check digits.
func cpf(c *checker, path string, v any) {
	n := len(c.v)
	matching(cpfRE)(c, path, v)
	if len(c.v) == n && !brcode.ValidCPF(v.(string)) {
		c.add(path, v, "format", "is not a valid CPF (check digits)")
	}
}

// cnpj is a bare CNPJ (alphanumeric ones too) with valid check digits.
func cnpj(c *checker, path string, v any) {
	n := len(c.v)
	matching(cnpjRE)(c, path, v)
	if len(c.v) == n && !brcode.ValidCNPJ(v.(string)) {
		c.add(path, v, "format", "is not a valid CNPJ (check digits)")
	}
}

// pixKey is a Pix key of any type, written as the DICT writes it (a CPF without mask, an
// e-mail in lower case, a phone as +55...): the form a key has in a BR Code and in the
// Pix network.
func pixKey(c *checker, path string, v any) {
	s, ok := v.(string)
	if !ok {
		c.add(path, v, "type", "must be a string")
		return
	}
	_, canon, err := brcode.DetectKey(s)
	switch {
	case err != nil:
		c.add(path, v, "format", "is not a Pix key: %v", strings.TrimPrefix(err.Error(), "brcode: "))
	case canon != s:
		c.add(path, v, "format", "is not in the DICT's form, %s", canon)
	}
}

// absoluteURL is an http or https URL with a host. The standard says only "uri"; its
// webhooks are called over TLS, but tests may listen on plain HTTP.
func absoluteURL(c *checker, path string, v any) {
	s, ok := v.(string)
	if ok {
		if u, err := url.Parse(s); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			return
		}
	}
	c.add(path, v, "format", "must be an absolute http(s) URL")
}

// exactlyOne adds a violation unless exactly one of the fields names is in m.
func exactlyOne(c *checker, path string, m map[string]any, names ...string) {
	n := 0
	for _, k := range names {
		if _, ok := m[k]; ok {
			n++
		}
	}
	switch {
	case n == 0:
		c.add(path, nil, "oneOf", "needs one of %s", strings.Join(names, ", "))
	case n > 1:
		c.add(path, nil, "oneOf", "has more than one of %s: only one is allowed", strings.Join(names, ", "))
	}
}

// decodeBody reads a request's JSON body: a Content-Type of application/json and one
// JSON object, nothing after it. Numbers stay json.Number, so integers are told from
// other numbers exactly.
func decodeBody(r *http.Request, body []byte, root string) (map[string]any, []violation) {
	var c checker
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		c.add("", r.Header.Get("Content-Type"), "contentType", "Content-Type must be application/json")
	}
	v, err := decodeJSON(body)
	if err != nil {
		c.add(root, nil, "json", "the body is not one JSON value: %v", err)
		return nil, c.v
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.add(root, v, "type", "the body must be a JSON object")
		return nil, c.v
	}
	return m, c.v
}

func decodeJSON(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errNoValue
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// canonical is v as JSON with sorted keys, to tell whether two bodies say the same.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// deepCopy copies a decoded JSON value.
func deepCopy(m map[string]any) map[string]any {
	v, err := decodeJSON([]byte(canonical(m)))
	if err != nil {
		return map[string]any{}
	}
	out, _ := v.(map[string]any)
	return out
}

// parseMoney reads the standard's "123.45" as centavos, exactly. Only strings moneyRE
// matches are accepted: at most 10 integer digits, so it never overflows.
func parseMoney(s string) (int64, error) {
	if !moneyRE.MatchString(s) {
		return 0, fmt.Errorf("%q is not money", s)
	}
	i := strings.IndexByte(s, '.')
	units, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, err
	}
	cents, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return 0, err
	}
	return units*100 + cents, nil
}

// formatMoney writes centavos as the standard's "123.45".
func formatMoney(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// str is m[k] if it is a string.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// obj is m[k] if it is an object.
func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// num is m[k] if it is an integer.
func num(m map[string]any, k string) (int64, bool) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	return i, err == nil
}

// timestamp writes t as the PSP writes every horario: RFC 3339 in UTC, with as many
// fractional digits as it has, so that a time comes back exactly as it was recorded.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

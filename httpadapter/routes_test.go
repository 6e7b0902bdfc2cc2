package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// publicRoutes are the patterns served without an App ID. Add a route here only on
// purpose: /health, the QR image PNG that qrCodeImage URLs point browsers at, and the
// webhook public keys (public in the real API: receivers fetch them), and the payment link
// page's routes (the payer has no App ID; see paylink.go).
var publicRoutes = map[string]bool{
	"GET /health":                             true,
	"GET /webhook/public-keys":                true,
	"GET /openpix/charge/brcode/image/{file}": true,
	"GET /pay/{paymentLinkID}":                true,
	"GET /pay/{paymentLinkID}/status":         true,
	"POST /pay/{paymentLinkID}/simulate":      true,
}

// pagePath matches the path of the payment link page, which answers HTML (paylink.go).
var pagePath = regexp.MustCompile(`^/pay/[^/?]+(\?|$)`)

// TestRoutes_RequireAuth sends every registered route (API routes under both prefixes, and
// the routes outside them, sandbox included) a request without an App ID: each must
// answer 401, unless it is listed in publicRoutes.
func TestRoutes_RequireAuth(t *testing.T) {
	t.Parallel()
	svc, err := payments.New(memory.New(), payments.Options{WebhookSigningKey: signingKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Logger: slog.New(slog.DiscardHandler), Sandbox: true}
	apiPatterns, rootPatterns := addRoutes(http.NewServeMux(), svc, opts)
	h := New(svc, opts)
	wildcard := regexp.MustCompile(`\{[^}$]*\}`)
	is := is.New(t)
	is.True(len(apiPatterns) >= 10)                                // the routes were collected
	is.True(slices.Contains(rootPatterns, "GET /openpix/testing")) // the sandbox's too
	check := func(pattern, prefix string) {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.ReplaceAll(wildcard.ReplaceAllString(path, "x"), "{$}", "")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, prefix+path, strings.NewReader("{}")))
		if publicRoutes[pattern] {
			is.True(w.Code != http.StatusUnauthorized) // a public route
			return
		}
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s%s: status %d without an App ID, want 401", method, prefix, path, w.Code)
		}
	}
	for _, pattern := range apiPatterns {
		for _, prefix := range []string{"/api/v1", "/api/openpix/v1"} {
			check(pattern, prefix)
		}
	}
	for _, pattern := range rootPatterns {
		check(pattern, "")
	}
}

// junkBodies are request bodies no route can take.
var junkBodies = []string{
	"", " ", "null", "[]", "[{}]", `"s"`, "1", "true", "{", "{}", `{"a":}`, `{"a":1}}`, "\xff\xfe{}",
	`{"a":"\xff"}`, `{"value":1,"value":"x"}`, `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
}

// junkValues are JSON values put in place of each field.
var junkValues = []string{
	`null`, `-1`, `10.5`, `1e400`, `99999999999999999999`, `""`, `"x"`, `"` + strings.Repeat("a", 3000) + `"`,
	`"\u0000"`, `true`, `[]`, `{}`, `[{"value":1.5}]`, `{"taxID":5,"value":"x"}`,
}

// junkFields are field names of any body, put in every body.
var junkFields = []string{
	"correlationID", "value", "type", "comment", "expiresIn", "expiresDate", "customer", "daysForDueDate",
	"daysAfterDueDate", "interests", "fines", "discountSettings", "discount", "additionalInfo",
	"enableCashbackPercentage", "enableCashbackExclusivePercentage", "subaccount", "splits", "name", "pixKey",
	"emv", "brCode", "transactionEndToEndId", "fromPixKey", "fromPixKeyType", "toPixKey", "toPixKeyType",
	"taxID", "email", "phone", "address", "application", "preRegistration", "user", "accountId", "clientId",
	"destinationAlias", "destinationAliasType", "qrCode", "autoApprove", "psp", "holder", "account", "sourceAccountId",
}

// validBodies make each route's junk reach past decoding: one field at a time is replaced.
var validBodies = map[string]string{
	"POST /pix-keys":       `{"key":"","type":"EVP"}`,
	"POST /pix-keys/check": `{"pixKey":"bruno@example.com"}`,

	"POST /dispute/{id}/evidence":               `{"documents":[{"url":"https://loja.example.com/nf.pdf","correlationID":"nf","description":"d"}]}`,
	"POST /openpix/testing/dispute":             `{"endToEndId":"E99999999202611221200dispute0003","reason":"r"}`,
	"POST /openpix/testing/dispute/{id}/decide": `{"outcome":"REJECTED"}`,
	"POST /charge": `{"correlationID":"junk-charge","value":1000,"type":"OVERDUE","daysForDueDate":2,"customer":{"name":"A","taxID":"52998224725"},
		"interests":{"value":10},"fines":{"value":10},"discountSettings":{"modality":"VALUE_PER_RUNNING_DAY_ADVANCE","value":1},
		"additionalInfo":[{"key":"k","value":"v"}],"splits":[{"value":10,"pixKey":"a@example.com"}]}`,
	"POST /charge/{id}/refund":     `{"correlationID":"junk-refund","value":10,"comment":"c"}`,
	"PATCH /charge/{id}":           `{"expiresDate":"2027-01-01T00:00:00Z"}`,
	"POST /qrcode-static":          `{"name":"q","correlationID":"junk-qr","value":10,"comment":"c"}`,
	"POST /refund":                 `{"value":10,"transactionEndToEndId":"E99999999202611221200junk0000001","correlationID":"junk-r","comment":"c"}`,
	"POST /subaccount":             `{"pixKey":"junk@example.com","name":"n"}`,
	"POST /subaccount/transfer":    `{"value":1,"fromPixKey":"junk@example.com","fromPixKeyType":"EMAIL","toPixKey":"junk2@example.com","toPixKeyType":"EMAIL"}`,
	"POST /cashback-fidelity":      `{"taxID":"52998224725","value":10}`,
	"POST /customer":               `{"name":"n","taxID":"52998224725","email":"a@example.com","address":{"city":"c"}}`,
	"PATCH /customer/{id}":         `{"name":"n","email":"a@example.com"}`,
	"POST /decode/emv":             `{"emv":"00020101021126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"}`,
	"POST /partner/company":        `{"preRegistration":{"name":"n","taxID":{"taxID":"11222333000181","type":"BR:CNPJ"}},"user":{"firstName":"a","lastName":"b","email":"a@example.com","phone":"+5511999990000"}}`,
	"POST /partner/application":    `{"application":{"name":"n","type":"API"},"taxID":{"taxID":"11222333000181","type":"BR:CNPJ"}}`,
	"POST /application":            `{"application":{"name":"n","type":"API"}}`,
	"DELETE /application":          `{"clientId":"x"}`,
	"POST /account/{accountId}":    `{"accountId":"x","value":1}`,
	"POST /subaccount/{id}/debit":  `{"value":1,"description":"d"}`,
	"POST /subaccount/{id}/credit": `{"value":1,"description":"d","correlationID":"junk-credit"}`,
	"POST /transfer":               `{"value":1,"fromPixKey":"junk@example.com","toPixKey":"junk2@example.com","correlationID":"junk-transfer"}`,
	"POST /account":                `{"pixKey":"junk-account@example.com","name":"n"}`,
}

// outgoingValidBodies are the valid bodies of the outgoing-money routes (payments and
// withdrawals), added to validBodies.
var outgoingValidBodies = map[string]string{
	"POST /payment": `{"type":"MANUAL","value":10,"correlationID":"junk-pay","psp":{"id":"00000000","name":"b"},
		"holder":{"name":"h","taxID":{"taxID":"52998224725","type":"BR:CPF"}},"account":{"account":"123","branch":"1","accountType":"CACC"}}`,
	"POST /payment/approve":              `{"correlationID":"junk-pay"}`,
	"POST /account/{accountId}/withdraw": `{"value":1}`,
	"POST /subaccount/{id}/withdraw":     `{"value":1}`,
}

func init() { maps.Copy(validBodies, outgoingValidBodies) }

// junkQueries are query strings thrown at every GET route.
var junkQueries = []string{
	"skip=-1", "limit=abc", "skip=99999999999999999999", "limit=0", "limit=100000", "start=x", "end=x",
	"start=2026-11-23T00:00:00Z&end=2026-11-22T00:00:00Z", "status=x", "type=x", "charge=x&pixQrCode=y",
	"size=abc", "size=99999999999", "size=-1", "transactionID=x", "identifier=x&value=abc", "identifier=x&value=1e3",
	"transactionID=x&identifier=y", "return_existing=x", "%zz", "customer=x&subscription=y",
}

// TestRoutes_Junk throws junk at every route: malformed bodies, wrong types in every
// field, bad query parameters. None may answer 500 (501 is a deliberate answer of the
// routes this version does not offer), and every reply must be JSON.
func TestRoutes_Junk(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	svc, err := payments.New(memory.New(), payments.Options{WebhookSigningKey: signingKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.CreateApplication(context.Background(), payments.CreateApplicationParams{Name: "junk"})
	if err != nil {
		t.Fatal(err)
	}
	// Records behind the path ids ("x"), so that junk reaches the handlers' later steps.
	c, err := svc.CreateCharge(context.Background(), payments.CreateChargeParams{CorrelationID: "x", Value: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ReceivePix(context.Background(), payments.ReceivePixParams{EndToEndID: "E99999999202611221200junk0000001", Value: 1000, TxID: c.Identifier[:25]}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateCustomer(context.Background(), payments.CreateCustomerParams{Name: "x", Email: "x@example.com", CorrelationID: "x"}); err != nil {
		t.Fatal(err)
	}
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Sandbox: true}
	apiPatterns, rootPatterns := addRoutes(http.NewServeMux(), svc, opts)
	h := New(svc, opts)
	wildcard := regexp.MustCompile(`\{[^}$]*\}`)
	send := func(t *testing.T, method, path, body string) {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", app.AppID())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != http.StatusNotImplemented {
			t.Errorf("%s %s %.200q: status %d %s", method, path, body, w.Code, w.Body.String())
		}
		ct := w.Header().Get("Content-Type")
		if pagePath.MatchString(path) && strings.HasPrefix(ct, "text/html") { // the payment page answers HTML
			return
		}
		if !strings.HasPrefix(ct, "application/json") && ct != "image/png" {
			t.Errorf("%s %s %.200q: Content-Type %q", method, path, body, ct)
		}
	}
	routes := map[string]string{} // pattern -> path to send it to
	for _, p := range apiPatterns {
		method, path, _ := strings.Cut(p, " ")
		routes[p] = method + " /api/v1" + strings.ReplaceAll(wildcard.ReplaceAllString(path, "x"), "{$}", "")
	}
	for _, p := range rootPatterns {
		method, path, _ := strings.Cut(p, " ")
		routes[p] = method + " " + wildcard.ReplaceAllString(path, "x")
	}
	n := 0
	for pattern, target := range routes {
		method, path, _ := strings.Cut(target, " ")
		if method == "GET" {
			for _, q := range junkQueries {
				send(t, method, path+"?"+q, "")
				n++
			}
			continue
		}
		bodies := slices.Clone(junkBodies)
		base := map[string]json.RawMessage{}
		if v, ok := validBodies[pattern]; ok {
			if err := json.Unmarshal([]byte(v), &base); err != nil {
				t.Fatalf("%s: valid body: %v", pattern, err)
			}
		}
		fields := slices.Clone(junkFields)
		for f := range base {
			fields = append(fields, f)
		}
		for _, f := range fields {
			for _, v := range junkValues {
				b := maps.Clone(base)
				b[f] = json.RawMessage(v)
				body, err := json.Marshal(b)
				if err != nil {
					t.Fatal(err)
				}
				bodies = append(bodies, string(body))
			}
		}
		for _, body := range bodies {
			send(t, method, path, body)
			n++
		}
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("a handler panicked:\n%s", logs.String())
	}
	t.Logf("%d requests", n)
}

// TestRoutes_LiteralPathsKeepTheirMethods sends every method to every route path without
// a wildcard (under both API prefixes): a method the path is not registered with answers
// 405 with the path's methods in Allow, before auth, as the mux does on other paths. None
// may fall through to a wildcard route of that method, which would read the path's last
// segment as an id (GET /subaccount/transfer as the subaccount "transfer").
func TestRoutes_LiteralPathsKeepTheirMethods(t *testing.T) {
	t.Parallel()
	svc, err := payments.New(memory.New(), payments.Options{WebhookSigningKey: signingKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Logger: slog.New(slog.DiscardHandler), Sandbox: true}
	apiPatterns, rootPatterns := addRoutes(http.NewServeMux(), svc, opts)
	h := New(svc, opts)
	registered := map[string][]string{} // literal path -> methods
	for _, p := range apiPatterns {
		method, path, _ := strings.Cut(p, " ")
		if path = strings.TrimSuffix(path, "{$}"); !strings.Contains(path, "{") {
			for _, prefix := range []string{"/api/v1", "/api/openpix/v1"} {
				registered[prefix+path] = append(registered[prefix+path], method)
			}
		}
	}
	for _, p := range rootPatterns {
		if method, path, _ := strings.Cut(p, " "); !strings.Contains(path, "{") {
			registered[path] = append(registered[path], method)
		}
	}
	is := is.New(t)
	is.True(slices.Contains(registered["/api/v1/subaccount/transfer"], "POST")) // the paths were collected
	n := 0
	for path, methods := range registered {
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if slices.Contains(methods, method) || method == "HEAD" && slices.Contains(methods, "GET") {
				continue
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
			n++
			if w.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d %s, want 405", method, path, w.Code, w.Body.String())
				continue
			}
			for _, m := range methods {
				if !strings.Contains(w.Header().Get("Allow"), m) {
					t.Errorf("%s %s: Allow %q lacks %s", method, path, w.Header().Get("Allow"), m)
				}
			}
		}
	}
	t.Logf("%d requests", n)
}

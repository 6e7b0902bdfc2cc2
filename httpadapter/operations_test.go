package httpadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// operationsFile lists every operation of the official OpenPix/Woovi OpenAPI documents
// (openpix.json and woovi.json; their union): method, path and summary, extracted once
// from the documents, sorted by path, then method.
const operationsFile = "testdata/openpix-operations.json"

// operationsDoc is the table TestOperationsTable writes from operationsFile.
const operationsDoc = "../docs/openpix-operations.md"

// updateDocsEnv, set to 1, makes TestOperationsTable rewrite operationsDoc instead of
// comparing it.
const updateDocsEnv = "PAYMENTS_UPDATE_DOCS"

// operation is one entry of operationsFile.
type operation struct {
	Method    string   `json:"method"`
	Path      string   `json:"path"` // as the document writes it, `:id` parameters included
	Summary   string   `json:"summary"`
	Documents []string `json:"documents"` // "openpix", "woovi": the documents that list it
}

// key is "METHOD /path", the path as the document writes it.
func (op operation) key() string { return op.Method + " " + op.Path }

// route is the operation's path as this server registers it: a `:id` segment is {id}.
func (op operation) route() string {
	return colonParam.ReplaceAllString(op.Path, "/{$1}")
}

// colonParam matches a path segment written `:name`, the other spelling of {name}.
var colonParam = regexp.MustCompile(`/:([A-Za-z_][A-Za-z0-9_]*)`)

// operationNotes are the table's notes: where this project differs from the document on
// an operation, keyed by operation.key.
var operationNotes = map[string]string{
	"POST /api/v1/pix-keys":                                "An EVP key is generated (the body's `key` is not read); a CNPJ key must be the company's own tax ID. At most 20 keys, the default included.",
	"GET /api/v1/pix-keys/{pixKey}/check":                  "Asks the server's bank; one that offers no key look-up answers 501. `pixKeyEndToEndId` is filled in the sandbox only.",
	"POST /api/v1/pix-keys/check":                          "Asks the server's bank; one that offers no key look-up answers 501. `pixKeyEndToEndId` is filled in the sandbox only.",
	"GET /openpix/charge/brcode/image/{id}.png":            "Served under the server's own vendor name too (`/woovi/...`).",
	"POST /api/v1/account":                                 "Creates a new, empty account of the company (no body, or `{pixKey, name}`) rather than duplicating the caller's.",
	"GET /api/v1/account/":                                 "Also at `/api/v1/account`, without the trailing slash.",
	"POST /api/v1/account/{accountId}/withdraw":            "Also `POST /api/v1/account/{accountId}` with `{accountId, value}`, as the Node SDK 1.3.3 sends it. An optional `correlationID` (or `Idempotency-Key`) makes a retry safe.",
	"POST /api/v1/subaccount/{id}/withdraw":                "An optional `correlationID` (or `Idempotency-Key`) makes a retry safe.",
	"POST /api/v1/transfer":                                "An optional `correlationID` (or `Idempotency-Key`) makes a retry safe.",
	"POST /api/v1/application":                             "`scopes` are refused (400): an application acts on every route of its company.",
	"POST /api/v1/partner/application":                     "`scopes` are refused (400): an application acts on every route of its company.",
	"POST /api/v1/charge":                                  "`type` BOLETO, `ensureSameTaxID: true` and `dueDate` are refused (400) rather than ignored.",
	"POST /api/v1/payment":                                 "Paid from the default account: a `sourceAccountId` naming another is a 400.",
	"POST /api/v1/subscriptions":                           "`type` PIX_RECURRING (Pix Automático) is served on the sandbox bank only (501 otherwise: the bank driver speaks no /rec); the mandate is answered as `pixRecurring` and `pixRecurringOptions`.",
	"PUT /api/v1/subscriptions/{id}/value":                 "The document gives no body: `{value}` in centavos, as the cobr routes'. Answers `{subscription}`.",
	"POST /api/v1/installments/{id}/cobr":                  "Sandbox bank only (501 otherwise). Answers `{installment}`.",
	"POST /api/v1/installments/{id}/cobr/retry":            "Sandbox bank only (501 otherwise). Answers `{installment}`.",
	"POST /api/v1/webhook":                                 "Also at `/<vendor>/api/v1/webhook`. A Service without `payments.Options.WebhookSender` answers 501 to a URL webhook.",
	"GET /api/v1/webhook":                                  "Also at `/<vendor>/api/v1/webhook`.",
	"DELETE /api/v1/webhook/{id}":                          "Also at `/<vendor>/api/v1/webhook/{id}`.",
	"GET /api/v1/webhook/ips":                              "The addresses the operator configures (`Options.WebhookIPs`, the server's `-webhook-ips`); none configured is `{\"ips\":[]}`.",
	"DELETE /api/v1/account/{accountId}":                   "Refused (400) while any money is in the account, blocked included, and for the default account. A closed account's key stops receiving; `GET` still reads it, with `closedAt`.",
	"DELETE /api/v1/subaccount/{id}":                       "Refused (400) while any money is in the subaccount, blocked by a withdrawal included. A charge made for it before and paid after credits the company account.",
	"GET /api/v1/company":                                  "`correlationID` is the platform's id of the company; `tradeName` its merchant name.",
	"POST /api/v1/dispute/:id/evidence":                    "The document writes `:id`; the route is `/api/v1/dispute/{id}/evidence`. Document urls must be http(s); the reply lists every document the dispute holds.",
	"GET /api/v1/dispute/{id}":                             "An open dispute is CREATED here and IN_REVIEW in the list, as each schema names it. Disputes are opened and decided by the bank (on the sandbox: `/<vendor>/testing/dispute`).",
	"GET /api/v1/boleto-transaction":                       "This version takes Pix only.",
	"GET /api/v1/boleto-transaction/{boletoTransactionID}": "This version takes Pix only.",
	"POST /api/v1/boleto/validate":                         "This version takes Pix only.",
}

// Statuses of the table.
const (
	statusServed     = "served"
	statusNotOffered = "501 (not offered)"
)

// notOfferedSuffix ends the error of every operation this version does not offer.
const notOfferedSuffix = " not offered in this version"

// TestOperationsTable sends every operation of the official documents to the handler,
// with an App ID: each reaches a route of its own (no 404 of an unknown route, no 405),
// and answers either as a served route does or 501 {"error": "... not offered in this
// version"}. It then writes the table of them all, with the status each got, and checks
// that docs/openpix-operations.md is that table (PAYMENTS_UPDATE_DOCS=1 rewrites it).
func TestOperationsTable(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ops := loadOperations(t)
	is.True(len(ops) >= 100) // the union of the two documents

	svc, err := payments.New(memory.New(), payments.Options{WebhookSigningKey: signingKey(t)})
	is.NoErr(err)
	app, err := svc.CreateApplication(context.Background(), payments.CreateApplicationParams{Name: "operations"})
	is.NoErr(err)
	opts := Options{Logger: slog.New(slog.DiscardHandler)}
	mux := http.NewServeMux()
	addRoutes(mux, svc, opts)
	h := New(svc, opts)

	named := map[string]string{} // route key -> the message its 501 must carry
	for _, op := range notOfferedOps {
		named[op.method+" "+op.path] = op.message()
	}
	status := make([]string, len(ops))
	for i, op := range ops {
		target := wildcardSegment.ReplaceAllString(op.route(), "x")
		r := httptest.NewRequest(op.Method, target, nil)
		if _, pattern := mux.Handler(r); pattern == "" {
			t.Errorf("%s: %s %s matches no route", op.key(), op.Method, target)
		}
		r.Header.Set("Authorization", app.AppID())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body struct{ Error string }
		_ = json.Unmarshal(w.Body.Bytes(), &body) // a PNG, or a reply without "error", leaves it empty
		switch {
		case w.Code == http.StatusNotFound && body.Error == "not found", w.Code == http.StatusMethodNotAllowed:
			t.Errorf("%s: %d %s, the reply of no route", op.key(), w.Code, strings.TrimSpace(w.Body.String()))
		case w.Code == http.StatusNotImplemented && strings.HasSuffix(body.Error, notOfferedSuffix):
			status[i] = statusNotOffered
		default:
			status[i] = statusServed
		}
		if want, ok := named[op.Method+" "+op.route()]; ok {
			delete(named, op.Method+" "+op.route())
			if body.Error != want {
				t.Errorf("%s: %d %q, want 501 %q", op.key(), w.Code, body.Error, want)
			}
			legacy := httptest.NewRequest(op.Method, "/api/openpix/v1"+strings.TrimPrefix(target, "/api/v1"), nil)
			legacy.Header.Set("Authorization", app.AppID())
			w = httptest.NewRecorder()
			h.ServeHTTP(w, legacy)
			if w.Code != http.StatusNotImplemented || !strings.Contains(w.Body.String(), want) {
				t.Errorf("%s under /api/openpix/v1: %d %s", op.key(), w.Code, strings.TrimSpace(w.Body.String())) // the legacy prefix, as every API route
			}
			w = httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(op.Method, target, nil))
			if w.Code != http.StatusUnauthorized {
				t.Errorf("%s without an App ID: %d, want 401", op.key(), w.Code) // behind auth like every API route
			}
		}
	}
	for key := range named {
		t.Errorf("notOfferedOps has %s, which no document lists", key)
	}
	for key := range operationNotes {
		if !slices.ContainsFunc(ops, func(op operation) bool { return op.key() == key }) {
			t.Errorf("operationNotes has %s, which no document lists", key)
		}
	}

	doc := operationsMarkdown(ops, status)
	t.Logf("%d operations: %d served, %d not offered (501)", len(ops),
		countOf(status, statusServed), countOf(status, statusNotOffered))
	if os.Getenv(updateDocsEnv) == "1" {
		is.NoErr(os.MkdirAll(filepath.Dir(operationsDoc), 0o755))
		is.NoErr(os.WriteFile(operationsDoc, []byte(doc), 0o644))
		return
	}
	got, err := os.ReadFile(operationsDoc)
	if err != nil || string(got) != doc {
		t.Errorf("%s is not the table of operations (%v): rewrite it with %s=1 go test ./httpadapter -run TestOperationsTable", operationsDoc, err, updateDocsEnv)
	}
}

// wildcardSegment matches a path wildcard ({id}), which the test fills with "x".
var wildcardSegment = regexp.MustCompile(`\{[^}]*\}`)

// loadOperations reads operationsFile and checks it is in order, without repeats.
func loadOperations(t *testing.T) []operation {
	t.Helper()
	b, err := os.ReadFile(operationsFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Operations []operation }
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatalf("%s: %v", operationsFile, err)
	}
	ops := file.Operations
	if !slices.IsSortedFunc(ops, compareOperations) {
		t.Fatalf("%s is not sorted by path, then method", operationsFile)
	}
	for i := 1; i < len(ops); i++ {
		if compareOperations(ops[i-1], ops[i]) == 0 {
			t.Fatalf("%s lists %s twice", operationsFile, ops[i].key())
		}
	}
	return ops
}

// compareOperations orders operations by path, then method.
func compareOperations(a, b operation) int {
	return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method))
}

// countOf is how many of ss are s.
func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// operationsMarkdown is docs/openpix-operations.md: the table of ops, status[i] being
// ops[i]'s status here.
func operationsMarkdown(ops []operation, status []string) string {
	onlyWoovi := 0
	for _, op := range ops {
		if !slices.Contains(op.Documents, "openpix") {
			onlyWoovi++
		}
	}
	var b strings.Builder
	b.WriteString("# The operations of the OpenPix/Woovi API, and which this version serves\n\n")
	b.WriteString("<!-- Written by TestOperationsTable (httpadapter/operations_test.go) from\n")
	b.WriteString("httpadapter/testdata/openpix-operations.json; do not edit it by hand. Rewrite it with\n")
	b.WriteString(updateDocsEnv + "=1 go test ./httpadapter -run TestOperationsTable -->\n\n")
	fmt.Fprintf(&b, "Every method and path of the official OpenAPI documents, `openpix.json` and `woovi.json`: %d operations\n", len(ops))
	fmt.Fprintf(&b, "(%d of them only in `woovi.json`), sorted by path, then method, with the document's summary.\n", onlyWoovi)
	fmt.Fprintf(&b, "%d are **%s**; %d are **%s**: the route exists, behind the App ID like every other,\n",
		countOf(status, statusServed), statusServed, countOf(status, statusNotOffered), statusNotOffered)
	b.WriteString("and answers 501 `{\"error\": \"<METHOD> <path>: <what it does> is not offered in this version\"}`,\n")
	b.WriteString("naming the operation, rather than the 404 of an\n")
	b.WriteString("unknown route. Every path under `/api/v1` is served under the legacy `/api/<vendor>/v1` as well.\n")
	b.WriteString("The notes say where this project differs from the document.\n\n")
	b.WriteString("| method | path | summary | status here | note |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for i, op := range ops {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", op.Method, op.Path, cell(op.Summary), status[i], cell(operationNotes[op.key()]))
	}
	return b.String()
}

// cell is s made safe for a table cell: no pipes, no line breaks.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(strings.TrimSpace(s))
}

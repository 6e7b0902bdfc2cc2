package httpadapter

import (
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
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// One fuzz target per route that reads a JSON body: each drives the real handler through
// httptest over a memory-store Service (one per target, shared by its execs: records the
// fuzzer creates stay, so later inputs meet taken correlationIDs and moved balances too).
// Whatever the body, the reply is a 2xx, or a 4xx whose body is {"error": "<message>"};
// never a 5xx (the handler's recover answers a panic with a 500, so a panic fails too).
// The seeds are the route's valid body, the junk bodies of TestRoutes_Junk, and the valid
// body with each field in turn replaced by a junk value.
//
// TestFuzz_EveryBodyRouteHasATarget keeps fuzzTargets in step with routes.go.

func FuzzCustomerCreate(f *testing.F)        { fuzzRoute(f, "POST /customer") }
func FuzzCustomerUpdate(f *testing.F)        { fuzzRoute(f, "PATCH /customer/{id}") }
func FuzzChargeCreate(f *testing.F)          { fuzzRoute(f, "POST /charge") }
func FuzzChargeRefundCreate(f *testing.F)    { fuzzRoute(f, "POST /charge/{id}/refund") }
func FuzzChargeExpiryUpdate(f *testing.F)    { fuzzRoute(f, "PATCH /charge/{id}") }
func FuzzPixQRCodeCreate(f *testing.F)       { fuzzRoute(f, "POST /qrcode-static") }
func FuzzEMVDecode(f *testing.F)             { fuzzRoute(f, "POST /decode/emv") }
func FuzzRefundCreate(f *testing.F)          { fuzzRoute(f, "POST /refund") }
func FuzzAccountCreate(f *testing.F)         { fuzzRoute(f, "POST /account") }
func FuzzAccountWithdrawSDK(f *testing.F)    { fuzzRoute(f, "POST /account/{accountId}") }
func FuzzAccountWithdraw(f *testing.F)       { fuzzRoute(f, "POST /account/{accountId}/withdraw") }
func FuzzSubaccountCreate(f *testing.F)      { fuzzRoute(f, "POST /subaccount") }
func FuzzSubaccountTransfer(f *testing.F)    { fuzzRoute(f, "POST /subaccount/transfer") }
func FuzzSubaccountWithdraw(f *testing.F)    { fuzzRoute(f, "POST /subaccount/{id}/withdraw") }
func FuzzSubaccountDebit(f *testing.F)       { fuzzRoute(f, "POST /subaccount/{id}/debit") }
func FuzzSubaccountCredit(f *testing.F)      { fuzzRoute(f, "POST /subaccount/{id}/credit") }
func FuzzTransferCreate(f *testing.F)        { fuzzRoute(f, "POST /transfer") }
func FuzzPaymentCreate(f *testing.F)         { fuzzRoute(f, "POST /payment") }
func FuzzPaymentApprove(f *testing.F)        { fuzzRoute(f, "POST /payment/approve") }
func FuzzSubscriptionCreate(f *testing.F)    { fuzzRoute(f, "POST /subscriptions") }
func FuzzWebhookCreate(f *testing.F)         { fuzzRoute(f, "POST /webhook") }
func FuzzCashbackCreate(f *testing.F)        { fuzzRoute(f, "POST /cashback-fidelity") }
func FuzzApplicationCreate(f *testing.F)     { fuzzRoute(f, "POST /application") }
func FuzzApplicationDelete(f *testing.F)     { fuzzRoute(f, "DELETE /application") }
func FuzzPreRegistrationCreate(f *testing.F) { fuzzRoute(f, "POST /partner/company") }
func FuzzPartnerApplication(f *testing.F)    { fuzzRoute(f, "POST /partner/application") }
func FuzzSandboxClockAdvance(f *testing.F)   { fuzzRoute(f, "POST /openpix/testing/clock") }
func FuzzSubscriptionValue(f *testing.F)     { fuzzRoute(f, "PUT /subscriptions/{id}/value") }
func FuzzInstallmentCobr(f *testing.F)       { fuzzRoute(f, "POST /installments/{id}/cobr") }
func FuzzInstallmentCobrRetry(f *testing.F)  { fuzzRoute(f, "POST /installments/{id}/cobr/retry") }
func FuzzPixAutomaticFailNext(f *testing.F)  { fuzzRoute(f, pixAutomaticFailNext) }

// fuzzTargets are the routes with a fuzz target above. The spec's webhook path is the
// same handler as POST /webhook.
var fuzzTargets = []string{
	"POST /pix-keys", "POST /pix-keys/check",
	"POST /dispute/{id}/evidence", "POST /openpix/testing/dispute", "POST /openpix/testing/dispute/{id}/decide",
	"POST /customer", "PATCH /customer/{id}", "POST /charge", "POST /charge/{id}/refund", "PATCH /charge/{id}", "POST /qrcode-static",
	"POST /decode/emv", "POST /refund", "POST /account", "POST /account/{accountId}",
	"POST /account/{accountId}/withdraw", "POST /subaccount", "POST /subaccount/transfer",
	"POST /subaccount/{id}/withdraw", "POST /subaccount/{id}/debit", "POST /subaccount/{id}/credit",
	"POST /transfer", "POST /payment", "POST /payment/approve", "POST /subscriptions", "POST /webhook",
	"POST /cashback-fidelity", "POST /application", "DELETE /application", "POST /partner/company",
	"POST /partner/application", "POST /openpix/testing/clock", "POST /openpix/api/v1/webhook",
	"PUT /subscriptions/{id}/value", "POST /installments/{id}/cobr", "POST /installments/{id}/cobr/retry", pixAutomaticFailNext,
}

const pixAutomaticFailNext = "POST /openpix/testing/pix-automatic/{id}/fail-next-debit"

// fuzzBodies are valid bodies for the fuzz server's records, ahead of validBodies
// (routes_test.go). ACCOUNT_ID, DEFAULT_KEY and OTHER_APP stand for the default account's
// id, its Pix key and the client id of an application of the company.
var fuzzBodies = map[string]string{
	"POST /charge": `{"correlationID":"junk-charge","value":1000,"type":"OVERDUE","daysForDueDate":2,"customer":{"name":"A","taxID":"52998224725"},
		"interests":{"value":10},"fines":{"value":10},"discountSettings":{"modality":"VALUE_PER_RUNNING_DAY_ADVANCE","value":1},
		"additionalInfo":[{"key":"k","value":"v"}],"splits":[{"value":10,"pixKey":"sub@example.com"}]}`,
	"POST /decode/emv":             `{"emv":"00020101021226700014br.gov.bcb.pix2548pix.example.com/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***630464E4"}`,
	"POST /account/{accountId}":    `{"accountId":"ACCOUNT_ID","value":1}`,
	"POST /subaccount/transfer":    `{"value":1,"fromPixKey":"sub@example.com","fromPixKeyType":"EMAIL","toPixKey":"sub2@example.com","toPixKeyType":"EMAIL"}`,
	"POST /transfer":               `{"value":1,"fromPixKey":"DEFAULT_KEY","toPixKey":"other@example.com","correlationID":"junk-transfer"}`,
	"DELETE /application":          `{"clientId":"OTHER_APP"}`,
	"POST /subscriptions":          `{"customer":{"name":"Ana","taxID":"52998224725","email":"ana@example.com"},"value":990,"dayGenerateCharge":22,"chargeType":"DYNAMIC","frequency":"MONTHLY"}`,
	"POST /webhook":                `{"webhook":{"name":"w","url":"https://example.com/hook","event":"OPENPIX:CHARGE_CREATED","authorization":"tok","isActive":true}}`,
	"POST /openpix/testing/clock":  `{"advance":"744h"}`,
	"POST /subaccount/{id}/debit":  `{"value":1,"description":"d","correlationID":"junk-debit"}`,
	"POST /subaccount/{id}/credit": `{"value":1,"description":"d","correlationID":"junk-credit"}`,
}

// fuzzServer is the handler over a memory-store Service with records behind the path ids
// the targets use: a paid charge and a customer "x", a funded subaccount, the default
// account.
type fuzzServer struct {
	h     http.Handler
	appID string
	paths map[string]string // pattern -> path to send it to
	ids   *strings.Replacer // the placeholders of fuzzBodies -> the records' ids
}

// okSender answers every webhook delivery (the test call on create) 200, without a network.
type okSender struct{}

func (okSender) SendWebhook(context.Context, payments.WebhookRequest) (payments.WebhookResponse, error) {
	return payments.WebhookResponse{Status: http.StatusOK}, nil
}

const fuzzSubaccountKey = "sub@example.com"

// newFuzzServer builds the fuzz server. Each route's path names a record that exists: a
// subaccount route's {id} is the funded subaccount, a charge's or customer's is "x" (paid;
// the expiry change's is "open", unpaid), an account's the default account; any other
// wildcard is "x".
func newFuzzServer(tb testing.TB) fuzzServer {
	tb.Helper()
	ctx := context.Background()
	clock := payments.NewOffsetClock(payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)))
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, WebhookSender: okSender{}, WebhookSigningKey: signingKey(tb)})
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(err)
	app, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "fuzz"})
	must(err)
	c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "x", Value: 100000})
	must(err)
	_, err = svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200junk0000001", Value: 100000, TxID: c.Identifier[:25]})
	must(err)
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "open", Value: 100}) // unpaid: its expiry can move
	must(err)
	_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "x", Email: "x@example.com", CorrelationID: "x"})
	must(err)
	for _, key := range []string{fuzzSubaccountKey, "sub2@example.com"} {
		_, _, err = svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: key, Name: "sub"})
		must(err)
	}
	_, err = svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: fuzzSubaccountKey, Value: 10000, CorrelationID: "fund-sub"})
	must(err)
	_, err = svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "other@example.com", Name: "other"})
	must(err)
	other, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "other"})
	must(err)
	accounts, _, err := svc.ListAccounts(ctx, payments.ListParams{})
	must(err)
	def := accounts[slices.IndexFunc(accounts, func(a payments.Account) bool { return a.IsDefault })]

	opts := Options{Logger: slog.New(slog.DiscardHandler), Sandbox: true, Clock: clock}
	apiPatterns, rootPatterns := addRoutes(http.NewServeMux(), svc, opts)
	s := fuzzServer{h: New(svc, opts), appID: app.AppID(), paths: map[string]string{},
		ids: strings.NewReplacer("ACCOUNT_ID", def.AccountID, "DEFAULT_KEY", def.PixKey, "OTHER_APP", other.ClientID)}
	ids := strings.NewReplacer("{id}/", fuzzSubaccountKey+"/", "{accountId}", def.AccountID, "{$}", "")
	wildcard := regexp.MustCompile(`\{[^}$]*\}`)
	for _, p := range apiPatterns {
		path := ids.Replace(strings.SplitN(p, " ", 2)[1])
		if strings.HasPrefix(path, "/charge/") || strings.HasPrefix(path, "/customer/") {
			path = strings.Replace(path, fuzzSubaccountKey, "x", 1)
		}
		s.paths[p] = "/api/v1" + wildcard.ReplaceAllString(path, "x")
	}
	for _, p := range rootPatterns {
		s.paths[p] = wildcard.ReplaceAllString(strings.SplitN(p, " ", 2)[1], "x")
	}
	s.paths["PATCH /charge/{id}"] = "/api/v1/charge/open" // "x" is paid
	maps.Copy(s.paths, fuzzDisputePaths(tb, svc))
	return s
}

// send sends body to the route of pattern and returns the recorded reply.
func (s fuzzServer) send(tb testing.TB, pattern, body string) *httptest.ResponseRecorder {
	tb.Helper()
	path, ok := s.paths[pattern]
	if !ok {
		tb.Fatalf("no route %q", pattern)
	}
	r := httptest.NewRequest(strings.SplitN(pattern, " ", 2)[0], path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", s.appID)
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

// fuzzRoute is the fuzz target of one route (see the top of this file).
func fuzzRoute(f *testing.F, pattern string) {
	s := newFuzzServer(f)
	for _, b := range fuzzSeeds(f, s.validBody(pattern)) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := s.send(t, pattern, body)
		if msg := replyProblem(w); msg != "" {
			t.Fatalf("%s %.300q: %s", pattern, body, msg)
		}
	})
}

// replyProblem says what is wrong with a reply to a client's body: "" for a JSON 2xx, or a
// 4xx with a JSON {"error": "<message>"}.
func replyProblem(w *httptest.ResponseRecorder) string {
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return "Content-Type " + ct + ", not JSON: " + w.Body.String()
	}
	switch {
	case w.Code >= 200 && w.Code < 300:
		return ""
	case w.Code >= 400 && w.Code < 500:
		var e struct {
			Error *string `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == nil || strings.TrimSpace(*e.Error) == "" {
			return "a rejection without an error message: " + w.Body.String()
		}
		return ""
	}
	return http.StatusText(w.Code) + ": " + w.Body.String()
}

// fuzzSeeds are the route's valid body, the junk bodies (the small ones: a seed is mutated
// on every exec), and the valid body with each field in turn replaced by a junk value.
func fuzzSeeds(tb testing.TB, valid string) []string {
	seeds := []string{}
	if valid != "" {
		seeds = append(seeds, valid)
	}
	for _, b := range junkBodies {
		if len(b) <= 1024 {
			seeds = append(seeds, b)
		}
	}
	base := map[string]json.RawMessage{}
	if valid != "" {
		if err := json.Unmarshal([]byte(valid), &base); err != nil {
			tb.Fatalf("valid body %s: %v", valid, err)
		}
	}
	for i, field := range slices.Sorted(maps.Keys(base)) {
		b := maps.Clone(base)
		b[field] = json.RawMessage(junkValues[i%len(junkValues)])
		body, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, string(body))
	}
	return seeds
}

// validBody is a body the route of pattern accepts ("" for the spec's webhook path).
func (s fuzzServer) validBody(pattern string) string {
	if b, ok := fuzzBodies[pattern]; ok {
		return s.ids.Replace(b)
	}
	return validBodies[pattern]
}

// TestFuzz_EveryBodyRouteHasATarget finds the routes that read a JSON body (those that
// answer a body of "[" with "request body must be a JSON object") and checks each has a
// fuzz target, and that every target's route reads one.
func TestFuzz_EveryBodyRouteHasATarget(t *testing.T) {
	t.Parallel()
	s := newFuzzServer(t)
	readers := map[string]bool{}
	for pattern := range s.paths {
		if strings.HasPrefix(pattern, "GET ") {
			continue
		}
		w := s.send(t, pattern, "[")
		if w.Code == http.StatusBadRequest && strings.Contains(w.Body.String(), "request body must be a JSON object") {
			readers[pattern] = true
		}
	}
	if len(readers) < 20 {
		t.Fatalf("only %d routes read a body: %v", len(readers), readers)
	}
	for pattern := range readers {
		if !slices.Contains(fuzzTargets, pattern) {
			t.Errorf("%s reads a JSON body but has no fuzz target (fuzz_test.go)", pattern)
		}
	}
	for _, pattern := range fuzzTargets {
		if !readers[pattern] {
			t.Errorf("fuzz target %s: the route does not read a JSON body", pattern)
		}
	}
}

// TestFuzz_SeedsReachPastDecoding checks that each target's valid seed is accepted, so that
// the fuzzer starts from bodies that reach validation and the Service, not only decode.
func TestFuzz_SeedsReachPastDecoding(t *testing.T) {
	t.Parallel()
	s := newFuzzServer(t)
	for _, pattern := range fuzzTargets {
		body := s.validBody(pattern)
		if body == "" {
			continue // the spec's webhook path: POST /webhook's seed
		}
		if w := s.send(t, pattern, body); w.Code/100 != 2 {
			t.Errorf("%s %s: %d %s", pattern, body, w.Code, w.Body.String())
		}
	}
}

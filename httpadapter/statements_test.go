package httpadapter_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// The item properties of the document's statements (openpix.json and woovi.json agree).
var (
	statementLineKeys           = []string{"balance", "description", "id", "time", "transactionId", "type", "value"}
	subaccountStatementLineKeys = []string{"balance", "description", "id", "operationType", "time", "type", "value"}
)

// statementOf GETs a statement and decodes its bare array, checking each line's keys and
// types against the document.
func statementOf(t *testing.T, s server, path, appID string, keys []string) []map[string]any {
	t.Helper()
	w := s.raw(t, "GET", path, appID)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	var lines []map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &lines); err != nil {
		t.Fatalf("GET %s: %s is not an array of objects: %v", path, w.Body, err)
	}
	if lines == nil {
		t.Fatalf("GET %s: null, not an array", path)
	}
	for i, l := range lines {
		if got := slices.Sorted(maps.Keys(l)); !slices.Equal(got, keys) {
			t.Fatalf("line %d: keys %v, the document's are %v", i, got, keys)
		}
		for _, k := range []string{"id", "time", "description"} {
			if s, ok := l[k].(string); !ok || s == "" {
				t.Fatalf("line %d: %s is %v, want a string", i, k, l[k])
			}
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z07:00", l["time"].(string)); err != nil {
			t.Fatalf("line %d: time %v: %v", i, l["time"], err) // date-time, three fraction digits
		}
		for _, k := range []string{"balance", "value"} {
			if _, ok := l[k].(float64); !ok {
				t.Fatalf("line %d: %s is %v, want a number", i, k, l[k])
			}
		}
		if l["type"] != "CREDIT" && l["type"] != "DEBIT" {
			t.Fatalf("line %d: type %v", i, l["type"])
		}
	}
	return lines
}

// TestStatements: GET /statement and GET /subaccount/{id}/statement answer the document's
// bare arrays, newest first, reconciling with the balances; skip, limit, start and end
// select; bad input is 400 naming the field; another company reads none of it.
func TestStatements(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	is := is.New(t)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"vendedor@example.com","name":"Vendedor"}`), http.StatusOK)
	c := s.createCharge(t, s.appID, `{"correlationID":"c1","value":5000}`)
	x := s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	s.clock.Advance(time.Hour)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/credit", s.appID, `{"value":1500}`), http.StatusOK)
	s.clock.Advance(time.Hour)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/withdraw", s.appID, `{"value":400}`), http.StatusOK)
	acct, err := s.svc.DefaultAccount(ctx)
	is.NoErr(err)

	t.Run("Company", func(t *testing.T) {
		is := is.New(t)
		lines := statementOf(t, s, "/api/v1/statement", s.appID, statementLineKeys)
		is.Equal(len(lines), 2)
		is.Equal(lines[0]["type"], "DEBIT") // the credit to the subaccount, newest first
		is.Equal(lines[0]["value"], 1500.0)
		is.Equal(lines[0]["balance"], float64(acct.Balance.Available)) // reconciles with the balance
		is.Equal(lines[1]["type"], "CREDIT")
		is.Equal(lines[1]["balance"], lines[1]["value"])        // the first movement of the book
		is.Equal(lines[1]["transactionId"], str(x, "globalID")) // names the Pix
		is.Equal(lines[1]["time"], "2026-11-22T12:00:00.000Z")  // three fraction digits
		legacy := statementOf(t, s, "/api/openpix/v1/statement", s.appID, statementLineKeys)
		is.Equal(legacy, lines) // under the legacy prefix too
	})
	t.Run("Subaccount", func(t *testing.T) {
		is := is.New(t)
		lines := statementOf(t, s, "/api/v1/subaccount/vendedor@example.com/statement", s.appID, subaccountStatementLineKeys)
		is.Equal(len(lines), 2)
		is.Equal(lines[0]["operationType"], "WITHDRAWAL")
		is.Equal(lines[0]["balance"], 1100.0)
		is.Equal(lines[1]["operationType"], "CREDIT")
		is.Equal(lines[1]["balance"], 1500.0)
		sa, err := s.svc.GetSubaccount(ctx, "vendedor@example.com")
		is.NoErr(err)
		is.Equal(lines[0]["balance"], float64(sa.Balance)) // reconciles with the balance
	})
	t.Run("Paging", func(t *testing.T) {
		is := is.New(t)
		all := statementOf(t, s, "/api/v1/statement", s.appID, statementLineKeys)
		is.Equal(statementOf(t, s, "/api/v1/statement?skip=1&limit=1", s.appID, statementLineKeys), all[1:2])
		is.Equal(len(statementOf(t, s, "/api/v1/statement?skip=2", s.appID, statementLineKeys)), 0) // [] past the end
		is.Equal(statementOf(t, s, "/api/v1/statement?start=2026-11-22T12:00:00Z&end=2026-11-22T09:30:00-03:00", s.appID, statementLineKeys), all[1:2])
		is.Equal(statementOf(t, s, "/api/v1/statement?start=2026-11-22T12:00:00.001Z", s.appID, statementLineKeys), all[:1])
		sub := statementOf(t, s, "/api/v1/subaccount/vendedor@example.com/statement", s.appID, subaccountStatementLineKeys)
		is.Equal(statementOf(t, s, "/api/v1/subaccount/vendedor@example.com/statement?end=2026-11-22T13:00:00.000Z", s.appID, subaccountStatementLineKeys), sub[1:])
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		for _, tc := range []struct{ query, field string }{
			{"start=yesterday", "start"},
			{"end=2026-13-01T00:00:00Z", "end"},
			{"start=2026-11-23T00:00:00Z&end=2026-11-22T00:00:00Z", "end"},
			{"start=10000-01-01T00:00:00Z", "start"},
			{"skip=-1", "skip"},
			{"limit=0", "limit"},
			{"limit=abc", "limit"},
		} {
			for _, path := range []string{"/api/v1/statement", "/api/v1/subaccount/vendedor@example.com/statement"} {
				t.Run(path+"?"+tc.query, func(t *testing.T) {
					is := is.New(t)
					r := s.do(t, "GET", path+"?"+tc.query, s.appID, "")
					mustStatus(t, is, r, http.StatusBadRequest)
					is.True(len(r.errMsg()) > 0)
					is.True(strings.Contains(r.errMsg(), tc.field)) // names the field
				})
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/subaccount/ninguem@example.com/statement", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // the document's answer to an unknown subaccount
		is.Equal(r.errMsg(), "Subaccount not found: ninguem@example.com")
	})
	t.Run("OtherCompany", func(t *testing.T) {
		is := is.New(t)
		second := s.newCompany(t, "Outra Loja", "11222333000181")
		is.Equal(len(statementOf(t, s, "/api/v1/statement", second, statementLineKeys)), 0) // its own, empty
		r := s.do(t, "GET", "/api/v1/subaccount/vendedor@example.com/statement", second, "")
		mustStatus(t, is, r, http.StatusBadRequest) // not the first company's subaccount
		is.Equal(r.errMsg(), "Subaccount not found: vendedor@example.com")
		r = s.do(t, "GET", "/api/v1/statement", "", "")
		mustStatus(t, is, r, http.StatusUnauthorized) // behind auth
	})
}

package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// TestAccountsAndTransfers: a second account over the wire, then transfers between the
// company's accounts by Pix key, each refusal a 400 that moves nothing.
func TestAccountsAndTransfers(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	var defaultKey, defaultID, caixaID string

	// balances are the available balances of the default account and caixa.
	balances := func(t *testing.T) []int {
		t.Helper()
		var out []int
		for _, id := range []string{defaultID, caixaID} {
			r := s.do(t, "GET", "/api/v1/account/"+id, s.appID, "")
			mustStatus(t, is.New(t), r, http.StatusOK)
			out = append(out, num(r.body, "account", "balance", "available"))
		}
		return out
	}

	t.Run("CreateAccount", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/account", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		def := list(r.body, "accounts")[0]
		defaultID, defaultKey = str(def, "accountId"), str(def, "pixKey")
		co, err := s.svc.GetCompany(ctx)
		is.NoErr(err)
		is.Equal(defaultKey, co.PixKey) // the default account shows the company's key

		r = s.do(t, "POST", "/api/v1/account", s.appID, `{"pixKey":"caixa@loja.example.com","name":"Caixa"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"account"})
		is.Equal(keys(get(r.body, "account")), []string{"accountId", "accountName", "balance", "createdAt", "isDefault", "pixKey"})
		is.Equal(str(r.body, "account", "pixKey"), "caixa@loja.example.com")
		is.Equal(str(r.body, "account", "accountName"), "Caixa")
		is.Equal(get(r.body, "account", "isDefault"), false)
		is.Equal(get(r.body, "account", "balance"), map[string]any{"total": 0.0, "blocked": 0.0, "available": 0.0})
		caixaID = str(r.body, "account", "accountId")

		r = s.do(t, "POST", "/api/v1/account", s.appID, "") // the real API's bodiless "duplicate"
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(str(r.body, "account", "pixKey")), 36) // with a random key
		r = s.do(t, "POST", "/api/openpix/v1/account", s.appID, "{}")
		mustStatus(t, is, r, http.StatusOK) // an empty object is no body too

		r = s.do(t, "GET", "/api/v1/account/"+caixaID, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "account", "pixKey"), "caixa@loja.example.com") // get shows the key
		r = s.do(t, "GET", "/api/v1/account", s.appID, "")
		is.Equal(len(list(r.body, "accounts")), 4) // list shows all of them
		for _, a := range list(r.body, "accounts") {
			is.True(str(a, "pixKey") != "") // each with its key
		}
	})
	t.Run("CreateAccountRefused", func(t *testing.T) {
		for _, tc := range []struct{ name, body, want string }{
			{"KeyTaken", `{"pixKey":"caixa@loja.example.com"}`, "pixKey caixa@loja.example.com is the Pix key of another account of the company"},
			{"CompanyKey", `{"pixKey":"` + defaultKey + `"}`, "pixKey " + defaultKey + " is the Pix key of the company's default account"},
			{"BadKey", `{"pixKey":"not a key"}`, "pixKey is not a valid Pix key"},
			{"NameType", `{"name":5}`, "name must be a string"},
			{"NotJSON", `[]`, "request body must be a JSON object"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/account", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
		r := s.do(t, "GET", "/api/v1/account", s.appID, "")
		is.New(t).Equal(len(list(r.body, "accounts")), 4) // none created
	})
	t.Run("Transfer", func(t *testing.T) {
		is := is.New(t)
		c := s.createCharge(t, s.appID, `{"correlationID":"fund","value":2000}`)
		s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
		is.Equal(balances(t), []int{1950, 0}) // the charge's net value

		body := `{"value":500,"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com","correlationID":"tr-1"}`
		r := s.do(t, "POST", "/api/v1/transfer", s.appID, body)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"transaction"})
		is.Equal(keys(get(r.body, "transaction")), []string{"correlationID", "time", "value"}) // the reference's shape
		is.Equal(num(r.body, "transaction", "value"), 500)
		is.Equal(str(r.body, "transaction", "correlationID"), "tr-1")
		is.Equal(str(r.body, "transaction", "time"), "2026-11-22T12:00:00.000Z")
		is.Equal(balances(t), []int{1450, 500})

		s.clock.Advance(time.Minute)
		again := s.do(t, "POST", "/api/openpix/v1/transfer", s.appID, body)
		mustStatus(t, is, again, http.StatusOK)
		is.Equal(again.body, r.body)            // the first transfer again
		is.Equal(balances(t), []int{1450, 500}) // moved once
	})
	t.Run("TransferRefused", func(t *testing.T) {
		for _, tc := range []struct{ name, body, want string }{
			{"Conflict", `{"value":501,"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com","correlationID":"tr-1"}`, `a different transfer with correlationID "tr-1" already exists`},
			{"Zero", `{"value":0,"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com"}`, "value must be a positive number of centavos"},
			{"Negative", `{"value":-1,"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com"}`, "value must be a positive number of centavos"},
			{"NoValue", `{"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com"}`, "value must be a positive number of centavos"},
			{"Float", `{"value":1.5,"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com"}`, "value must be a whole number of centavos"},
			{"String", `{"value":"1","fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com"}`, "value must be a whole number of centavos"},
			{"AboveAvailable", `{"value":501,"fromPixKey":"caixa@loja.example.com","toPixKey":"` + defaultKey + `"}`, "Account does not have enough balance to complete the operation"},
			{"UnknownFrom", `{"value":1,"fromPixKey":"nobody@example.com","toPixKey":"caixa@loja.example.com"}`, "Account not found for fromPixKey nobody@example.com"},
			{"UnknownTo", `{"value":1,"fromPixKey":"caixa@loja.example.com","toPixKey":"nobody@example.com"}`, "Account not found for toPixKey nobody@example.com"},
			{"MalformedFrom", `{"value":1,"fromPixKey":"a@","toPixKey":"caixa@loja.example.com"}`, "fromPixKey is not a valid Pix key"},
			{"NoTo", `{"value":1,"fromPixKey":"caixa@loja.example.com"}`, "toPixKey is required"},
			{"TypeMismatch", `{"value":1,"fromPixKey":"caixa@loja.example.com","fromPixKeyType":"CPF","toPixKey":"` + defaultKey + `"}`, "fromPixKey is not a valid CPF Pix key"},
			{"UnknownType", `{"value":1,"fromPixKey":"caixa@loja.example.com","toPixKey":"` + defaultKey + `","toPixKeyType":"IBAN"}`, "toPixKeyType"},
			{"SameAccount", `{"value":1,"fromPixKey":"caixa@loja.example.com","toPixKey":"CAIXA@loja.example.com"}`, "toPixKey must name another account than fromPixKey"},
			{"NoBody", ``, "request body is required"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/transfer", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
		is := is.New(t)
		is.Equal(balances(t), []int{1450, 500}) // nothing moved
	})
	t.Run("OtherCompany", func(t *testing.T) {
		is := is.New(t)
		second := s.newCompany(t, "Outra Loja", "11222333000181")
		r := s.do(t, "POST", "/api/v1/transfer", second, `{"value":1,"fromPixKey":"caixa@loja.example.com","toPixKey":"`+defaultKey+`"}`)
		mustStatus(t, is, r, http.StatusBadRequest) // cannot move the first company's money
		is.Equal(r.errMsg(), "Account not found for fromPixKey caixa@loja.example.com")
		r = s.do(t, "GET", "/api/v1/account/"+caixaID, second, "")
		mustStatus(t, is, r, http.StatusNotFound) // nor see its accounts
		r = s.do(t, "GET", "/api/v1/account", second, "")
		is.Equal(len(list(r.body, "accounts")), 1) // only its own
		is.Equal(balances(t), []int{1450, 500})
	})
	rep, err := s.svc.Audit(ctx)
	is.New(t).NoErr(err)
	is.New(t).True(rep.OK()) // the ledger agrees
}

// TestSubaccountDebitCredit: POST /subaccount/{pixKey}/debit and /credit move value
// between the subaccount and the company account, with the reference's messages.
func TestSubaccountDebitCredit(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	is := is.New(t)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"vendedor@example.com","name":"Vendedor"}`), http.StatusOK)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"vazio@example.com","name":"Vazio"}`), http.StatusOK)
	c := s.createCharge(t, s.appID, `{"correlationID":"to-sub","value":2000,"subaccount":"vendedor@example.com"}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	r := s.do(t, "GET", "/api/v1/account", s.appID, "")
	accountID := str(list(r.body, "accounts")[0], "accountId")
	// state is the account's available balance and the two subaccounts'.
	state := func(t *testing.T) []int {
		t.Helper()
		r := s.do(t, "GET", "/api/v1/account/"+accountID, s.appID, "")
		out := []int{num(r.body, "account", "balance", "available")}
		for _, k := range []string{"vendedor@example.com", "vazio@example.com"} {
			r := s.do(t, "GET", "/api/v1/subaccount/"+k, s.appID, "")
			out = append(out, num(r.body, "SubAccount", "balance"))
		}
		return out
	}
	is.Equal(state(t), []int{0, 1950, 0})

	t.Run("Debit", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/debit", s.appID, `{"value":700,"description":"comissão"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"pixKey": "vendedor@example.com", "value": 700.0, "description": "comissão",
			"success": "Subaccount debited, 700"}) // the reference's shape
		is.Equal(state(t), []int{700, 1250, 0}) // subaccount -> company account
	})
	t.Run("Credit", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/openpix/v1/subaccount/vazio%40example.com/credit", s.appID, `{"value":200}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"pixKey": "vazio@example.com", "value": 200.0, "description": "", "success": "Subaccount credited, 200"})
		is.Equal(state(t), []int{500, 1250, 200}) // company account -> subaccount
	})
	t.Run("Idempotent", func(t *testing.T) {
		is := is.New(t)
		body := `{"value":50,"description":"x","correlationID":"d-1"}`
		first := s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/debit", s.appID, body)
		mustStatus(t, is, first, http.StatusOK)
		again := s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/debit", s.appID, body)
		mustStatus(t, is, again, http.StatusOK)
		is.Equal(again.body, first.body)
		is.Equal(state(t), []int{550, 1200, 200}) // once
		r := s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/credit", s.appID, body)
		mustStatus(t, is, r, http.StatusBadRequest) // the correlationID is taken by a debit
		is.Equal(r.errMsg(), `a different subaccount debit or credit with correlationID "d-1" already exists`)
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct{ name, path, body, want string }{
			{"Unknown", "nobody@example.com/debit", `{"value":1}`, "Subaccount not found: nobody@example.com"},
			{"UnknownCredit", "nobody@example.com/credit", `{"value":1}`, "Subaccount not found: nobody@example.com"},
			{"Malformed", "not-a-key/debit", `{"value":1}`, "pixKey is not a valid Pix key"},
			{"Zero", "vendedor@example.com/debit", `{"value":0}`, "Value must be positive"},
			{"NoValue", "vendedor@example.com/credit", `{"description":"x"}`, "Value must be positive"},
			{"Negative", "vendedor@example.com/credit", `{"value":-5}`, "Value must be positive"},
			{"Float", "vendedor@example.com/debit", `{"value":0.5}`, "value must be a whole number of centavos"},
			{"Huge", "vendedor@example.com/debit", `{"value":9223372036854775807}`, "value must be a positive number of centavos up to 999999999999"},
			{"EmptySubaccount", "vazio@example.com/debit", `{"value":201}`, "Account does not have enough balance to complete the operation"},
			{"AboveBalance", "vendedor@example.com/debit", `{"value":1201}`, "Account does not have enough balance to complete the operation"},
			{"AboveAvailable", "vazio@example.com/credit", `{"value":551}`, "Account does not have enough balance to complete the operation"},
			{"DescriptionType", "vendedor@example.com/debit", `{"value":1,"description":5}`, "description must be a string"},
			{"NoBody", "vendedor@example.com/debit", ``, "request body is required"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/subaccount/"+tc.path, s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
		is := is.New(t)
		is.Equal(state(t), []int{550, 1200, 200}) // nothing moved
		mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount/vazio@example.com/debit", s.appID, `{"value":200}`), http.StatusOK)
		r := s.do(t, "POST", "/api/v1/subaccount/vazio@example.com/debit", s.appID, `{"value":1}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Transfer just work with subaccount with balance") // a subaccount with nothing in it
		is.Equal(state(t), []int{750, 1200, 0})
	})
	t.Run("OtherCompany", func(t *testing.T) {
		is := is.New(t)
		second := s.newCompany(t, "Outra Loja", "11222333000181")
		for _, op := range []string{"debit", "credit"} {
			r := s.do(t, "POST", "/api/v1/subaccount/vendedor@example.com/"+op, second, `{"value":1}`)
			mustStatus(t, is, r, http.StatusBadRequest) // not its subaccount
			is.Equal(r.errMsg(), "Subaccount not found: vendedor@example.com")
		}
		is.Equal(state(t), []int{750, 1200, 0})
	})
	rep, err := s.svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK()) // the ledger agrees
}

// Transfers and a subaccount's debit and credit take their correlationID as the
// Idempotency-Key header too, as withdrawals do: a retry moves nothing, and a body and
// header that disagree are a 400.
func TestMoves_IdempotencyKey(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	is := is.New(t)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"vendedor@example.com","name":"Vendedor"}`), http.StatusOK)
	mustStatus(t, is, s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"vazio@example.com","name":"Vazio"}`), http.StatusOK)
	c := s.createCharge(t, s.appID, `{"correlationID":"to-sub","value":2000,"subaccount":"vendedor@example.com"}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	r := s.do(t, "POST", "/api/v1/account", s.appID, `{"pixKey":"caixa@loja.example.com","name":"Caixa"}`)
	mustStatus(t, is, r, http.StatusOK)
	caixaID := str(r.body, "account", "accountId")
	var defaultID, defaultKey string
	for _, a := range list(s.do(t, "GET", "/api/v1/account", s.appID, "").body, "accounts") {
		if get(a, "isDefault") == true {
			defaultID, defaultKey = str(a, "accountId"), str(a, "pixKey")
		}
	}
	state := func(t *testing.T) []int {
		t.Helper()
		var out []int
		for _, id := range []string{defaultID, caixaID} {
			r := s.do(t, "GET", "/api/v1/account/"+id, s.appID, "")
			out = append(out, num(r.body, "account", "balance", "available"))
		}
		for _, k := range []string{"vendedor@example.com", "vazio@example.com"} {
			r := s.do(t, "GET", "/api/v1/subaccount/"+k, s.appID, "")
			out = append(out, num(r.body, "SubAccount", "balance"))
		}
		return out
	}
	is.Equal(state(t), []int{0, 0, 1950, 0})

	for _, step := range []struct{ path, body, key string }{
		{"/api/v1/subaccount/vendedor@example.com/debit", `{"value":500}`, "d-1"},
		{"/api/v1/subaccount/vazio@example.com/credit", `{"value":100}`, "c-1"},
		{"/api/v1/subaccount/transfer", `{"value":30,"fromPixKey":"vendedor@example.com","fromPixKeyType":"EMAIL","toPixKey":"vazio@example.com","toPixKeyType":"EMAIL"}`, "t-1"},
		{"/api/v1/transfer", `{"value":70,"fromPixKey":"` + defaultKey + `","toPixKey":"caixa@loja.example.com"}`, "t-2"},
	} {
		for range 2 {
			mustStatus(t, is, s.do(t, "POST", step.path, s.appID, step.body, "Idempotency-Key", step.key), http.StatusOK)
		}
	}
	is.Equal(state(t), []int{500 - 100 - 70, 70, 1950 - 500 - 30, 100 + 30}) // each once

	r = s.do(t, "POST", "/api/v1/transfer", s.appID, `{"value":1,"fromPixKey":"`+defaultKey+`","toPixKey":"caixa@loja.example.com","correlationID":"a"}`, "Idempotency-Key", "b")
	mustStatus(t, is, r, http.StatusBadRequest) // body and header disagree
	is.True(strings.Contains(r.errMsg(), "Idempotency-Key"))
	is.Equal(state(t), []int{330, 70, 1420, 130}) // nothing moved
}

package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestAccountWithdraw(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	fundOverHTTP(t, s, "fund", 100000) // 99500 after the fee
	r := s.do(t, "GET", "/api/v1/account/", s.appID, "")
	accountID := str(list(r.body, "accounts")[0], "accountId")
	t.Run("SpecPath", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/account/"+accountID+"/withdraw", s.appID, `{"value":1000}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"withdraw"})
		is.Equal(num(r.body, "withdraw", "account", "balance", "total"), 99500-1000-100) // value and the fee
		is.Equal(num(r.body, "withdraw", "transaction", "value"), 1000)
		e2e := str(r.body, "withdraw", "transaction", "endToEndId")
		is.Equal(len(e2e), 32)
		r = s.do(t, "GET", "/api/v1/transaction?withdrawal="+e2e, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		xs := list(r.body, "transactions")
		is.Equal(len(xs), 1) // the withdrawal filter
		is.Equal(str(xs[0], "type"), "WITHDRAW")
		is.Equal(str(xs[0], "withdraw", "endToEndId"), e2e) // the withdraw object
		is.Equal(num(xs[0], "withdraw", "value"), 1000)
		r = s.do(t, "GET", "/api/v1/transaction/"+e2e, s.appID, "")
		is.Equal(str(r.body, "transaction", "withdraw", "endToEndId"), e2e)
	})
	t.Run("NodeSDKPath", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/account/"+accountID, s.appID, `{"accountId":"`+accountID+`","value":60000}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"account", "transaction"}) // the Node SDK's shape
		is.Equal(num(r.body, "transaction", "fee"), 0)             // above the minimum free amount
	})
	t.Run("Errors", func(t *testing.T) {
		before := s.do(t, "GET", "/api/v1/account/", s.appID, "").raw
		for _, tc := range []struct {
			name, path, body string
			status           int
			want             string
		}{
			{"Zero", "/api/v1/account/" + accountID + "/withdraw", `{"value":0}`, 400, "value must be"},
			{"Negative", "/api/v1/account/" + accountID + "/withdraw", `{"value":-10}`, 400, "value must be"},
			{"TooMuch", "/api/v1/account/" + accountID + "/withdraw", `{"value":99999999}`, 400, "not enough available balance"},
			{"OtherAccountInBody", "/api/v1/account/" + accountID, `{"accountId":"x","value":1}`, 400, "accountId"},
			{"UnknownAccount", "/api/v1/account/nope/withdraw", `{"value":1}`, 404, "Account not found"},
			{"NoBody", "/api/v1/account/" + accountID + "/withdraw", ``, 400, "request body is required"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", tc.path, s.appID, tc.body)
				mustStatus(t, is, r, tc.status)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
		is := is.New(t)
		is.Equal(s.do(t, "GET", "/api/v1/account/", s.appID, "").raw, before) // nothing moved
	})
	is := is.New(t)
	rep, err := s.svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK())
}

// TestSubaccountWithdraw is raw HTTP: the Node SDK 1.3.3 cannot send this request.
func TestSubaccountWithdraw(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	r := s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"joao@example.com","name":"Joao"}`)
	mustStatus(t, is.New(t), r, http.StatusOK)
	c := s.createCharge(t, s.appID, `{"correlationID":"c1","value":5000,"subaccount":"joao@example.com"}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	r = s.do(t, "GET", "/api/v1/subaccount/joao@example.com", s.appID, "")
	funded := num(r.body, "SubAccount", "balance")
	t.Run("Value", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/subaccount/joao@example.com/withdraw", s.appID, `{"value":1000}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"transaction", "withdraw"})                    // the example's key and the schema's
		is.Equal(r.body["withdraw"], map[string]any{"account": r.body["transaction"]}) // the same withdrawal
		is.Equal(str(r.body, "transaction", "status"), "CREATED")
		is.Equal(num(r.body, "transaction", "value"), 1000)
		is.Equal(str(r.body, "transaction", "destinationAlias"), "joao@example.com") // its own key
		is.True(str(r.body, "transaction", "correlationID") != "")
		is.True(str(r.body, "transaction", "comment") != "")
		r = s.do(t, "GET", "/api/v1/subaccount/joao@example.com", s.appID, "")
		is.Equal(num(r.body, "SubAccount", "balance"), funded-1000)
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tc := range []struct{ name, key, body, want string }{
			{"Zero", "joao@example.com", `{"value":0}`, "value must be a positive number"},
			{"Negative", "joao@example.com", `{"value":-1}`, "value must be a positive number"},
			{"TooMuch", "joao@example.com", `{"value":999999}`, "subaccount joao@example.com does not have enough balance"},
			{"Float", "joao@example.com", `{"value":1.5}`, "value must be a whole number of centavos"},
			{"Unknown", "nobody@example.com", `{}`, "Subaccount not found: nobody@example.com"},
			{"BadKey", "not-a-key", `{}`, "pixKey is not a valid Pix key"},
			{"Misspelled", "joao@example.com", `{"valeu":100}`, `unknown field "valeu": this request takes only value and correlationID`}, // not the whole balance
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/subaccount/"+tc.key+"/withdraw", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
	})
	t.Run("WholeBalanceWithoutBody", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/subaccount/joao@example.com/withdraw", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "transaction", "value"), funded-1000) // no body: the whole balance
		r = s.do(t, "POST", "/api/v1/subaccount/joao@example.com/withdraw", s.appID, `{}`)
		mustStatus(t, is, r, http.StatusBadRequest) // now empty
		is.True(strings.Contains(r.errMsg(), "no balance"))
		r = s.do(t, "POST", "/api/v1/subaccount/joao@example.com/withdraw", s.appID, `{"CorrelationId":"any-case"}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.Contains(r.errMsg(), `unknown field "CorrelationId"`)) // keys match exactly, as JavaScript reads them: not correlationID
	})
	is := is.New(t)
	rep, err := s.svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK())
}

// A withdrawal sent again with its correlationID, in the body or as Idempotency-Key,
// answers the withdrawal made the first time and takes the money once; another value
// under it is a 400 naming it, and a body and header that disagree a 400.
func TestWithdraw_Retried(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	fundOverHTTP(t, s, "fund", 100000) // 99500 after the fee
	r := s.do(t, "GET", "/api/v1/account/", s.appID, "")
	accountID := str(list(r.body, "accounts")[0], "accountId")
	path := "/api/v1/account/" + accountID + "/withdraw"
	is := is.New(t)

	first := s.do(t, "POST", path, s.appID, `{"value":60000}`, "Idempotency-Key", "saque-1")
	mustStatus(t, is, first, http.StatusOK)
	for _, retry := range []response{
		s.do(t, "POST", path, s.appID, `{"value":60000}`, "Idempotency-Key", "saque-1"),
		s.do(t, "POST", path, s.appID, `{"value":60000,"correlationID":"saque-1"}`),
	} {
		mustStatus(t, is, retry, http.StatusOK)
		is.Equal(str(retry.body, "withdraw", "transaction", "withdrawalId"), str(first.body, "withdraw", "transaction", "withdrawalId")) // the same withdrawal
		is.Equal(num(retry.body, "withdraw", "account", "balance", "total"), 99500-60000)                                                // taken once
	}
	r = s.do(t, "POST", path, s.appID, `{"value":1000}`, "Idempotency-Key", "saque-1")
	mustStatus(t, is, r, http.StatusBadRequest) // a conflict, a 400 on this wire as the real API answers duplicates
	is.True(strings.Contains(r.errMsg(), "saque-1"))
	r = s.do(t, "POST", path, s.appID, `{"value":1000,"correlationID":"a"}`, "Idempotency-Key", "b")
	mustStatus(t, is, r, http.StatusBadRequest)
	is.True(strings.Contains(r.errMsg(), "correlationID"))

	r = s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"joao@example.com","name":"Joao"}`)
	mustStatus(t, is, r, http.StatusOK)
	c := s.createCharge(t, s.appID, `{"correlationID":"c1","value":5000,"subaccount":"joao@example.com"}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	sub := "/api/v1/subaccount/joao@example.com/withdraw"
	w1 := s.do(t, "POST", sub, s.appID, `{"correlationID":"saque-joao"}`)
	mustStatus(t, is, w1, http.StatusOK)
	w2 := s.do(t, "POST", sub, s.appID, "", "Idempotency-Key", "saque-joao")
	mustStatus(t, is, w2, http.StatusOK) // not "no balance": the withdrawal made the first time
	is.Equal(str(w2.body, "transaction", "correlationID"), "saque-joao")
	is.Equal(num(w2.body, "transaction", "value"), num(w1.body, "transaction", "value"))

	rep, err := s.svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK())
}

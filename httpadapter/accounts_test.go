package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

func TestAccounts(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	var accountID string

	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		for _, path := range []string{"/api/v1/account", "/api/v1/account/", "/api/v1/account?limit=10&skip=0", "/api/openpix/v1/account/"} {
			r := s.do(t, "GET", path, s.appID, "")
			mustStatus(t, is, r, http.StatusOK) // with and without the spec's trailing slash
			is.Equal(keys(r.body), []string{"accounts", "pageInfo"})
			is.Equal(len(list(r.body, "accounts")), 1)
			a := list(r.body, "accounts")[0]
			is.Equal(get(a, "isDefault"), true)
			is.Equal(get(a, "balance"), map[string]any{"total": 0.0, "blocked": 0.0, "available": 0.0})
			accountID = str(a, "accountId")
		}
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{accountID, "{" + accountID + "}"} {
			r := s.do(t, "GET", "/api/v1/account/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK) // also in the Java SDK's literal braces
			is.Equal(keys(r.body), []string{"account"})
			is.Equal(str(r.body, "account", "accountId"), accountID)
		}
		r := s.do(t, "GET", "/api/v1/account/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusNotFound) // the one lookup the reference documents as 404
		is.Equal(r.errMsg(), "Account not found")
	})
	t.Run("WithdrawNotEnoughBalance", func(t *testing.T) {
		is := is.New(t)
		for _, path := range []string{"/api/v1/account/" + accountID + "/withdraw", "/api/v1/account/" + accountID} {
			r := s.do(t, "POST", path, s.appID, `{"accountId":"`+accountID+`","value":100}`)
			mustStatus(t, is, r, http.StatusBadRequest) // an empty account: nothing to withdraw
			is.True(strings.HasPrefix(r.errMsg(), "not enough available balance"))
		}
	})
}

// TestAccounts_Close: DELETE /account/{accountId} in the official document's shapes, with
// its refusals (balance, already closed, the default account, unknown), and what a closed
// account is afterwards.
func TestAccounts_Close(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	is := is.New(t)
	r := s.do(t, "POST", "/api/v1/account", s.appID, `{"pixKey":"caixa@loja.example.com","name":"Caixa"}`)
	mustStatus(t, is, r, http.StatusOK)
	caixaID := str(r.body, "account", "accountId")
	r = s.do(t, "POST", "/api/v1/account", s.appID, `{"pixKey":"gaveta@loja.example.com"}`)
	mustStatus(t, is, r, http.StatusOK)
	gavetaID := str(r.body, "account", "accountId")
	def, err := s.svc.DefaultAccount(ctx)
	is.NoErr(err)

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "DELETE", "/api/v1/account/"+caixaID, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"accountId": caixaID, "status": "OK"}) // the document's reply
		r = s.do(t, "GET", "/api/v1/account/"+caixaID, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)                                                   // still read by its id
		is.True(strings.HasPrefix(str(r.body, "account", "closedAt"), "2026-11-22T12:00:00")) // when it was closed
		is.Equal(get(r.body, "account", "balance"), map[string]any{"total": 0.0, "blocked": 0.0, "available": 0.0})
		r = s.do(t, "GET", "/api/v1/account", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		for _, a := range list(r.body, "accounts") {
			is.True(str(a, "accountId") != caixaID) // no longer listed
		}
		is.Equal(num(r.body, "pageInfo", "totalCount"), 2)
		r = s.do(t, "POST", "/api/v1/transfer", s.appID, `{"value":1,"fromPixKey":"`+def.PixKey+`","toPixKey":"caixa@loja.example.com"}`)
		mustStatus(t, is, r, http.StatusBadRequest) // its key names no account any more

		r = s.do(t, "DELETE", "/api/openpix/v1/account/{"+caixaID+"}", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // a retry, here in the Java SDK's braces
		is.Equal(r.errMsg(), "Account already closed")
	})
	t.Run("ErrWithBalance", func(t *testing.T) {
		is := is.New(t)
		x, err := s.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200close000001", Value: 2500, PixKey: "gaveta@loja.example.com"})
		is.NoErr(err)
		r := s.do(t, "DELETE", "/api/v1/account/"+gavetaID, s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.HasPrefix(r.errMsg(), "Account with balance cannot be deleted: its balance is R$ ")) // the document's words, and the balance
		r = s.do(t, "GET", "/api/v1/account/"+gavetaID, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(get(r.body, "account", "closedAt"), nil)                     // still open
		is.Equal(num(r.body, "account", "balance", "total"), int(2500-x.Fee)) // with its money

		r = s.do(t, "POST", "/api/v1/transfer", s.appID, `{"value":`+itoa(int(2500-x.Fee))+`,"fromPixKey":"gaveta@loja.example.com","toPixKey":"`+def.PixKey+`"}`)
		mustStatus(t, is, r, http.StatusOK) // the company moves the money out
		r = s.do(t, "DELETE", "/api/v1/account/"+gavetaID, s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // then it closes
	})
	t.Run("ErrDefault", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "DELETE", "/api/v1/account/"+def.AccountID, s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.HasPrefix(r.errMsg(), "The default account cannot be closed"))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{"nope", "%00", strings.Repeat("a", 4000), "{}"} {
			r := s.do(t, "DELETE", "/api/v1/account/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusNotFound) // as the document answers an unknown id
			is.Equal(r.errMsg(), "Account not found")
		}
	})
	t.Run("OtherCompany", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/account", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		mine := str(r.body, "account", "accountId")
		other := s.newCompany(t, "Outra Loja", "11222333000181")
		r = s.do(t, "DELETE", "/api/v1/account/"+mine, other, "")
		mustStatus(t, is, r, http.StatusNotFound) // another company cannot close it
		r = s.do(t, "GET", "/api/v1/account/"+mine, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(get(r.body, "account", "closedAt"), nil) // still open
	})
}

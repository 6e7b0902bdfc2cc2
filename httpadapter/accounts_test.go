package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestAccounts(t *testing.T) {
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

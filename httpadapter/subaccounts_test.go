package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

func TestSubaccounts(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})

	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"loja+1@example.com","name":"Loja 1"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"SubAccount"}) // capital S, as the wire has it
		is.Equal(str(r.body, "SubAccount", "pixKey"), "loja+1@example.com")
		is.Equal(str(r.body, "SubAccount", "name"), "Loja 1")
		is.Equal(get(r.body, "SubAccount", "balance"), 0.0)
		r = s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"loja+1@example.com","name":"Other name"}`)
		mustStatus(t, is, r, http.StatusOK) // the existing one, unchanged
		is.Equal(str(r.body, "SubAccount", "name"), "Loja 1")
		r = s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"loja2@example.com","name":"Loja 2"}`)
		mustStatus(t, is, r, http.StatusOK)
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, path := range []string{"/api/v1/subaccount/loja+1@example.com", "/api/v1/subaccount/loja%2B1%40example.com"} {
			r := s.do(t, "GET", path, s.appID, "")
			mustStatus(t, is, r, http.StatusOK) // the key raw, as the SDKs send it, or encoded
			is.Equal(keys(r.body), []string{"SubAccount"})
			is.Equal(str(r.body, "SubAccount", "name"), "Loja 1")
		}
		r := s.do(t, "GET", "/api/v1/subaccount/nobody@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Subaccount not found: nobody@example.com") // the real API's message
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/subaccount?limit=10&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pageInfo", "subAccounts", "subaccounts"}) // the SDK's key and the document's
		is.Equal(r.body["subaccounts"], r.body["subAccounts"])
		is.Equal(len(list(r.body, "subAccounts")), 2)
	})
	t.Run("Transfer", func(t *testing.T) {
		is := is.New(t)
		c := s.createCharge(t, s.appID, `{"correlationID":"to-sub","value":2000,"subaccount":"loja+1@example.com"}`)
		s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
		r := s.do(t, "GET", "/api/v1/subaccount/loja+1@example.com", s.appID, "")
		is.Equal(num(r.body, "SubAccount", "balance"), 2000-50) // the charge's net value
		r = s.do(t, "POST", "/api/v1/subaccount/transfer", s.appID, `{"value":100,"fromPixKey":"loja+1@example.com","fromPixKeyType":"EMAIL",
			"toPixKey":"loja2@example.com","toPixKeyType":"EMAIL","correlationID":"t1"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "value"), 100)
		is.Equal(str(r.body, "originSubaccount", "pixKey"), "loja+1@example.com")
		is.Equal(num(r.body, "originSubaccount", "balance"), 1850)
		is.Equal(str(r.body, "destinationSubaccount", "pixKey"), "loja2@example.com")
		is.Equal(num(r.body, "destinationSubaccount", "balance"), 100)
		r = s.do(t, "GET", "/api/v1/subaccount/loja2@example.com", s.appID, "")
		is.Equal(num(r.body, "SubAccount", "balance"), 100)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct {
			name, path, body string
			status           int
			want             string
		}{
			{"BadKey", "/api/v1/subaccount", `{"pixKey":"not a key","name":"x"}`, http.StatusBadRequest, "pixKey"},
			{"NoName", "/api/v1/subaccount", `{"pixKey":"x@example.com"}`, http.StatusBadRequest, "name is required"},
			{"EmptyKey", "/api/v1/subaccount", `{"pixKey":"","name":"x"}`, http.StatusBadRequest, "pixKey is required"},
			{"PhoneWithoutCountryCode", "/api/v1/subaccount", `{"pixKey":"(11) 91234-5689","name":"x"}`, http.StatusBadRequest, "pixKey is not a valid Pix key: phone must be +55"},
			{"PhoneAsCPF", "/api/v1/subaccount", `{"pixKey":"11 91234-5689","name":"x"}`, http.StatusBadRequest, "pixKey is not a valid Pix key: CPF check digits do not match; read as a CPF because it has 11 digits: a phone key needs the country code, +5511912345689"},
			{"FloatTransfer", "/api/v1/subaccount/transfer", `{"value":1.5,"fromPixKey":"loja+1@example.com","toPixKey":"loja2@example.com"}`, http.StatusBadRequest, "value must be a whole number of centavos"},
			{"TooMuch", "/api/v1/subaccount/transfer", `{"value":100000,"fromPixKey":"loja+1@example.com","fromPixKeyType":"EMAIL","toPixKey":"loja2@example.com","toPixKeyType":"EMAIL"}`, http.StatusBadRequest, "subaccount loja+1@example.com does not have enough balance"},
			{"NearMaxInt64", "/api/v1/subaccount/transfer", `{"value":9223372036854775807,"fromPixKey":"loja+1@example.com","toPixKey":"loja2@example.com"}`, http.StatusBadRequest, "value must be a positive number of centavos up to 999999999999"},
			{"UnknownDestination", "/api/v1/subaccount/transfer", `{"value":1,"fromPixKey":"loja+1@example.com","toPixKey":"nobody@example.com"}`, http.StatusBadRequest, "Subaccount not found: nobody@example.com"},
			{"BadKeyType", "/api/v1/subaccount/transfer", `{"value":1,"fromPixKey":"loja+1@example.com","fromPixKeyType":"IBAN","toPixKey":"loja2@example.com"}`, http.StatusBadRequest, "fromPixKey"},
			{"WithdrawZero", "/api/v1/subaccount/loja+1@example.com/withdraw", `{"value":0}`, http.StatusBadRequest, "value must be a positive number of centavos"},
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
		r := s.do(t, "GET", "/api/v1/subaccount/loja2@example.com", s.appID, "")
		is.Equal(num(r.body, "SubAccount", "balance"), 100) // no refused transfer moved anything
		rep, err := s.svc.Audit(ctx)
		is.NoErr(err)
		is.True(rep.OK()) // and the ledger agrees
	})
}

// TestSubaccounts_Delete: DELETE /subaccount/{id} in the official document's shapes, with
// its refusals (balance, unknown key), and what is left afterwards.
func TestSubaccounts_Delete(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	is := is.New(t)
	for _, body := range []string{`{"pixKey":"vai+1@example.com","name":"Vai"}`, `{"pixKey":"cheia@example.com","name":"Cheia"}`} {
		r := s.do(t, "POST", "/api/v1/subaccount", s.appID, body)
		mustStatus(t, is, r, http.StatusOK)
	}

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "DELETE", "/api/v1/subaccount/vai%2B1%40example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"pixKey": "vai+1@example.com", "status": "OK"}) // the document's reply
		r = s.do(t, "GET", "/api/v1/subaccount/vai+1@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // gone
		is.Equal(r.errMsg(), "Subaccount not found: vai+1@example.com")
		r = s.do(t, "GET", "/api/v1/subaccount", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "subaccounts")), 1) // only the other one lists
		is.Equal(str(list(r.body, "subaccounts")[0], "pixKey"), "cheia@example.com")
		r = s.do(t, "DELETE", "/api/openpix/v1/subaccount/vai+1@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // a second delete: not found, as the document answers it
		is.Equal(r.errMsg(), "Subaccount not found: vai+1@example.com")
	})
	t.Run("ErrWithBalance", func(t *testing.T) {
		is := is.New(t)
		_, err := s.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200subdel00001", Value: 5000})
		is.NoErr(err) // money in the company account, to credit the subaccount with
		r := s.do(t, "POST", "/api/v1/subaccount/cheia@example.com/credit", s.appID, `{"value":300,"description":"d"}`)
		mustStatus(t, is, r, http.StatusOK)
		r = s.do(t, "DELETE", "/api/v1/subaccount/cheia@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.HasPrefix(r.errMsg(), "Only subaccount without balance can be removed: its balance is R$ 3.00")) // the document's words, and the balance
		r = s.do(t, "GET", "/api/v1/subaccount/cheia@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "SubAccount", "balance"), 300) // untouched

		r = s.do(t, "POST", "/api/v1/subaccount/cheia@example.com/debit", s.appID, `{"value":300,"description":"d"}`)
		mustStatus(t, is, r, http.StatusOK) // the company takes it back
		r = s.do(t, "DELETE", "/api/v1/subaccount/cheia@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // then it goes
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		is := is.New(t)
		for _, key := range []string{"not-a-key", "%00", strings.Repeat("a", 4000)} {
			r := s.do(t, "DELETE", "/api/v1/subaccount/"+key, s.appID, "")
			mustStatus(t, is, r, http.StatusBadRequest)
			is.True(strings.Contains(r.errMsg(), "pixKey")) // naming the field
		}
	})
	t.Run("OtherCompany", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"minha@example.com","name":"Minha"}`)
		mustStatus(t, is, r, http.StatusOK)
		other := s.newCompany(t, "Outra Loja", "11222333000181")
		r = s.do(t, "DELETE", "/api/v1/subaccount/minha@example.com", other, "")
		mustStatus(t, is, r, http.StatusBadRequest) // another company cannot delete it: not found there
		is.Equal(r.errMsg(), "Subaccount not found: minha@example.com")
		r = s.do(t, "GET", "/api/v1/subaccount/minha@example.com", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // still the first company's
	})
}

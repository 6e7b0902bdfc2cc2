package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// TestCompanyIsolation: a second company, registered through the partner routes and using
// its own App ID, can neither read, list, pay, refund nor delete anything of the first
// company's, by any id, and what it does leaves the first company's records as they were.
func TestCompanyIsolation(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	first := s.appID

	// The first company's records: a paid charge (its transaction and a refund), an unpaid
	// charge, a static QR code, a subaccount with money, a pending cashback.
	mustOK := func(r response) response {
		t.Helper()
		mustStatus(t, is.New(t), r, http.StatusOK)
		return r
	}
	mustOK(s.do(t, "POST", "/api/v1/subaccount", first, `{"pixKey":"vendedor@example.com","name":"Vendedor"}`))
	paid := s.createCharge(t, first, `{"correlationID":"paid","value":5000,"customer":{"name":"Ana","taxID":"52998224725","correlationID":"ana"}}`)
	x := s.sandboxPay(t, first, "transactionID="+str(paid, "transactionID"))
	funding := s.createCharge(t, first, `{"correlationID":"funding","value":2000,"subaccount":"vendedor@example.com"}`)
	s.sandboxPay(t, first, "transactionID="+str(funding, "transactionID"))
	other := s.createCharge(t, first, `{"correlationID":"open","value":1000}`)
	qr := get(mustOK(s.do(t, "POST", "/api/v1/qrcode-static", first, `{"name":"Caixa","correlationID":"qr","value":300}`)).body, "pixQrCode")
	mustOK(s.do(t, "POST", "/api/v1/subaccount", first, `{"pixKey":"gerente@example.com","name":"Gerente"}`))
	mustOK(s.do(t, "POST", "/api/v1/refund", first, `{"value":100,"transactionEndToEndId":"`+str(x, "endToEndId")+`","correlationID":"r1"}`))
	mustStatus(t, is.New(t), s.do(t, "POST", "/api/v1/cashback-fidelity", first, `{"taxID":"52998224725","value":10}`), http.StatusCreated)
	accounts := list(mustOK(s.do(t, "GET", "/api/v1/account", first, "")).body, "accounts")
	accountID := str(accounts[0], "accountId")
	before := get(mustOK(s.do(t, "GET", "/api/v1/account/"+accountID, first, "")).body, "account")

	second := s.newCompany(t, "Outra Loja", "11222333000181")

	t.Run("CannotRead", func(t *testing.T) {
		for _, path := range []string{
			"/api/v1/charge/paid", "/api/v1/charge/" + str(paid, "transactionID"), "/api/v1/charge/" + str(paid, "paymentLinkID"),
			"/api/v1/charge/" + str(paid, "globalID"), "/api/v1/charge/" + str(paid, "identifier"), "/api/v1/charge/open",
			"/api/v1/charge/paid/refund",
			"/api/v1/transaction/" + str(x, "endToEndId"), "/api/v1/transaction/" + str(x, "transactionID"),
			"/api/v1/refund/r1",
			"/api/v1/qrcode-static/qr", "/api/v1/qrcode-static/" + str(qr, "identifier"), "/api/v1/qrcode-static/" + str(qr, "id"),
			"/api/v1/subaccount/vendedor@example.com", "/api/v1/subaccount/vendedor@example.com/statement",
			"/api/v1/account/" + accountID,
			"/api/v1/customer/ana",
			"/api/image/qrcode/base64/paid", "/api/image/qrcode/base64/qr",
			"/api/openpix/v1/charge/paid",
		} {
			t.Run(path, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "GET", path, second, "")
				want := http.StatusBadRequest // as if it did not exist: "... not found"
				if strings.HasPrefix(path, "/api/v1/account/") {
					want = http.StatusNotFound // the one lookup the reference documents as 404
				}
				mustStatus(t, is, r, want)
				is.True(strings.Contains(r.errMsg(), "not found")) // and says so
			})
		}
	})
	t.Run("CannotList", func(t *testing.T) {
		for _, tc := range []struct{ path, key string }{
			{"/api/v1/charge", "charges"},
			{"/api/v1/charge?customer=ana", "charges"},
			{"/api/v1/charge?status=COMPLETED", "charges"},
			{"/api/v1/transaction", "transactions"},
			{"/api/v1/transaction?charge=paid", "transactions"},
			{"/api/v1/transaction?charge=" + str(paid, "transactionID"), "transactions"},
			{"/api/v1/transaction?pixQrCode=" + str(qr, "identifier"), "transactions"},
			{"/api/v1/refund", "refunds"},
			{"/api/v1/qrcode-static", "pixQrCodes"},
			{"/api/v1/subaccount", "subAccounts"},
			{"/api/v1/customer", "customers"},
		} {
			t.Run(tc.path, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "GET", tc.path, second, "")
				mustStatus(t, is, r, http.StatusOK)
				is.Equal(len(list(r.body, tc.key)), 0) // nothing of the first company
				is.Equal(num(r.body, "pageInfo", "totalCount"), 0)
			})
		}
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/account", second, "")
		is.Equal(len(list(r.body, "accounts")), 1)                          // only its own account
		is.True(str(list(r.body, "accounts")[0], "accountId") != accountID) // not the first company's
		r = s.do(t, "GET", "/api/v1/cashback-fidelity/balance/52998224725", second, "")
		is.Equal(num(r.body, "balance"), 0) // the first company's promise is not its own
	})
	t.Run("CannotPayRefundOrDelete", func(t *testing.T) {
		for _, tc := range []struct{ method, path, body string }{
			{"GET", "/openpix/testing?transactionID=" + str(other, "transactionID"), ""},
			{"GET", "/openpix/testing?transactionID=open", ""},
			{"GET", "/openpix/testing?identifier=" + str(qr, "identifier"), ""},
			{"POST", "/api/v1/refund", `{"value":100,"transactionEndToEndId":"` + str(x, "endToEndId") + `","correlationID":"steal"}`},
			{"POST", "/api/v1/refund", `{"value":100,"transactionEndToEndId":"` + str(x, "transactionID") + `","correlationID":"steal"}`},
			{"POST", "/api/v1/charge/paid/refund", `{"value":100,"correlationID":"steal"}`},
			{"POST", "/api/v1/subaccount/transfer", `{"value":100,"fromPixKey":"vendedor@example.com","toPixKey":"gerente@example.com"}`},
			{"POST", "/api/v1/subaccount/vendedor@example.com/debit", `{"value":100}`},
			{"POST", "/api/v1/subaccount/vendedor@example.com/credit", `{"value":100}`},
			{"DELETE", "/api/v1/charge/open", ""},
			{"DELETE", "/api/v1/qrcode-static/qr", ""},
		} {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, tc.method, tc.path, second, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)        // as if it did not exist
				is.True(strings.Contains(r.errMsg(), "not found")) // and says so
			})
		}
	})
	t.Run("SameIDsAreItsOwn", func(t *testing.T) {
		is := is.New(t)
		mine := s.createCharge(t, second, `{"correlationID":"open","value":777}`)
		is.True(str(mine, "transactionID") != str(other, "transactionID")) // its own charge with the same correlationID
		r := s.do(t, "POST", "/api/v1/subaccount", second, `{"pixKey":"vendedor@example.com","name":"Meu vendedor"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "SubAccount", "name"), "Meu vendedor") // a subaccount of its own, not the first company's
		is.Equal(num(r.body, "SubAccount", "balance"), 0)
	})
	t.Run("FirstCompanyUnchanged", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/charge/open", first, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "charge", "status"), "ACTIVE") // not paid, not deleted
		is.Equal(num(r.body, "charge", "value"), 1000)
		mustStatus(t, is, s.do(t, "GET", "/api/v1/qrcode-static/qr", first, ""), http.StatusOK)
		r = s.do(t, "GET", "/api/v1/account/"+accountID, first, "")
		is.Equal(get(r.body, "account"), before) // no money moved
		r = s.do(t, "GET", "/api/v1/subaccount/vendedor@example.com", first, "")
		is.Equal(str(r.body, "SubAccount", "name"), "Vendedor")
		is.Equal(num(r.body, "SubAccount", "balance"), 2000-50)
		r = s.do(t, "GET", "/api/v1/refund", first, "")
		is.Equal(num(r.body, "pageInfo", "totalCount"), 1)
		r = s.do(t, "GET", "/api/v1/transaction", first, "")
		is.Equal(num(r.body, "pageInfo", "totalCount"), 3) // two Pix received and the refund
	})
}

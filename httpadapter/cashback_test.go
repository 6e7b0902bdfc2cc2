package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestCashback(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/cashback-fidelity", s.appID, `{"taxID":"529.982.247-25","value":150}`)
		mustStatus(t, is, r, http.StatusCreated) // new: 201
		is.Equal(keys(r.body), []string{"cashback", "message"})
		is.Equal(num(r.body, "cashback", "value"), 150)
		is.Equal(str(r.body, "message"), "Cashback created")
		r = s.do(t, "POST", "/api/v1/cashback-fidelity", s.appID, `{"taxID":{"taxID":"52998224725","type":"BR:CPF"},"value":999}`)
		mustStatus(t, is, r, http.StatusOK)             // one already pending: 200
		is.Equal(num(r.body, "cashback", "value"), 150) // the pending one, unchanged
		is.Equal(str(r.body, "message"), "Customer already has a pending cashback")
	})
	t.Run("Balance", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/cashback-fidelity/balance/52998224725", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"balance": 150.0, "status": "PENDING"})
		r = s.do(t, "GET", "/api/v1/cashback-fidelity/balance/11144477735", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "balance"), 0) // none for that customer
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct{ name, method, path, body, want string }{
			{"BadTaxID", "POST", "/api/v1/cashback-fidelity", `{"taxID":"111.111.111-11","value":10}`, "taxID"},
			{"FloatValue", "POST", "/api/v1/cashback-fidelity", `{"taxID":"11144477735","value":1.5}`, "value must be a whole number of centavos"},
			{"NoValue", "POST", "/api/v1/cashback-fidelity", `{"taxID":"11144477735"}`, "value must be a positive number of centavos"},
			{"BalanceBadTaxID", "GET", "/api/v1/cashback-fidelity/balance/123", "", "taxID"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, tc.method, tc.path, s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
	})
}

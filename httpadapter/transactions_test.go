package httpadapter_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestTransactions(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"order-1","value":1000}`)
	x := s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	r := s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Caixa","correlationID":"qr","value":300}`)
	mustStatus(t, is.New(t), r, http.StatusOK)
	s.sandboxPay(t, s.appID, "identifier=qr")

	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{str(x, "transactionID"), str(x, "endToEndId"), url.PathEscape(str(x, "globalID"))} {
			r := s.do(t, "GET", "/api/v1/transaction/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(keys(r.body), []string{"transaction"})
			is.Equal(str(r.body, "transaction", "endToEndId"), str(x, "endToEndId")) // by transactionID, endToEndId or globalID
			is.Equal(str(r.body, "transaction", "globalID") != "", true)
		}
		r := s.do(t, "GET", "/api/v1/transaction/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Transaction not found")
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/transaction", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pageInfo", "status", "transactions"})
		is.Equal(str(r.body, "status"), "OK") // the Java SDK requires it
		is.Equal(len(list(r.body, "transactions")), 2)
		is.Equal(num(list(r.body, "transactions")[0], "value"), 300) // newest first

		for _, tc := range []struct {
			query string
			n     int
		}{
			{"charge=order-1", 1},
			{"charge=" + str(c, "transactionID"), 1},
			{"pixQrCode=qr", 1},
			{"type=PAYMENT", 2},
			{"type=REFUND", 0},
			{"withdrawal=x", 0},
			{"start=2026-11-22T12:00:00Z&end=2026-11-22T12:00:00Z", 2},
			{"start=2026-11-22T12:00:01Z", 0},
			{"skip=1&limit=1", 1},
			// The filters combine.
			{"charge=order-1&type=PAYMENT", 1},
			{"charge=order-1&type=REFUND", 0},
			{"pixQrCode=qr&type=PAYMENT", 1},
			{"pixQrCode=qr&start=2026-11-22T12:00:00Z&end=2026-11-22T12:00:00Z", 1},
			{"pixQrCode=qr&start=2026-11-22T12:00:01Z", 0},
			{"charge=order-1&end=2026-11-22T11:59:59Z", 0},
			{"end=9999-12-31T23:59:59-03:00", 2}, // past the years a bound can be written: no bound
			{"charge=order-1&pixQrCode=qr", 0},   // a Pix pays one or the other
			{"withdrawal=x&type=PAYMENT", 0},
			// The real API's other types: none recorded here, so none listed.
			{"type=FEE", 0}, {"type=INTERNAL_TRANSFER", 0}, {"type=BALANCE_BLOCK", 0}, {"type=BALANCE_UNBLOCK", 0}, {"type=REVERSAL", 0},
		} {
			r := s.do(t, "GET", "/api/v1/transaction?"+tc.query, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			if len(list(r.body, "transactions")) != tc.n {
				t.Errorf("%s: %d transactions, want %d", tc.query, len(list(r.body, "transactions")), tc.n)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct{ query, want string }{
			{"start=nope", "start must be an RFC 3339 date-time"},
			{"end=2026-11-22T25:00:00Z", "end must be an RFC 3339 date-time"},
			{"type=GIFT", "type must be PAYMENT, REFUND, WITHDRAW, FEE, INTERNAL_TRANSFER, BALANCE_BLOCK, BALANCE_UNBLOCK or REVERSAL"},
			{"start=2026-11-23T00:00:00Z&end=2026-11-22T00:00:00Z", "end must not be before start"},
			{"limit=1001", "limit must be between 1 and 1000"},
		} {
			is := is.New(t)
			r := s.do(t, "GET", "/api/v1/transaction?"+tc.query, s.appID, "")
			mustStatus(t, is, r, http.StatusBadRequest)
			if !strings.HasPrefix(r.errMsg(), tc.want) {
				t.Errorf("%s: error %q, want prefix %q", tc.query, r.errMsg(), tc.want)
			}
		}
	})
}

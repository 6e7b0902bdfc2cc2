package httpadapter_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/memory"
)

// fundOverHTTP pays a charge of value through the sandbox route: the account receives
// value minus the fee.
func fundOverHTTP(t *testing.T, s server, corr string, value int) {
	t.Helper()
	c := s.createCharge(t, s.appID, `{"correlationID":"`+corr+`","value":`+itoa(value)+`}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func TestPayments(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	fundOverHTTP(t, s, "fund", 100000) // 100000 - 500 fee
	t.Run("CreateApproveGet", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/payment", s.appID, `{"value":1000,"destinationAlias":"ana@example.com","destinationAliasType":"EMAIL","correlationID":"p1","comment":"aluguel"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"payment"}) // {payment} only
		is.Equal(str(r.body, "payment", "status"), "CREATED")
		is.Equal(str(r.body, "payment", "type"), "PIX_KEY")

		r = s.do(t, "POST", "/api/v1/payment/approve", s.appID, `{"correlationID":"p1"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"destination", "payment", "transaction"})
		is.Equal(str(r.body, "payment", "status"), "APPROVED")
		is.Equal(num(r.body, "transaction", "value"), 1000)
		is.Equal(len(str(r.body, "transaction", "endToEndId")), 32) // the Pix's, sent before the answer
		is.Equal(str(r.body, "destination", "pixKey"), "ana@example.com")
		is.True(str(r.body, "destination", "name") != "") // from the key directory

		for _, id := range []string{"p1", str(r.body, "payment", "id")} {
			r = s.do(t, "GET", "/api/v1/payment/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(str(r.body, "payment", "status"), "CONFIRMED")     // settled by the sandbox
			is.Equal(len(str(r.body, "transaction", "endToEndId")), 32) // with its endToEndId
			is.Equal(str(r.body, "destination", "taxID") != "", true)   // and who received it
		}
		r = s.do(t, "GET", "/api/v1/account/", s.appID, "")
		is.Equal(num(list(r.body, "accounts")[0], "balance", "total"), 100000-500-1000)
	})
	t.Run("NoTypeAsTheNodeSDK", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/payment", s.appID, `{"value":100,"destinationAlias":"11144477735","destinationAliasType":"CPF","correlationID":"p2"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "payment", "destinationAliasType"), "CPF")
	})
	t.Run("AutoApprove", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/payment", s.appID, `{"value":100,"destinationAlias":"ana@example.com","correlationID":"p3","autoApprove":true}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "payment", "status"), "APPROVED")
		is.Equal(keys(r.body), []string{"destination", "payment", "transaction"})
	})
	t.Run("Manual", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/payment", s.appID, `{"type":"MANUAL","value":100,"correlationID":"m1","psp":{"id":"00000000","name":"Banco"},"holder":{"name":"Ana","taxID":{"type":"BR:CPF","taxID":"11144477735"}},"account":{"account":"1010110","branch":"0001","accountType":"CACC"}}`)
		mustStatus(t, is, r, http.StatusOK)
		r = s.do(t, "POST", "/api/v1/payment/approve", s.appID, `{"correlationID":"m1"}`)
		mustStatus(t, is, r, http.StatusOK)
		r = s.do(t, "GET", "/api/v1/payment/m1", s.appID, "")
		is.Equal(str(r.body, "payment", "status"), "FAILED")                   // the sandbox account trigger
		is.Equal(str(r.body, "transaction", "providerRejectedReason"), "AM04") // with its code
		is.Equal(str(r.body, "destination", "account"), "1010110")
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/payment?limit=2&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "status"), "OK")
		is.Equal(len(list(r.body, "payments")), 2)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 4)
		is.Equal(keys(list(r.body, "payments")[0]), []string{"destination", "payment", "transaction"})
		r = s.do(t, "GET", "/api/v1/payment?start=2030-01-01T00:00:00Z", s.appID, "")
		is.Equal(len(list(r.body, "payments")), 0) // filtered on createdAt
		r = s.do(t, "GET", "/api/v1/payment?start=yesterday", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
	})
	t.Run("Errors", func(t *testing.T) {
		before := s.do(t, "GET", "/api/v1/account/", s.appID, "").raw
		for _, tc := range []struct{ name, path, body, want string }{
			{"Duplicate", "/api/v1/payment", `{"value":100,"destinationAlias":"ana@example.com","correlationID":"p1"}`, "Já existe um pagamento com o correlationID fornecido"},
			{"ZeroValue", "/api/v1/payment", `{"value":0,"destinationAlias":"ana@example.com","correlationID":"e1"}`, "value must be"},
			{"FloatValue", "/api/v1/payment", `{"value":1.5,"destinationAlias":"ana@example.com","correlationID":"e1"}`, "value must be a whole number of centavos"},
			{"UnknownKey", "/api/v1/payment", `{"value":100,"destinationAlias":"pix-key-not-found@woovi.com","correlationID":"e1"}`, "Pix key not found"},
			{"TypeMismatch", "/api/v1/payment", `{"value":100,"destinationAlias":"ana@example.com","destinationAliasType":"CPF","correlationID":"e1"}`, "destinationAlias is not a valid CPF"},
			{"OtherSource", "/api/v1/payment", `{"value":100,"destinationAlias":"ana@example.com","correlationID":"e1","sourceAccountId":"x"}`, "sourceAccountId"},
			{"TooMuch", "/api/v1/payment", `{"value":999999999,"destinationAlias":"ana@example.com","correlationID":"e2","autoApprove":true}`, "You do not have enough balance to make this payment"},
			{"ApproveUnknown", "/api/v1/payment/approve", `{"correlationID":"nope"}`, "Payment not found"},
			{"ApproveTwice", "/api/v1/payment/approve", `{"correlationID":"p1"}`, "payment p1 is CONFIRMED"},
			{"ApproveFailed", "/api/v1/payment/approve", `{"correlationID":"m1"}`, "payment m1 is FAILED"},
			{"ApproveNoBody", "/api/v1/payment/approve", `[]`, "request body must be a JSON object"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", tc.path, s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
		is := is.New(t)
		is.Equal(s.do(t, "GET", "/api/v1/account/", s.appID, "").raw, before) // nothing moved
		r := s.do(t, "GET", "/api/v1/payment/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Payment not found")
	})
	is := is.New(t)
	rep, err := s.svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK()) // the ledger agrees
	is.Equal(len(payments.SandboxAccountFailure("1010110")), 4)
}

// downRail is a bank that answers nothing.
type downRail struct{ payments.Rail }

func (downRail) ResolveKey(context.Context, string, brcode.KeyType) (payments.KeyOwner, error) {
	return payments.KeyOwner{}, errors.New("dial tcp: connection refused")
}

// A payment whose Pix key the bank cannot look up is a 503 saying to try again, not a
// 500, and the bank's own error stays in the log.
func TestPayment_BankDown(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, Rail: downRail{payments.NewSandboxRail(clock, 0)}})
	is.NoErr(err)
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "test"})
	is.NoErr(err)
	s := server{svc: svc, clock: clock, h: httpadapter.New(svc, httpadapter.Options{Logger: slog.New(slog.DiscardHandler)}), appID: a.AppID()}
	r := s.do(t, "POST", "/api/v1/payment", s.appID, `{"value":100,"destinationAlias":"ana@example.com","correlationID":"p1"}`)
	mustStatus(t, is, r, http.StatusServiceUnavailable)
	is.True(strings.Contains(r.errMsg(), "try again"))
	is.True(!strings.Contains(r.errMsg(), "connection refused")) // the cause is for the log
}

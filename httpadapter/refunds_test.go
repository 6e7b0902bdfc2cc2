package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestRefunds(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"order-1","value":10000}`)
	x := s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	var refundID string

	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/refund", s.appID,
			`{"value":300,"transactionEndToEndId":"`+str(x, "endToEndId")+`","correlationID":"r1","comment":"item devolvido"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"refund"})
		ref := get(r.body, "refund")
		is.Equal(str(ref, "status"), "IN_PROCESSING") // a new refund
		is.Equal(num(ref, "value"), 300)
		is.Equal(str(ref, "correlationID"), "r1")
		is.Equal(str(ref, "comment"), "item devolvido")
		refundID = str(ref, "refundId")
		is.True(refundID != "")
		r = s.do(t, "POST", "/api/v1/refund", s.appID, `{"value":200,"transactionEndToEndId":"`+str(x, "transactionID")+`","correlationID":"r2"}`)
		mustStatus(t, is, r, http.StatusOK) // by transactionID too
		r = s.do(t, "POST", "/api/v1/refund", s.appID, `{"value":300,"transactionEndToEndId":"`+str(x, "endToEndId")+`","correlationID":"r1"}`)
		mustStatus(t, is, r, http.StatusOK) // a retry returns the first refund
		is.Equal(str(r.body, "refund", "refundId"), refundID)
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{"r1", refundID} {
			r := s.do(t, "GET", "/api/v1/refund/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(keys(r.body), []string{"pixTransactionRefund", "refund"}) // the wire's key, and the Ruby SDK's
			is.Equal(r.body["refund"], r.body["pixTransactionRefund"])         // the same refund
			is.Equal(str(r.body, "pixTransactionRefund", "correlationID"), "r1")
			is.Equal(str(r.body, "pixTransactionRefund", "status"), "REFUNDED")        // the document's values, not CONFIRMED
			is.True(str(r.body, "pixTransactionRefund", "returnIdentification") != "") // the refund's own Pix id
		}
		r := s.do(t, "GET", "/api/v1/refund/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Refund not found")
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/refund?limit=10&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pageInfo", "refunds"})
		is.Equal(len(list(r.body, "refunds")), 2)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 2)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e2e := str(x, "endToEndId")
		for _, tc := range []struct {
			name, body string
			status     int
			want       string
		}{
			{"UnknownTransaction", `{"value":1,"transactionEndToEndId":"E000","correlationID":"r9"}`, http.StatusBadRequest, "Transaction E000 not found"},
			{"NoTransaction", `{"value":1,"correlationID":"r9"}`, http.StatusBadRequest, "transactionEndToEndId is required"},
			{"FloatValue", `{"value":1.25,"transactionEndToEndId":"` + e2e + `","correlationID":"r9"}`, http.StatusBadRequest, "value must be a whole number of centavos"},
			{"TooMuch", `{"value":10000,"transactionEndToEndId":"` + e2e + `","correlationID":"r9"}`, http.StatusBadRequest, "value 10000 is more than the 9500 that remains"},
			{"LongComment", `{"value":1,"transactionEndToEndId":"` + e2e + `","correlationID":"r9","comment":"` + strings.Repeat("a", 141) + `"}`, http.StatusBadRequest, "comment must have at most 140 characters"},
			{"OtherRefundSameCorrelationID", `{"value":5,"transactionEndToEndId":"` + e2e + `","correlationID":"r1"}`, http.StatusBadRequest, `a different refund with correlationID "r1" already exists`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/refund", s.appID, tc.body)
				mustStatus(t, is, r, tc.status)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
	})
}

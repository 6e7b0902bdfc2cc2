package httpadapter_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// endToEndRE is the shape of a sandbox endToEndId: E, the sandbox ISPB, yyyyMMddHHmm and
// 11 letters and digits.
var endToEndRE = regexp.MustCompile(`^E99999999\d{12}[A-Za-z0-9]{11}$`)

func TestSandbox_Off(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: false})
	c := s.createCharge(t, s.appID, `{"correlationID":"c","value":1000}`)
	r := s.do(t, "GET", "/openpix/testing?transactionID="+str(c, "transactionID"), s.appID, "")
	mustStatus(t, is, r, http.StatusNotFound) // no sandbox route in production
	is.Equal(r.errMsg(), "not found")         // in JSON
	r = s.do(t, "GET", "/api/v1/charge/c", s.appID, "")
	is.Equal(str(r.body, "charge", "status"), "ACTIVE") // nothing was paid
}

// TestSandbox_PayCharge is the whole flow through HTTP: create a charge, pay it through
// the sandbox, see it completed, the money in the account, the transaction listed, and
// refund it.
func TestSandbox_PayCharge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"order-1","value":1000}`)
	r := s.do(t, "GET", "/api/v1/account", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	accountID := str(list(r.body, "accounts")[0], "accountId")
	is.Equal(num(list(r.body, "accounts")[0], "balance", "total"), 0) // a new company's account

	r = s.do(t, "GET", "/openpix/testing?transactionID="+str(c, "transactionID"), s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(keys(r.body), []string{"charge", "transaction"})
	is.Equal(str(r.body, "charge", "status"), "COMPLETED") // the charge as the payment left it
	x := get(r.body, "transaction")
	e2e := str(x, "endToEndId")
	is.True(endToEndRE.MatchString(e2e)) // the network's format
	is.Equal(num(x, "value"), 1000)      // the amount due
	is.Equal(str(x, "type"), "PAYMENT")
	is.Equal(str(x, "infoPagador"), "OpenPix testing")
	is.Equal(str(x, "payer", "name"), "Sandbox Payer")
	is.Equal(str(x, "charge", "correlationID"), "order-1")
	is.Equal(str(x, "raw", "txid"), str(c, "identifier")[:25]) // paid with the code's txid
	is.Equal(str(x, "time"), "2026-11-22T12:00:00.000Z")       // at the Service's clock

	r = s.do(t, "GET", "/api/v1/charge/order-1", s.appID, "")
	is.Equal(str(r.body, "charge", "status"), "COMPLETED")
	is.Equal(num(r.body, "charge", "fee"), 50)
	r = s.do(t, "GET", "/api/v1/account/"+accountID, s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(get(r.body, "account", "balance"), map[string]any{"total": 950.0, "blocked": 0.0, "available": 950.0}) // value - fee

	r = s.do(t, "GET", "/api/v1/transaction?charge=order-1", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(len(list(r.body, "transactions")), 1) // listed with the charge filter
	is.Equal(str(list(r.body, "transactions")[0], "endToEndId"), e2e)

	r = s.do(t, "POST", "/api/v1/refund", s.appID, `{"transactionEndToEndId":"`+e2e+`","value":100,"correlationID":"r1","comment":"devolução"}`)
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "refund", "status"), "IN_PROCESSING")
	r = s.do(t, "GET", "/api/v1/refund/r1", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "pixTransactionRefund", "status"), "REFUNDED") // settled by the sandbox bank
	is.Equal(num(r.body, "pixTransactionRefund", "value"), 100)
	r = s.do(t, "GET", "/api/v1/account/"+accountID, s.appID, "")
	is.Equal(num(r.body, "account", "balance", "total"), 850) // the refund left

	t.Run("AlreadyPaid", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{str(c, "transactionID"), str(c, "identifier"), "order-1"} {
			r := s.do(t, "GET", "/openpix/testing?transactionID="+id, s.appID, "")
			mustStatus(t, is, r, http.StatusBadRequest) // never an unmatched Pix from the sandbox
			is.Equal(r.errMsg(), "charge order-1 is already paid")
		}
		r := s.do(t, "GET", "/api/v1/transaction?type=PAYMENT", s.appID, "")
		is.Equal(num(r.body, "pageInfo", "totalCount"), 1) // no second Pix received (the refund above is a REFUND)
	})
}

// TestSandbox_PayChargeConcurrent: parallel sandbox payments of one charge pay it once:
// one 200, the others 400, one transaction, and the ledger audits clean.
func TestSandbox_PayChargeConcurrent(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"order-1","value":1000}`)
	const n = 10
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest("GET", "/openpix/testing?transactionID="+str(c, "transactionID"), nil)
			r.Header.Set("Authorization", s.appID)
			recs[i] = httptest.NewRecorder()
			s.h.ServeHTTP(recs[i], r)
		}()
	}
	wg.Wait()
	statuses := map[int]int{}
	for _, w := range recs {
		statuses[w.Code]++
		if w.Code == http.StatusBadRequest {
			is.Equal(strings.TrimSpace(w.Body.String()), `{"error":"charge order-1 is already paid"}`) // the others are refused
		}
	}
	is.Equal(statuses, map[int]int{http.StatusOK: 1, http.StatusBadRequest: n - 1}) // exactly one 200
	r := s.do(t, "GET", "/api/v1/transaction", s.appID, "")
	is.Equal(num(r.body, "pageInfo", "totalCount"), 1) // one transaction
	r = s.do(t, "GET", "/api/v1/charge/order-1", s.appID, "")
	is.Equal(str(r.body, "charge", "status"), "COMPLETED")
	rep, err := s.svc.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK()) // the ledger agrees
}

func TestSandbox_PayChargeErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	s.createCharge(t, s.appID, `{"correlationID":"short","value":1000,"expiresIn":900}`)
	s.createCharge(t, s.appID, `{"correlationID":"open","value":1000}`)
	s.clock.Advance(901 * time.Second)
	for _, tc := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"Expired", "transactionID=short", http.StatusBadRequest, "charge short has expired"},
		{"Unknown", "transactionID=nope", http.StatusBadRequest, "Charge not found"},
		{"UnknownQRCode", "identifier=nope", http.StatusBadRequest, "Pix QR code not found"},
		{"Neither", "", http.StatusBadRequest, "transactionID (a charge) or identifier (a static QR code) is required"},
		{"Both", "transactionID=short&identifier=x", http.StatusBadRequest, "give transactionID (a charge) or identifier (a static QR code), not both"},
		{"OtherValue", "transactionID=open&value=50", http.StatusBadRequest, "charge open takes its amount due now, 1000 centavos, not 50"},
		{"BadValue", "transactionID=open&value=x", http.StatusBadRequest, "value must be a positive whole number of centavos"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", "/openpix/testing?"+tc.query, s.appID, "")
			mustStatus(t, is, r, tc.status)
			is.Equal(r.errMsg(), tc.want)
		})
	}
	is := is.New(t)
	r := s.do(t, "GET", "/api/v1/transaction", s.appID, "")
	is.Equal(num(r.body, "pageInfo", "totalCount"), 0) // nothing was received
	mustStatus(t, is, s.do(t, "GET", "/openpix/testing?transactionID=short", "", ""), http.StatusUnauthorized)
	x := s.sandboxPay(t, s.appID, "transactionID=open&value=1000") // the amount due, given, pays it
	is.Equal(num(x, "value"), 1000)
}

func TestSandbox_PayOverdueCharge(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"late","value":10000,"type":"OVERDUE","daysForDueDate":1,"daysAfterDueDate":5,
		"fines":{"value":200},"interests":{"value":100}}`)
	s.clock.Advance(3 * 24 * time.Hour) // two days late
	x := s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))
	is.Equal(num(x, "value"), 10000+200+2*100) // the amount due now: fine and two days of interest
	r := s.do(t, "GET", "/api/v1/charge/late", s.appID, "")
	is.Equal(str(r.body, "charge", "status"), "COMPLETED")
}

func TestSandbox_PayQRCode(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	r := s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Caixa","correlationID":"fixed","value":500}`)
	mustStatus(t, is.New(t), r, http.StatusOK)
	fixed := get(r.body, "pixQrCode")
	r = s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Livre","correlationID":"open"}`)
	mustStatus(t, is.New(t), r, http.StatusOK)
	open := get(r.body, "pixQrCode")

	t.Run("TwiceTwoTransactions", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/openpix/testing?identifier="+str(fixed, "identifier"), s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pixQrCode", "transaction"})
		is.Equal(str(r.body, "pixQrCode", "correlationID"), "fixed")
		x1 := get(r.body, "transaction")
		x2 := s.sandboxPay(t, s.appID, "identifier="+str(fixed, "identifier"))
		is.Equal(num(x1, "value"), 500)
		is.Equal(num(x2, "value"), 500)
		is.True(str(x1, "endToEndId") != str(x2, "endToEndId")) // two Pix
		for _, id := range []string{str(fixed, "identifier"), "fixed"} {
			r := s.do(t, "GET", "/api/v1/transaction?pixQrCode="+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(len(list(r.body, "transactions")), 2) // both listed, by identifier or correlationID
		}
	})
	t.Run("PayerChoosesValue", func(t *testing.T) {
		is := is.New(t)
		x := s.sandboxPay(t, s.appID, "identifier="+str(open, "identifier")+"&value=700")
		is.Equal(num(x, "value"), 700)
		is.Equal(str(x, "pixQrCode", "correlationID"), "open")
	})
	t.Run("Err", func(t *testing.T) {
		for _, tc := range []struct{ name, query, want string }{
			{"NoValue", "identifier=open", "value is required: this QR code lets the payer choose the amount (centavos)"},
			{"BadValue", "identifier=open&value=7.5", "value must be a positive whole number of centavos"},
			{"ZeroValue", "identifier=open&value=0", "value must be a positive whole number of centavos"},
			{"OtherValue", "identifier=fixed&value=600", "this QR code has a fixed value of 500 centavos"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "GET", "/openpix/testing?"+tc.query, s.appID, "")
				mustStatus(t, is, r, http.StatusBadRequest)
				is.Equal(r.errMsg(), tc.want)
			})
		}
	})
}

// TestSandbox_PayReplyTransactionShape: the sandbox payment's reply shows its transaction
// as the transaction routes do (webhookSent, the legacy endToEndID). Before, it lacked
// both.
func TestSandbox_PayReplyTransactionShape(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{Sandbox: true})
	s.createCharge(t, s.appID, `{"correlationID":"c1","value":1000}`)
	s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"caixa","correlationID":"q1","value":500}`)
	for _, q := range []string{"transactionID=c1", "identifier=q1"} {
		x := s.sandboxPay(t, s.appID, q)
		r := s.do(t, "GET", "/api/v1/transaction/"+str(x, "endToEndId"), s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(x), keys(get(r.body, "transaction"))) // the same transaction, the same shape
		is.Equal(str(x, "endToEndID"), str(x, "endToEndId"))
	}
}

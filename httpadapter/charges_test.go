package httpadapter_test

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/httpadapter"
)

// keys returns the sorted keys of a decoded object.
func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCharges(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	var charge map[string]any

	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge?", s.appID, `{
			"correlationID":"order-1","value":1050,"comment":"Pedido 1",
			"customer":{"name":"Ana Souza","taxID":"529.982.247-25","email":"ana@example.com","phone":"+5511999990000","correlationID":"ana"},
			"additionalInfo":[{"key":"Pedido","value":"1"}]}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"brCode", "charge", "correlationID"}) // the create envelope
		charge = get(r.body, "charge").(map[string]any)
		is.Equal(str(r.body, "correlationID"), "order-1")
		is.Equal(str(r.body, "brCode"), str(charge, "brCode"))
		is.Equal(num(charge, "value"), 1050)
		is.Equal(str(charge, "status"), "ACTIVE")
		is.Equal(str(charge, "type"), "DYNAMIC")
		is.True(strings.HasPrefix(str(charge, "brCode"), "000201"))
		is.True(strings.Contains(str(charge, "brCode"), "540510.50")) // the amount, in reais
		is.Equal(num(charge, "expiresIn"), 86400)                     // default, in seconds
		is.Equal(str(charge, "expiresDate"), "2026-11-23T12:00:00.000Z")
		is.Equal(str(charge, "customer", "taxID", "taxID"), "52998224725")
		is.Equal(str(charge, "customer", "correlationID"), "ana")
		is.Equal(len(list(charge, "additionalInfo")), 1)
		is.Equal(str(charge, "qrCodeImage"), "/openpix/charge/brcode/image/"+str(charge, "paymentLinkID")+".png")
		is.Equal(str(charge, "paymentMethods", "pix", "method"), "PIX_COB")
		for _, k := range []string{"paymentLinkID", "globalID", "transactionID", "identifier", "createdAt", "updatedAt", "paymentLinkUrl"} {
			is.True(str(charge, k) != "") // the fields the SDKs require
		}
	})
	t.Run("CreateTaxIDObjectAndDiscountAlias", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{
			"correlationID":"overdue-1","value":10000,"type":"OVERDUE","daysForDueDate":5,"daysAfterDueDate":10,
			"customer":{"name":"ACME","taxID":{"taxID":"11222333000181","type":"BR:CNPJ"}},
			"interests":{"value":33},"fines":{"value":200,"type":"PERCENTAGE"},
			"discount":{"modality":"FIXED_VALUE_UNTIL_SPECIFIED_DATE","discountFixedDate":[{"daysActive":3,"value":500}]}}`)
		mustStatus(t, is, r, http.StatusOK)
		c := get(r.body, "charge")
		is.Equal(str(c, "type"), "OVERDUE")
		is.Equal(str(c, "customer", "taxID", "type"), "BR:CNPJ")                             // a {taxID, type} object is tolerated
		is.Equal(str(c, "discountSettings", "modality"), "FIXED_VALUE_UNTIL_SPECIFIED_DATE") // the spec's name "discount" is read
		is.Equal(num(c, "amountDue"), 9500)                                                  // 5 days early: the 500 discount applies
		r = s.do(t, "POST", "/api/v1/charge", s.appID, `{
			"correlationID":"overdue-2","value":10000,"type":"OVERDUE","daysForDueDate":5,
			"discountSettings":{"modality":"VALUE_PER_RUNNING_DAY_ADVANCE","value":10}}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(num(r.body, "charge", "discount"), 50) // the wire's name works too
	})
	t.Run("CreateLenient", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, httpadapter.Options{}) // its own, so that List below counts the others
		comment := string([]rune(strings.Repeat("Pedido com entrega expressa às 18h, ", 4))[:140])
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"lenient","value":100,"comment":"`+comment+`",
			"expiresIn":3600,"expiresDate":"2026-11-29T12:00:00"}`)
		mustStatus(t, is, r, http.StatusOK)                                        // a 140-character comment, both expiries, no offset
		is.Equal(str(r.body, "charge", "comment"), comment)                        // the whole comment
		is.Equal(str(r.body, "charge", "expiresDate"), "2026-11-29T12:00:00.000Z") // expiresDate wins, read as UTC
		is.Equal(num(r.body, "charge", "expiresIn"), 7*86400)                      // and expiresIn says so
		code, err := brcode.Parse(str(r.body, "brCode"))
		is.NoErr(err)                                                                                   // a valid code
		is.True(strings.HasPrefix("Pedido com entrega expressa as 18h, Pedido com entrega", code.Info)) // with what fits of the comment
		is.True(len(code.Info) > 20)
	})
	t.Run("ReturnExisting", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge?return_existing=true", s.appID, `{"correlationID":"order-1","value":1050}`)
		mustStatus(t, is, r, http.StatusOK) // the existing charge, not a conflict
		is.Equal(str(r.body, "charge", "transactionID"), str(charge, "transactionID"))
		r = s.do(t, "POST", "/api/v1/charge?return_existing=false", s.appID, `{"correlationID":"order-1","value":1050}`)
		mustStatus(t, is, r, http.StatusBadRequest) // a duplicate
		is.Equal(r.errMsg(), `a charge with correlationID "order-1" already exists`)
		r = s.do(t, "POST", "/api/v1/charge?return_existing=1", s.appID, `{"correlationID":"order-1","value":1050}`)
		mustStatus(t, is, r, http.StatusOK) // as the PHP SDK sends true (http_build_query)
		is.Equal(str(r.body, "charge", "transactionID"), str(charge, "transactionID"))
		r = s.do(t, "POST", "/api/v1/charge?return_existing=0", s.appID, `{"correlationID":"order-1","value":1050}`)
		mustStatus(t, is, r, http.StatusBadRequest) // and false
		r = s.do(t, "POST", "/api/v1/charge?return_existing=maybe", s.appID, `{"correlationID":"order-1","value":1050}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "return_existing must be true or false (or 1 or 0)")
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		for _, id := range []string{"order-1", str(charge, "transactionID"), str(charge, "paymentLinkID"), str(charge, "globalID")} {
			r := s.do(t, "GET", "/api/v1/charge/"+id, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(keys(r.body), []string{"charge"})
			is.Equal(str(r.body, "charge", "correlationID"), "order-1") // by any of its ids
		}
		r := s.do(t, "GET", "/api/v1/charge/nope", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // failures are 400, as the spec says
		is.Equal(r.errMsg(), "Charge not found")    // the real API's message
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/charge?limit=10&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"charges", "pageInfo"})
		is.Equal(len(list(r.body, "charges")), 3)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 3)
		is.Equal(num(r.body, "pageInfo", "limit"), 10)

		r = s.do(t, "GET", "/api/v1/charge?customer=ana&status=ACTIVE", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "charges")), 1) // by customer and status
		r = s.do(t, "GET", "/api/v1/charge?status=COMPLETED", s.appID, "")
		is.Equal(len(list(r.body, "charges")), 0)
		r = s.do(t, "GET", "/api/v1/charge?start=2026-11-22T11:00:00Z&end=2026-11-22T13:00:00+00:00", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // an unencoded "+" in the offset is read back
		is.Equal(len(list(r.body, "charges")), 3)
		r = s.do(t, "GET", "/api/v1/charge?start=2026-11-22T12:00:00.001Z", s.appID, "")
		is.Equal(len(list(r.body, "charges")), 0) // all created at 12:00:00.000
		for _, q := range []string{"end=9999-12-31T23:59:59-03:00", "end=9999-12-31T23:59:59.999999999Z", "start=0000-01-01T00:00:00%2B01:00"} {
			r = s.do(t, "GET", "/api/v1/charge?"+q, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(num(r.body, "pageInfo", "totalCount"), 3) // past the years a bound can be written: no bound (it listed none)
		}
		for _, q := range []string{"end=0001-01-01T00:00:00Z", "end=0000-12-31T23:59:59Z", "start=0001-01-01T00:00:00Z&end=0001-01-01T00:00:00Z"} {
			r = s.do(t, "GET", "/api/v1/charge?"+q, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(num(r.body, "pageInfo", "totalCount"), 0) // an end before everything lists nothing (the zero time listed all; year 0 was a 400)
		}
		r = s.do(t, "GET", "/api/v1/charge?start=0001-01-01T00:00:00Z", s.appID, "")
		is.Equal(num(r.body, "pageInfo", "totalCount"), 3) // and a start before everything, everything

		for _, tc := range []struct{ query, field string }{
			{"start=yesterday", "start"},
			{"end=2026-13-01T00:00:00Z", "end"},
			{"start=2026-11-22", "start"},
			{"status=PAID", "status"},
			{"limit=x", "limit"},
			{"skip=-1", "skip"},
			{"start=9999-12-31T23:59:59-03:00", "start"}, // the year 10000 in UTC
		} {
			r := s.do(t, "GET", "/api/v1/charge?"+tc.query, s.appID, "")
			mustStatus(t, is, r, http.StatusBadRequest)
			is.True(strings.HasPrefix(r.errMsg(), tc.field)) // names the parameter
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct{ name, body, want string }{
			{"Malformed", `{"correlationID":"x","value":`, "request body is not valid JSON"},
			{"Array", `[{"correlationID":"x","value":100}]`, "request body must be a JSON object"},
			{"FloatValue", `{"correlationID":"x","value":10.5}`, "value must be a whole number of centavos, e.g. 1050 for R$ 10,50 (got 10.5)"},
			{"ExponentValue", `{"correlationID":"x","value":1e3}`, "value must be a whole number of centavos written without a decimal point or exponent, e.g. 1050 for R$ 10,50 (got 1e3)"},
			{"PointZeroValue", `{"correlationID":"x","value":500.0}`, "value must be a whole number of centavos written without a decimal point or exponent"}, // 10.0 may mean reais
			{"StringValue", `{"correlationID":"x","value":"100"}`, "value must be a whole number of centavos, e.g. 1050 for R$ 10,50 (got a string)"},
			{"HugeValue", `{"correlationID":"x","value":99999999999999999999}`, "value must be a whole number of centavos"},
			{"FloatSplit", `{"correlationID":"x","value":100,"splits":[{"value":0.5,"pixKey":"a@example.com"}]}`, "splits[0].value must be a whole number of centavos"},
			{"NegativeValue", `{"correlationID":"x","value":-1}`, "value must be a positive number of centavos"},
			{"NoValue", `{"correlationID":"x"}`, "value must be a positive number of centavos"},
			{"NoCorrelationID", `{"value":100}`, "correlationID is required"},
			{"WrongType", `{"correlationID":5,"value":100}`, "correlationID must be a string"},
			{"FloatExpiresIn", `{"correlationID":"x","value":100,"expiresIn":900.5}`, "expiresIn must be an integer"},
			{"CustomerNotObject", `{"correlationID":"x","value":100,"customer":"ana"}`, "customer must be an object"},
			{"CustomerTaxID", `{"correlationID":"x","value":100,"customer":{"name":"A","taxID":5}}`, "customer.taxID must be a string or a {taxID, type} object"},
			{"BothDiscounts", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":1,"discount":{},"discountSettings":{}}`, "give discountSettings or discount, not both"},
			{"Type", `{"correlationID":"x","value":100,"type":"BOLETO"}`, "type must be DYNAMIC or OVERDUE"},
			{"ExpiresIn", `{"correlationID":"x","value":100,"expiresIn":60}`, "expiresIn must be between 300"},
			{"ExpiresDateTooFar", `{"correlationID":"x","value":100,"expiresDate":"2036-11-20T00:00:00"}`, "expiresDate must be at most 10 years"},
			{"EnsureSameTaxID", `{"correlationID":"x","value":100,"ensureSameTaxID":true}`, "ensureSameTaxID (a charge only the customer's tax ID may pay) is not offered"},
			{"EnsureSameTaxIdNodeSDK", `{"correlationID":"x","value":100,"ensureSameTaxId":true}`, "ensureSameTaxID"},
			{"DueDate", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":3,"dueDate":"2026-12-20T00:00:00Z"}`, "dueDate is not read here"},
			{"InterestsType", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":3,"interests":{"value":1,"type":"DAILY"}}`, "interests.type must be FIXED or PERCENTAGE"},
			{"CommentOver140", `{"correlationID":"x","value":100,"comment":"` + strings.Repeat("ã", 141) + `"}`, "comment must have at most 140 characters"},
			// The discount settings' errors name the field as the client sent it.
			{"DiscountSettingsModality", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":3,"discountSettings":{"modality":"X"}}`, "discountSettings.modality must be one of"},
			{"DiscountModality", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":3,"discount":{"modality":"X"}}`, "discount.modality must be one of"},
			{"DiscountSettingsTier", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":3,"discountSettings":{"modality":"FIXED_VALUE_UNTIL_SPECIFIED_DATE","discountFixedDate":[{"daysActive":1,"value":100}]}}`, "discountSettings.discountFixedDate[0].value must be between 1 and 99"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/api/v1/charge", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if !strings.HasPrefix(r.errMsg(), tc.want) {
					t.Errorf("error %q, want prefix %q", r.errMsg(), tc.want)
				}
			})
		}
	})
	t.Run("EnsureSameTaxIDFalse", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"same-false","value":100,"ensureSameTaxID":false}`)
		mustStatus(t, is, r, http.StatusOK) // nothing asked, nothing refused
		r = s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"fixed-interest","value":10000,"type":"OVERDUE","daysForDueDate":3,"interests":{"value":100,"type":"FIXED"}}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "charge", "interests", "type"), "FIXED") // kept and answered
	})
	t.Run("UpdateExpiry", func(t *testing.T) {
		is := is.New(t)
		s.createCharge(t, s.appID, `{"correlationID":"to-extend","value":500}`)
		r := s.do(t, "PATCH", "/api/v1/charge/to-extend", s.appID, `{"expiresDate":"2026-12-31T23:59:59Z"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"status": "OK", "id": "to-extend", "expiresDate": "2026-12-31T23:59:59.000Z"}) // the reference's {status, id, expiresDate}
		r = s.do(t, "GET", "/api/v1/charge/to-extend", s.appID, "")
		is.Equal(str(r.body, "charge", "expiresDate"), "2026-12-31T23:59:59.000Z") // moved
		for _, tc := range []struct{ body, want string }{
			{`{"expiresDate":"soon"}`, "expiresDate must be an ISO 8601 date"},
			{`{"expiresDate":"2026-11-22T12:04:00Z"}`, "expiresDate must be at least 5 minutes"},
			{`{}`, "expiresDate is required"},
		} {
			r = s.do(t, "PATCH", "/api/v1/charge/to-extend", s.appID, tc.body)
			mustStatus(t, is, r, http.StatusBadRequest)
			is.True(strings.HasPrefix(r.errMsg(), tc.want))
		}
		mustStatus(t, is, s.do(t, "PATCH", "/api/v1/charge/nope", s.appID, `{"expiresDate":"2026-12-31"}`), http.StatusBadRequest) // unknown
	})
	t.Run("Delete", func(t *testing.T) {
		is := is.New(t)
		s.createCharge(t, s.appID, `{"correlationID":"to-delete","value":500}`)
		r := s.do(t, "DELETE", "/api/v1/charge/to-delete", s.appID, "", "Content-Type", "application/json")
		mustStatus(t, is, r, http.StatusOK)                                 // a DELETE with the SDK's Content-Type and no body
		is.Equal(r.body, map[string]any{"status": "OK", "id": "to-delete"}) // {status, id}
		r = s.do(t, "GET", "/api/v1/charge/to-delete", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // gone
		is.Equal(r.errMsg(), "Charge not found")
		r = s.do(t, "DELETE", "/api/v1/charge/to-delete", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Charge not found")
	})
}

func TestCharges_Expired(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	s.createCharge(t, s.appID, `{"correlationID":"short","value":500,"expiresIn":900}`)
	s.clock.Advance(901 * time.Second)
	r := s.do(t, "GET", "/api/v1/charge/short", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(str(r.body, "charge", "status"), "EXPIRED") // past its expiry
	r = s.do(t, "GET", "/api/v1/charge?status=EXPIRED", s.appID, "")
	is.Equal(len(list(r.body, "charges")), 1)
}

func TestChargeRefunds(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	c := s.createCharge(t, s.appID, `{"correlationID":"paid","value":10000}`)
	s.createCharge(t, s.appID, `{"correlationID":"unpaid","value":10000}`)
	s.sandboxPay(t, s.appID, "transactionID="+str(c, "transactionID"))

	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge/paid/refund", s.appID, `{"correlationID":"r1","value":100,"comment":"devolução"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"refund"})
		is.Equal(str(r.body, "refund", "correlationID"), "r1")
		is.Equal(num(r.body, "refund", "value"), 100)
		is.Equal(str(r.body, "refund", "status"), "IN_PROCESSING")
		is.Equal(str(r.body, "refund", "comment"), "devolução")
		is.Equal(str(r.body, "refund", "charge"), "paid")
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/charge/paid/refund?limit=10&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(keys(r.body), []string{"pageInfo", "refunds"})
		is.Equal(len(list(r.body, "refunds")), 1)
		is.Equal(str(list(r.body, "refunds")[0], "status"), "CONFIRMED") // the sandbox bank settled it
		r = s.do(t, "GET", "/api/v1/charge/unpaid/refund", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "refunds")), 0)
		r = s.do(t, "GET", "/api/v1/charge/nope/refund", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Charge not found")
	})
	t.Run("Err", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge/unpaid/refund", s.appID, `{"correlationID":"r2","value":100}`)
		mustStatus(t, is, r, http.StatusBadRequest) // not paid
		is.Equal(r.errMsg(), "charge unpaid is not paid: only a COMPLETED charge can be refunded")
		r = s.do(t, "POST", "/api/v1/charge/nope/refund", s.appID, `{"correlationID":"r2","value":100}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Charge not found")
		r = s.do(t, "POST", "/api/v1/charge/paid/refund", s.appID, `{"correlationID":"r2","value":1.5}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.HasPrefix(r.errMsg(), "value must be a whole number of centavos"))
		r = s.do(t, "POST", "/api/v1/charge/paid/refund", s.appID, `{"value":100}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "correlationID is required")
	})
}

// TestCharges_Splits: split errors name the item, from JSON decoding and from the Service
// alike; values are bounded, splits capped, and a charge cannot send money to a
// subaccount that does not exist. Nothing is created by a refused request.
func TestCharges_Splits(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	mustStatus(t, is.New(t), s.do(t, "POST", "/api/v1/subaccount", s.appID, `{"pixKey":"a@example.com","name":"A"}`), http.StatusOK)
	many := make([]string, payments.MaxSplits+1)
	for i := range many {
		many[i] = `{"value":1,"pixKey":"a@example.com"}`
	}
	for _, tc := range []struct{ name, body, want string }{
		{"StringValue", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},{"value":"2","pixKey":"a@example.com"}]}`,
			"splits[1].value must be a whole number of centavos, e.g. 1050 for R$ 10,50 (got a string)"},
		{"FloatValue", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},{"value":1.5}]}`,
			"splits[1].value must be a whole number of centavos, e.g. 1050 for R$ 10,50 (got 1.5)"},
		{"KeyNotString", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},{"value":1,"pixKey":5}]}`,
			"splits[1].pixKey must be a string"},
		{"ItemNotObject", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},5]}`,
			"splits[1] must be an object"},
		{"NotArray", `{"correlationID":"x","value":100,"splits":"a@example.com"}`, "splits must be an array"},
		{"AdditionalInfo", `{"correlationID":"x","value":100,"additionalInfo":[{"key":"a","value":"b"},{"key":1}]}`,
			"additionalInfo[1].key must be a string"},
		{"DiscountTier", `{"correlationID":"x","value":100,"type":"OVERDUE","daysForDueDate":2,"discountSettings":{"modality":"FIXED_VALUE_UNTIL_SPECIFIED_DATE",
			"discountFixedDate":[{"daysActive":1,"value":1},{"daysActive":"2","value":1}]}}`, "discountSettings.discountFixedDate[1].daysActive must be an integer"},
		{"SumOverflows", `{"correlationID":"x","value":100,"splits":[{"value":9223372036854775807,"pixKey":"a@example.com"},{"value":2,"pixKey":"a@example.com"}]}`,
			"splits[0].value must be a positive number of centavos up to 999999999999"},
		{"ValueOverMax", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},{"value":1000000000000,"pixKey":"a@example.com"}]}`,
			"splits[1].value must be a positive number of centavos up to 999999999999"},
		{"OverChargeValue", `{"correlationID":"x","value":100,"splits":[{"value":60,"pixKey":"a@example.com"},{"value":60,"pixKey":"a@example.com"}]}`,
			"splits add up to 120, more than the charge value 100"},
		{"EmptyKey", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},{"value":1,"pixKey":""}]}`,
			"splits[1].pixKey is required"},
		{"TooMany", `{"correlationID":"x","value":100000,"splits":[` + strings.Join(many, ",") + `]}`, "splits has at most 100 items, got 101"},
		{"NoSuchSubaccount", `{"correlationID":"x","value":100,"splits":[{"value":1,"pixKey":"a@example.com"},{"value":1,"pixKey":"b@example.com"}]}`,
			"splits[1].pixKey names no subaccount: create the subaccount b@example.com first"},
		{"NoSuchChargeSubaccount", `{"correlationID":"x","value":100,"subaccount":"b@example.com"}`,
			"subaccount names no subaccount: create the subaccount b@example.com first"},
		{"SubaccountAndSplits", `{"correlationID":"x","value":100,"subaccount":"a@example.com","splits":[{"value":1,"pixKey":"a@example.com"}]}`,
			"give subaccount (it receives the whole charge) or splits, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "POST", "/api/v1/charge", s.appID, tc.body)
			mustStatus(t, is, r, http.StatusBadRequest)
			is.Equal(r.errMsg(), tc.want) // the item named, the reason given
		})
	}
	is := is.New(t)
	r := s.do(t, "GET", "/api/v1/charge", s.appID, "")
	is.Equal(num(r.body, "pageInfo", "totalCount"), 0) // nothing created
	c := s.createCharge(t, s.appID, `{"correlationID":"ok","value":100,"splits":[{"value":10,"pixKey":"A@example.com"}]}`)
	is.Equal(str(list(c, "splits")[0], "pixKey"), "a@example.com") // an existing subaccount, any form of its key
}

// TestCorrelationID_AsSent: a correlationID is kept as the client sent it, spaces at its
// ends included, so the reply shows it and every route finds the record by it. Before, it
// was trimmed when stored and not when looked up: " pedido-1 " created a charge that
// GET /charge/%20pedido-1%20 did not find. Blanks only is no id.
func TestCorrelationID_AsSent(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{Sandbox: true})
	const sent = " pedido-1 "
	esc := url.PathEscape(sent)
	t.Run("Charge", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":" pedido-1 ","value":100}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "charge", "correlationID"), sent) // as the client sent it
		is.Equal(str(r.body, "correlationID"), sent)
		r = s.do(t, "GET", "/api/v1/charge/"+esc, s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // found by it
		r = s.do(t, "GET", "/api/v1/charge/pedido-1", s.appID, "")
		is.Equal(r.status, http.StatusBadRequest) // another id
		r = s.do(t, "POST", "/api/v1/charge?return_existing=true", s.appID, `{"correlationID":" pedido-1 ","value":100}`)
		mustStatus(t, is, r, http.StatusOK) // the same charge again
		r = s.do(t, "DELETE", "/api/v1/charge/"+esc, s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		s.createCharge(t, s.appID, `{"correlationID":" pago ","value":100}`)
		x := s.sandboxPay(t, s.appID, "transactionID="+url.QueryEscape(" pago "))
		is.Equal(str(x, "charge", "correlationID"), " pago ") // the sandbox pays it by that id too
	})
	t.Run("Customer", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"Ana","email":"ana@example.com","correlationID":" pedido-1 "}`)
		mustStatus(t, is, r, http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", "/api/v1/customer/"+esc, s.appID, ""), http.StatusOK)
		mustStatus(t, is, s.do(t, "PATCH", "/api/v1/customer/"+esc, s.appID, `{"name":"Ana S."}`), http.StatusOK)
	})
	t.Run("PixQRCode", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"loja","correlationID":" pedido-1 "}`)
		mustStatus(t, is, r, http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", "/api/v1/qrcode-static/"+esc, s.appID, ""), http.StatusOK)
		r = s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"Caixa 1","identifier":"caixa1loja"}`) // as the reference's curl sends it
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "pixQrCode", "identifier"), "caixa1loja")
		mustStatus(t, is, s.do(t, "GET", "/api/v1/qrcode-static/caixa1loja", s.appID, ""), http.StatusOK)
		r = s.do(t, "POST", "/api/v1/qrcode-static", s.appID, `{"name":"x","identifier":"caixa-1"}`)
		is.Equal(r.status, http.StatusBadRequest)
		is.True(strings.Contains(r.raw, "identifier"))
	})
	t.Run("Refund", func(t *testing.T) {
		is := is.New(t)
		s.createCharge(t, s.appID, `{"correlationID":"paid-1","value":10000}`)
		s.sandboxPay(t, s.appID, "transactionID=paid-1")
		r := s.do(t, "POST", "/api/v1/charge/paid-1/refund", s.appID, `{"correlationID":" pedido-1 ","value":100}`)
		mustStatus(t, is, r, http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", "/api/v1/refund/"+esc, s.appID, ""), http.StatusOK)
	})
	t.Run("Blank", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"   ","value":100}`)
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errMsg(), "correlationID is required")
	})
	t.Run("LineBreakAtTheEnd", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"pedido-9\n","value":100}`)
		is.Equal(r.status, http.StatusBadRequest) // trimmed once (and then not found by it); now said plainly
		is.Equal(r.errMsg(), "correlationID must not begin or end with a line break, tab or other control character")
	})
}

// TestCorrelationID_LoneSurrogate: a \u escape of a lone surrogate is refused as invalid
// UTF-8 is. encoding/json decodes every one to U+FFFD, so "\ud800" and "\udbff" were one
// correlationID: the second charge was refused as a duplicate of the first, and with
// return_existing the client was handed the first, another value's charge. A pair (an
// emoji) is text and is kept.
func TestCorrelationID_LoneSurrogate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	for _, id := range []string{`\ud800`, `\udbff`, `\udc00`, `a\ud83dz`, `\ud83d\u0041`, `\ude00\ud83d`} {
		r := s.do(t, "POST", "/api/v1/charge?return_existing=true", s.appID, `{"correlationID":"`+id+`","value":100}`)
		is.Equal(r.status, http.StatusBadRequest)
		is.True(strings.Contains(r.errMsg(), "lone surrogate"))
	}
	for _, id := range []string{`\ud83d\ude00`, `\\ud800`, `\u00e9\\\ud83d\ude00`} {
		r := s.do(t, "POST", "/api/v1/charge", s.appID, `{"correlationID":"`+id+`","value":100}`)
		mustStatus(t, is, r, http.StatusOK)
		is.True(!strings.ContainsRune(str(r.body, "charge", "correlationID"), '\uFFFD'))
	}
}

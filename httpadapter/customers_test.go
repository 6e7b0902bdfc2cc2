package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestCustomers(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{
			"name":"Ana Souza","taxID":"529.982.247-25","email":"ana@example.com","phone":"+5511999990000",
			"correlationID":"customer-ana","address":{"zipcode":"01310100","city":"São Paulo"}}`)
		mustStatus(t, is, r, http.StatusOK) // the real API answers 200
		c := get(r.body, "customer")
		is.Equal(str(c, "name"), "Ana Souza")
		is.Equal(get(c, "taxID"), map[string]any{"taxID": "52998224725", "type": "BR:CPF"}) // taxID as an object
		is.Equal(str(c, "correlationID"), "customer-ana")
		is.Equal(str(c, "address", "city"), "São Paulo")
		is.Equal(str(c, "createdAt"), "2026-11-22T12:00:00.000Z")
	})
	t.Run("CreateTaxIDObject", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"ACME","taxID":{"taxID":"11222333000181","type":"BR:CNPJ"}}`)
		mustStatus(t, is, r, http.StatusOK) // a {taxID, type} object is tolerated
		is.Equal(str(r.body, "customer", "taxID", "type"), "BR:CNPJ")
	})
	t.Run("Get", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer/customer-ana", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "customer", "name"), "Ana Souza") // by correlationID
		r = s.do(t, "GET", "/api/v1/customer/52998224725", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "customer", "correlationID"), "customer-ana") // by tax ID
	})
	t.Run("List", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer?limit=10&skip=0", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(len(list(r.body, "customers")), 2)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 2)
	})
	t.Run("Update", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"name":"Ana S.","phone":null}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "customer", "name"), "Ana S.")
		is.Equal(str(r.body, "customer", "phone"), "+5511999990000")       // null leaves a field unchanged
		is.Equal(str(r.body, "customer", "taxID", "taxID"), "52998224725") // absent leaves it unchanged
		r = s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"taxID":{"taxID":"111.444.777-35"}}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "customer", "taxID", "taxID"), "11144477735")
		r = s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"taxID":{"type":"BR:CPF"}}`)
		mustStatus(t, is, r, http.StatusBadRequest) // an object without the number is not "no tax ID"
		is.True(strings.HasPrefix(r.errMsg(), "taxID.taxID is required"))
		r = s.do(t, "GET", "/api/v1/customer/customer-ana", s.appID, "")
		is.Equal(str(r.body, "customer", "taxID", "taxID"), "11144477735") // kept
		r = s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"address":{"number":"2","zipcode":null}}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(get(r.body, "customer", "address"), map[string]any{"zipcode": "01310100", "city": "São Paulo", "number": "2"}) // only the fields given change
		r = s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"address":{"city":""}}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(get(r.body, "customer", "address"), map[string]any{"zipcode": "01310100", "number": "2"}) // "" clears one
		r = s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"address":{"street":"`+strings.Repeat("a", 201)+`"}}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(strings.HasPrefix(r.errMsg(), "address.street")) // named, and nothing changed
		r = s.do(t, "GET", "/api/v1/customer/customer-ana", s.appID, "")
		is.Equal(get(r.body, "customer", "address"), map[string]any{"zipcode": "01310100", "number": "2"})
	})
	t.Run("ErrDuplicate", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"Other","email":"o@example.com","correlationID":"customer-ana"}`)
		mustStatus(t, is, r, http.StatusBadRequest) // the real API answers duplicates with 400
		is.Equal(r.errMsg(), `a customer with correlationID "customer-ana" already exists`)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"X","taxID":"111.111.111-11"}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.True(len(r.errMsg()) > len("taxID") && r.errMsg()[:5] == "taxID") // names the field
		r = s.do(t, "PATCH", "/api/v1/customer/customer-ana", s.appID, `{"email":"nope"}`)
		mustStatus(t, is, r, http.StatusBadRequest)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer/nobody", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // failures are 400, as the spec says
		is.Equal(r.errMsg(), "Customer not found")  // the real API's message
		r = s.do(t, "PATCH", "/api/v1/customer/nobody", s.appID, `{"name":"x"}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Customer not found")
	})
}

// TestCustomers_PathIDs: the SDKs put ids into paths without encoding them; encoded ids
// are decoded, and "+" stays "+".
func TestCustomers_PathIDs(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for _, id := range []string{"ana+pix@example.com", "v1.2.3", "a b", "a/b", "ação"} {
		is := is.New(t)
		body := `{"name":"x","email":"x@example.com","correlationID":"` + id + `"}`
		mustStatus(t, is, s.do(t, "POST", "/api/v1/customer", s.appID, body), http.StatusOK)
	}
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/customer/ana+pix@example.com", "ana+pix@example.com"}, // raw, as the SDKs send it
		{"/api/v1/customer/ana%2Bpix%40example.com", "ana+pix@example.com"},
		{"/api/v1/customer/v1.2.3", "v1.2.3"},
		{"/api/v1/customer/a%20b", "a b"},
		{"/api/v1/customer/a%2Fb", "a/b"},
		{"/api/v1/customer/a%C3%A7%C3%A3o", "ação"},
		{"/api/openpix/v1/customer/ana+pix@example.com", "ana+pix@example.com"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", tc.path, s.appID, "")
			mustStatus(t, is, r, http.StatusOK)
			is.Equal(str(r.body, "customer", "correlationID"), tc.want)
		})
	}
	t.Run("PlusIsNotSpace", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer/ana%20pix@example.com", s.appID, "")
		is.Equal(r.status, http.StatusBadRequest) // "+" and " " are different ids
		is.Equal(r.errMsg(), "Customer not found")
	})
}

package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

const acmeBody = `{
	"preRegistration":{"name":"ACME Ltda","taxID":{"taxID":"11222333000181","type":"BR:CNPJ"},"website":"https://acme.example.com"},
	"user":{"firstName":"Ana","lastName":"Souza","email":"ana@acme.example.com","phone":"+5511999990000","taxID":{"taxID":"52998224725","type":"BR:CPF"}}}`

const acmeAppBody = `{"application":{"name":"ACME API","type":"API"},"taxID":{"taxID":"11222333000181","type":"BR:CNPJ"}}`

func TestPartner(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	mustStatus(t, is.New(t), s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"P","email":"p@example.com","correlationID":"partner-customer"}`), http.StatusOK)
	var companyAppID string

	t.Run("CreatePreRegistration", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/partner/company", s.appID, acmeBody)
		mustStatus(t, is, r, http.StatusCreated) // new: 201
		is.Equal(get(r.body, "preRegistration"), map[string]any{
			"name": "ACME Ltda", "website": "https://acme.example.com",
			"taxID": map[string]any{"taxID": "11222333000181", "type": "BR:CNPJ"},
		})
		is.Equal(get(r.body, "user"), map[string]any{
			"firstName": "Ana", "lastName": "Souza", "email": "ana@acme.example.com", "phone": "+5511999990000",
		})
		r = s.do(t, "POST", "/api/openpix/v1/partner/company", s.appID, acmeBody)
		mustStatus(t, is, r, http.StatusOK) // the same tax ID again: 200, the existing one
		is.Equal(str(r.body, "preRegistration", "name"), "ACME Ltda")
	})
	t.Run("GetPreRegistration", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/partner/company/11222333000181", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		pr := get(r.body, "preRegistration")
		is.Equal(str(pr, "preRegistration", "name"), "ACME Ltda") // {preRegistration:{preRegistration,user,company,account}}
		is.Equal(str(pr, "user", "firstName"), "Ana")
		is.True(str(pr, "company", "id") != "")
		is.Equal(str(pr, "company", "name"), "ACME Ltda")
		is.Equal(str(pr, "company", "taxID", "taxID"), "11222333000181")
		is.Equal(get(pr, "account"), map[string]any{}) // no application yet

		r = s.do(t, "GET", "/api/v1/partner/company/52998224725", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "Pre-registration not found")
	})
	t.Run("ListPreRegistrations", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/partner/company", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		prs := list(r.body, "preRegistrations")
		is.Equal(len(prs), 1)
		is.Equal(str(prs[0], "preRegistration", "taxID", "taxID"), "11222333000181") // same shape as get
		is.Equal(num(r.body, "pageInfo", "totalCount"), 1)
		is.Equal(get(r.body, "pageInfo", "errors"), []any{}) // the partner list's pageInfo.errors
		r = s.do(t, "GET", "/api/v1/partner/company?limit=x", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
	})
	t.Run("ListAffiliates", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/partner/affiliate", s.appID, "")
		mustStatus(t, is, r, http.StatusOK) // served, no longer 501
		affs := list(r.body, "affiliates")
		is.Equal(len(affs), 1)
		is.Equal(str(affs[0], "company", "name"), "ACME Ltda")
		is.Equal(str(affs[0], "company", "taxID", "taxID"), "11222333000181")
		is.True(str(affs[0], "company", "id") != "")
		is.Equal(get(affs[0], "account"), nil) // no application yet
		is.Equal(get(r.body, "pageInfo", "errors"), []any{})
		r = s.do(t, "GET", "/api/v1/partner/affiliate?skip=-1", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest)
	})
	t.Run("CreateApplication", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/partner/application", s.appID, acmeAppBody)
		mustStatus(t, is, r, http.StatusCreated) // new: 201
		a := get(r.body, "application")
		is.Equal(str(a, "name"), "ACME API")
		is.Equal(str(a, "type"), "API")
		is.Equal(get(a, "isActive"), true)
		is.True(str(a, "clientId") != "")
		is.True(str(a, "clientSecret") != "") // shown once
		is.Equal(get(a, "scopes"), []any{})   // the reference's key: none (no restriction here)
		companyAppID = str(a, "appID")
		is.True(companyAppID != "")

		r = s.do(t, "POST", "/api/v1/partner/application", s.appID, acmeAppBody)
		mustStatus(t, is, r, http.StatusOK) // the same name again: 200, the existing one
		is.Equal(str(r.body, "application", "clientId"), str(a, "clientId"))
		is.Equal(get(r.body, "application", "clientSecret"), nil) // the secret cannot be shown again
		is.Equal(get(r.body, "application", "appID"), nil)

		r = s.do(t, "GET", "/api/v1/partner/company/11.222.333%2F0001-81", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)                                                 // a masked tax ID, its slash encoded
		is.Equal(str(r.body, "preRegistration", "account", "clientId"), str(a, "clientId")) // account.clientId
		r = s.do(t, "GET", "/api/v1/partner/affiliate", s.appID, "")
		is.Equal(str(list(r.body, "affiliates")[0], "account", "clientId"), str(a, "clientId")) // and the affiliate's
	})
	t.Run("NewCompanyIsolated", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "GET", "/api/v1/customer", companyAppID, "")
		mustStatus(t, is, r, http.StatusOK) // the new App ID authenticates
		is.Equal(len(list(r.body, "customers")), 0)
		is.Equal(num(r.body, "pageInfo", "totalCount"), 0) // and sees no customers
		r = s.do(t, "GET", "/api/v1/customer/partner-customer", companyAppID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // not the partner's
		is.Equal(r.errMsg(), "Customer not found")

		r = s.do(t, "POST", "/api/v1/customer", companyAppID, `{"name":"Own","email":"own@example.com","correlationID":"own"}`)
		mustStatus(t, is, r, http.StatusOK)
		r = s.do(t, "GET", "/api/v1/customer/own", s.appID, "")
		mustStatus(t, is, r, http.StatusBadRequest) // and the partner does not see the new company's
		is.Equal(r.errMsg(), "Customer not found")
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		is := is.New(t)
		for _, route := range []struct{ method, path, body string }{
			{"POST", "/api/v1/partner/company", acmeBody},
			{"GET", "/api/v1/partner/company", ""},
			{"GET", "/api/v1/partner/company/11222333000181", ""},
			{"POST", "/api/v1/partner/application", acmeAppBody},
			{"GET", "/api/v1/partner/affiliate", ""},
		} {
			r := s.do(t, route.method, route.path, companyAppID, route.body)
			mustStatus(t, is, r, http.StatusForbidden) // the new company is not a partner
			is.Equal(r.errMsg(), "only partner companies may use partner operations")
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct{ name, path, body, want string }{
			{"TaxIDCheckDigit", "/api/v1/partner/company", `{"preRegistration":{"name":"X","taxID":{"taxID":"11222333000182","type":"BR:CNPJ"}}}`, "preRegistration.taxID"},
			{"TaxIDWrongType", "/api/v1/partner/company", `{"preRegistration":{"name":"X","taxID":5}}`, "preRegistration.taxID"},
			{"TaxIDTypeMismatch", "/api/v1/partner/company", `{"preRegistration":{"name":"X","taxID":{"taxID":"52998224725","type":"BR:CNPJ"}}}`, "preRegistration.taxID.type"},
			{"TaxIDTypeUnknown", "/api/v1/partner/company", `{"preRegistration":{"name":"X","taxID":{"taxID":"52998224725","type":"BR:RG"}}}`, "preRegistration.taxID.type"},
			{"NameNoBRCodeCanCarry", "/api/v1/partner/company", `{"preRegistration":{"name":"😀😀😀","taxID":{"taxID":"45723174000110","type":"BR:CNPJ"}}}`, "preRegistration.name"},
			{"NameMissing", "/api/v1/partner/company", `{"preRegistration":{"taxID":{"taxID":"52998224725","type":"BR:CPF"}}}`, "preRegistration.name"},
			{"UserEmail", "/api/v1/partner/company", `{"preRegistration":{"name":"X","taxID":"52998224725"},"user":{"email":"nope"}}`, "user.email"},
			{"UserWrongType", "/api/v1/partner/company", `{"preRegistration":{"name":"X","taxID":"52998224725"},"user":{"phone":5511}}`, "user.phone"},
			{"AppNameMissing", "/api/v1/partner/application", `{"application":{"type":"API"},"taxID":{"taxID":"11222333000181"}}`, "application.name"},
			{"AppType", "/api/v1/partner/application", `{"application":{"name":"x","type":"NOPE"},"taxID":{"taxID":"11222333000181"}}`, "application.type"},
			{"AppTaxIDMissing", "/api/v1/partner/application", `{"application":{"name":"x"}}`, "taxID"},
			{"AppScopes", "/api/v1/partner/application", `{"application":{"name":"x","type":"API","scopes":["CHARGE"]},"taxID":{"taxID":"11222333000181"}}`, "application.scopes are not offered"}, // not silently dropped
			{"OwnAppScopes", "/api/v1/application", `{"application":{"name":"x","scopes":["CHARGE"]}}`, "application.scopes"},
			{"OwnAppScopesFlat", "/api/v1/application", `{"name":"x","scopes":["CHARGE"]}`, "scopes"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", tc.path, s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				is.True(strings.HasPrefix(r.errMsg(), tc.want)) // the message names the field
			})
		}
	})
	t.Run("ErrAppNotPreRegistered", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/partner/application", s.appID, `{"application":{"name":"x","type":"API"},"taxID":{"taxID":"52998224725","type":"BR:CPF"}}`)
		mustStatus(t, is, r, http.StatusBadRequest) // only for companies the caller pre-registered
		is.Equal(r.errMsg(), "Pre-registration not found")
	})
}

// TestTaxIDObject_TypeSpellings: a {taxID, type} object's type is read in any case, with
// or without "BR:"; absent, the tax ID says what it is.
func TestTaxIDObject_TypeSpellings(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	for i, tc := range []struct{ typ, taxID string }{
		{`"type":"BR:CPF",`, "529.982.247-25"}, {`"type":"br:cpf",`, "11144477735"}, {`"type":"CPF",`, "39053344705"}, {``, "12345678909"},
	} {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/customer", s.appID, `{"name":"Ana","correlationID":"ana-`+string(rune('a'+i))+`",
			"taxID":{`+tc.typ+`"taxID":"`+tc.taxID+`"}}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "customer", "taxID", "type"), "BR:CPF")
	}
}

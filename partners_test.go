package payments_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// acme is a valid pre-registration; its CNPJ is given masked.
var acme = payments.CreatePreRegistrationParams{
	Name: "ACME Ltda", TaxID: "11.222.333/0001-81", Website: "https://acme.example.com",
	User: payments.PreRegistrationUser{FirstName: "Ana", LastName: "Souza", Email: "ana@ACME.example.com", Phone: "+55 11 99999-0000"},
}

func TestService_CreatePreRegistration(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		pr, created, err := e.svc.CreatePreRegistration(ctx, acme)
		is.NoErr(err)
		is.True(created) // a new tax ID creates
		is.Equal(pr.Details, payments.PreRegistrationDetails{
			Name: "ACME Ltda", Website: "https://acme.example.com",
			TaxID: payments.TaxID{TaxID: "11222333000181", Type: payments.TaxIDCNPJ},
		}) // tax ID normalized
		is.Equal(pr.User.Email, "ana@acme.example.com") // e-mail domain lower-cased
		is.Equal(pr.User.Phone, "+5511999990000")
		is.Equal(pr.PartnerID, payments.DefaultCompanyID)
		is.Equal(pr.Account.ClientID, "") // no application yet
		is.True(pr.Company.ID != "" && pr.Company.ID != payments.DefaultCompanyID)

		other, err := e.svc.Company(ctx, pr.Company.ID)
		is.NoErr(err) // the company exists
		c, err := other.GetCompany(ctx)
		is.NoErr(err)
		is.Equal(c.Name, "ACME Ltda")
		is.Equal(c.PartnerID, payments.DefaultCompanyID) // registered by the partner
		is.True(!c.Partner)                              // and not a partner itself
		is.Equal(*c.TaxID, pr.Details.TaxID)
		is.True(c.PixKey != "") // default data: a receiving Pix key

		t.Run("Idempotent", func(t *testing.T) {
			is := is.New(t)
			again := acme
			again.TaxID = "11222333000181" // unmasked
			again.Name = "Another name"
			pr2, created, err := e.svc.CreatePreRegistration(ctx, again)
			is.NoErr(err)
			is.True(!created)                       // the tax ID is the idempotency key
			is.Equal(pr2.Company.ID, pr.Company.ID) // no second company
			is.Equal(pr2.Details.Name, "ACME Ltda") // the stored pre-registration, unchanged
			_, page, err := e.svc.ListPreRegistrations(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 1)
		})
		t.Run("Get", func(t *testing.T) {
			is := is.New(t)
			got, err := e.svc.GetPreRegistration(ctx, "11.222.333/0001-81")
			is.NoErr(err)
			is.Equal(got, pr) // get returns what create returned
			_, err = e.svc.GetPreRegistration(ctx, "52998224725")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // never pre-registered
			_, err = e.svc.GetPreRegistration(ctx, "123")
			is.Equal(payments.ErrorField(err), "taxID") // not a tax ID
		})
	})
}

func TestService_CreatePreRegistration_Invalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(p *payments.CreatePreRegistrationParams)
		field string
	}{
		{"NoName", func(p *payments.CreatePreRegistrationParams) { p.Name = " " }, "preRegistration.name"},
		{"NameNoBRCodeCanCarry", func(p *payments.CreatePreRegistrationParams) { p.Name = "😀😀😀" }, "preRegistration.name"}, // its charges could not be encoded
		{"NoTaxID", func(p *payments.CreatePreRegistrationParams) { p.TaxID = "" }, "preRegistration.taxID"},
		{"TaxIDCheckDigit", func(p *payments.CreatePreRegistrationParams) { p.TaxID = "11222333000182" }, "preRegistration.taxID"},
		{"Email", func(p *payments.CreatePreRegistrationParams) { p.User.Email = "nope" }, "user.email"},
		{"Phone", func(p *payments.CreatePreRegistrationParams) { p.User.Phone = "12" }, "user.phone"},
	}
	eachStore(t, func(t *testing.T, e env) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				p := acme
				tc.edit(&p)
				_, _, err := e.svc.CreatePreRegistration(ctx, p)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // rejected as invalid
				is.Equal(payments.ErrorField(err), tc.field)         // naming the field
				_, page, err := e.svc.ListPreRegistrations(ctx, payments.ListParams{})
				is.NoErr(err)
				is.Equal(page.TotalCount, 0) // nothing was written
			})
		}
	})
}

func TestService_ListPreRegistrations(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, id := range []string{"11222333000181", "52998224725", "11144477735"} {
			_, _, err := e.svc.CreatePreRegistration(ctx, payments.CreatePreRegistrationParams{Name: "Co " + id, TaxID: id})
			is.NoErr(err)
			e.clock.Advance(1e9)
		}
		_, _, err := e.svc.CreatePartnerApplication(ctx, "11144477735", payments.CreateApplicationParams{Name: "api"})
		is.NoErr(err)
		prs, page, err := e.svc.ListPreRegistrations(ctx, payments.ListParams{Limit: 2})
		is.NoErr(err)
		is.Equal(page, payments.PageInfo{Skip: 0, Limit: 2, TotalCount: 3, HasNextPage: true})
		is.Equal(prs[0].Details.TaxID.TaxID, "11144477735") // newest first
		is.True(prs[0].Account.ClientID != "")              // account.clientId once an application exists
		is.Equal(prs[1].Account.ClientID, "")
		_, _, err = e.svc.ListPreRegistrations(ctx, payments.ListParams{Skip: -1})
		is.Equal(payments.ErrorField(err), "skip") // paging bounds checked
	})
}

func TestService_CreatePartnerApplication(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		pr, _, err := e.svc.CreatePreRegistration(ctx, acme)
		is.NoErr(err)
		partnerCustomer, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "P", Email: "p@example.com", CorrelationID: "partner-customer"})
		is.NoErr(err)

		a, created, err := e.svc.CreatePartnerApplication(ctx, "11.222.333/0001-81", payments.CreateApplicationParams{Name: "ACME API", Type: "API"})
		is.NoErr(err)
		is.True(created)              // new application
		is.True(a.ClientSecret != "") // secret shown once

		t.Run("AppIDActsForNewCompany", func(t *testing.T) {
			is := is.New(t)
			svc, err := e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err)
			is.Equal(svc.CompanyID(), pr.Company.ID) // the App ID resolves to the pre-registered company
			cs, page, err := svc.ListCustomers(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(len(cs), 0) // it starts with no customers
			is.Equal(page.TotalCount, 0)
			_, err = svc.GetCustomer(ctx, partnerCustomer.CorrelationID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // the partner's customer is not visible

			_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Own", Email: "own@example.com", CorrelationID: "partner-customer"})
			is.NoErr(err) // correlationIDs are per company
			own, err := e.svc.GetCustomer(ctx, "partner-customer")
			is.NoErr(err)
			is.Equal(own.Name, "P") // the partner still sees its own

			for _, call := range []func() error{
				func() error { _, _, err := svc.CreatePreRegistration(ctx, acme); return err },
				func() error { _, err := svc.GetPreRegistration(ctx, acme.TaxID); return err },
				func() error { _, _, err := svc.ListPreRegistrations(ctx, payments.ListParams{}); return err },
				func() error {
					_, _, err := svc.CreatePartnerApplication(ctx, acme.TaxID, payments.CreateApplicationParams{Name: "x"})
					return err
				},
			} {
				is.Equal(payments.ErrorCode(call()), payments.EFORBIDDEN) // a non-partner may not use partner operations
			}
		})
		t.Run("Idempotent", func(t *testing.T) {
			is := is.New(t)
			b, created, err := e.svc.CreatePartnerApplication(ctx, "11222333000181", payments.CreateApplicationParams{Name: "ACME API"})
			is.NoErr(err)
			is.True(!created)                // same name: the existing application
			is.Equal(b.ClientID, a.ClientID) // same credentials
			is.Equal(b.ClientSecret, "")     // the secret cannot be shown again
			got, err := e.svc.GetPreRegistration(ctx, acme.TaxID)
			is.NoErr(err)
			is.Equal(got.Account.ClientID, a.ClientID) // account.clientId is the first application

			c, created, err := e.svc.CreatePartnerApplication(ctx, "11222333000181", payments.CreateApplicationParams{Name: "Second"})
			is.NoErr(err)
			is.True(created) // another name: another application
			is.True(c.ClientID != a.ClientID)
			got, err = e.svc.GetPreRegistration(ctx, acme.TaxID)
			is.NoErr(err)
			is.Equal(got.Account.ClientID, a.ClientID) // still the first one
		})
		t.Run("ErrNotPreRegistered", func(t *testing.T) {
			is := is.New(t)
			_, _, err := e.svc.CreatePartnerApplication(ctx, "52998224725", payments.CreateApplicationParams{Name: "x"})
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // only for companies the caller pre-registered
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			is := is.New(t)
			_, _, err := e.svc.CreatePartnerApplication(ctx, "11222333000181", payments.CreateApplicationParams{})
			is.Equal(payments.ErrorField(err), "application.name") // name required
			_, _, err = e.svc.CreatePartnerApplication(ctx, "11222333000182", payments.CreateApplicationParams{Name: "x"})
			is.Equal(payments.ErrorField(err), "taxID") // bad check digit
			_, _, err = e.svc.CreatePartnerApplication(ctx, "", payments.CreateApplicationParams{Name: "x"})
			is.Equal(payments.ErrorField(err), "taxID") // missing
		})
	})
}

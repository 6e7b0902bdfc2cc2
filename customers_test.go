package payments_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

func TestService_CreateCustomer(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			c, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{
				Name: "Dan", TaxID: "529.982.247-25", Email: "dan@Example.COM", Phone: "+55 (11) 99999-0000",
				CorrelationID: "cust-1", Address: &payments.Address{Zipcode: "01310100", City: "São Paulo"},
			})
			is.NoErr(err)
			is.Equal(c.TaxID, &payments.TaxID{TaxID: "52998224725", Type: payments.TaxIDCPF}) // masked CPF normalized
			is.Equal(c.Email, "dan@example.com")                                              // domain lower-cased
			is.Equal(c.Phone, "+5511999990000")                                               // punctuation stripped
			is.Equal(c.CreatedAt, t0)                                                         // time from the injected clock
			is.Equal(c.Address.City, "São Paulo")

			got, err := e.svc.GetCustomer(ctx, "cust-1")
			is.NoErr(err)
			is.Equal(got, c) // get by correlationID returns what create returned
			got, err = e.svc.GetCustomer(ctx, "52998224725")
			is.NoErr(err)
			is.Equal(got.CorrelationID, "cust-1") // get by tax ID
			is.Equal(got.CreatedAt.Location(), time.UTC)
		})
		t.Run("AlphanumericCNPJ", func(t *testing.T) {
			is := is.New(t)
			c, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "ACME", TaxID: "12.ABC.345/01DE-35"})
			is.NoErr(err)
			is.Equal(*c.TaxID, payments.TaxID{TaxID: "12ABC34501DE35", Type: payments.TaxIDCNPJ}) // alphanumeric CNPJ accepted
			is.True(c.CorrelationID != "")                                                        // correlationID generated
		})
		t.Run("EmailOnly", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Eve", Email: "eve@example.com"})
			is.NoErr(err) // name + email is enough
		})
		t.Run("ErrDuplicateCorrelationID", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "A", Email: "a@example.com", CorrelationID: "dup"})
			is.NoErr(err)
			_, err = e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "B", Email: "b@example.com", CorrelationID: "dup"})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // same correlationID
			is.Equal(payments.ErrorField(err), "correlationID")
		})
		t.Run("ErrDuplicateTaxID", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "A", TaxID: "111.444.777-35"})
			is.NoErr(err)
			_, err = e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "B", TaxID: "11144477735"})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // same tax ID
			is.Equal(payments.ErrorField(err), "taxID")
		})
	})
}

func TestService_CreateCustomer_Invalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		p     payments.CreateCustomerParams
		field string
	}{
		{"NoName", payments.CreateCustomerParams{TaxID: "52998224725"}, "name"},
		{"NoContact", payments.CreateCustomerParams{Name: "A"}, "taxID"},
		{"CPFWrongCheckDigit", payments.CreateCustomerParams{Name: "A", TaxID: "52998224726"}, "taxID"},
		{"CPFAllEqual", payments.CreateCustomerParams{Name: "A", TaxID: "111.111.111-11"}, "taxID"},
		{"CNPJWrongCheckDigit", payments.CreateCustomerParams{Name: "A", TaxID: "11222333000182"}, "taxID"},
		{"CNPJAllEqual", payments.CreateCustomerParams{Name: "A", TaxID: "00000000000000"}, "taxID"},
		{"AlphanumericCNPJWrongCheckDigit", payments.CreateCustomerParams{Name: "A", TaxID: "12ABC34501DE36"}, "taxID"},
		{"TaxIDWrongLength", payments.CreateCustomerParams{Name: "A", TaxID: "1234"}, "taxID"},
		{"Email", payments.CreateCustomerParams{Name: "A", Email: "not-an-email"}, "email"},
		{"Phone", payments.CreateCustomerParams{Name: "A", Phone: "12ab"}, "phone"},
		{"NameTooLong", payments.CreateCustomerParams{Name: string(make([]byte, 201)), Email: "a@example.com"}, "name"},
		{"CorrelationIDControl", payments.CreateCustomerParams{Name: "A", Email: "a@example.com", CorrelationID: "a\x00b"}, "correlationID"},
	}
	eachStore(t, func(t *testing.T, e env) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := e.svc.CreateCustomer(ctx, tc.p)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // rejected as invalid
				is.Equal(payments.ErrorField(err), tc.field)         // naming the field
				is.True(payments.ErrorMessage(err) != "")
				_, page, err := e.svc.ListCustomers(ctx, payments.ListParams{})
				is.NoErr(err)
				is.Equal(page.TotalCount, 0) // nothing was written
			})
		}
	})
}

func TestService_ListCustomers(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for i := range 5 {
			_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "C", Email: "c@example.com", CorrelationID: string(rune('a' + i))})
			is.NoErr(err)
			e.clock.Advance(time.Second)
		}
		cs, page, err := e.svc.ListCustomers(ctx, payments.ListParams{Skip: 1, Limit: 2})
		is.NoErr(err)
		is.Equal(page, payments.PageInfo{Skip: 1, Limit: 2, TotalCount: 5, HasPreviousPage: true, HasNextPage: true})
		is.Equal([]string{cs[0].CorrelationID, cs[1].CorrelationID}, []string{"d", "c"}) // newest first
		_, page, err = e.svc.ListCustomers(ctx, payments.ListParams{Skip: 3, Limit: 2})
		is.NoErr(err)
		is.True(!page.HasNextPage) // last page
		_, page, err = e.svc.ListCustomers(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.Limit, payments.DefaultLimit) // default page size
		_, _, err = e.svc.ListCustomers(ctx, payments.ListParams{Limit: -1})
		is.Equal(payments.ErrorField(err), "limit") // negative limit
		_, _, err = e.svc.ListCustomers(ctx, payments.ListParams{Skip: -1})
		is.Equal(payments.ErrorField(err), "skip") // negative skip
		_, _, err = e.svc.ListCustomers(ctx, payments.ListParams{Limit: payments.MaxLimit + 1})
		is.Equal(payments.ErrorField(err), "limit") // huge limit
	})
}

func TestService_UpdateCustomer(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Dan", TaxID: "52998224725", Email: "dan@example.com", CorrelationID: "c1"})
		is.NoErr(err)
		_, err = e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Other", TaxID: "11144477735", CorrelationID: "c2"})
		is.NoErr(err)
		e.clock.Advance(time.Minute)

		phone := "11988887777"
		u, err := e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{Phone: &phone})
		is.NoErr(err)
		is.Equal(u.Name, "Dan")              // unset fields unchanged
		is.Equal(u.Email, "dan@example.com") // unset fields unchanged
		is.Equal(u.Phone, "11988887777")     // set field changed
		is.Equal(u.CreatedAt, c.CreatedAt)
		is.Equal(u.UpdatedAt, t0.Add(time.Minute))

		taken := "111.444.777-35"
		_, err = e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{TaxID: &taken})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // tax ID of another customer
		is.Equal(payments.ErrorField(err), "taxID")

		bad := "bad"
		_, err = e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{Email: &bad})
		is.Equal(payments.ErrorField(err), "email") // invalid update rejected
		empty := ""
		_, err = e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{Name: &empty})
		is.Equal(payments.ErrorField(err), "name") // name cannot be removed
		got, err := e.svc.GetCustomer(ctx, "c1")
		is.NoErr(err)
		is.Equal(got, u) // failed updates changed nothing

		_, err = e.svc.UpdateCustomer(ctx, "missing", payments.CustomerUpdate{Phone: &phone})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)

		// Address replaces the address; AddressUpdate changes the fields it gives.
		u, err = e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{Address: &payments.Address{Street: "Rua A", Number: "1", City: "Recife"}})
		is.NoErr(err)
		two, none := "2", ""
		u, err = e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{AddressUpdate: &payments.AddressUpdate{Number: &two, City: &none}})
		is.NoErr(err)
		is.Equal(*u.Address, payments.Address{Street: "Rua A", Number: "2"}) // the street kept, the city cleared
		_, err = e.svc.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{Address: &payments.Address{}, AddressUpdate: &payments.AddressUpdate{}})
		is.Equal(payments.ErrorField(err), "address") // one or the other
	})
}

func TestService_CustomersCompanyIsolation(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Dan", TaxID: "52998224725", CorrelationID: "c1"})
		is.NoErr(err)
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Second", TaxID: "11222333000181"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)

		_, err = other.GetCustomer(ctx, "c1")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not by correlationID
		_, err = other.GetCustomer(ctx, "52998224725")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not by tax ID
		cs, page, err := other.ListCustomers(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(cs), 0) // not in lists
		is.Equal(page.TotalCount, 0)
		phone := "11988887777"
		_, err = other.UpdateCustomer(ctx, "c1", payments.CustomerUpdate{Phone: &phone})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // cannot update it

		_, err = other.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Dan", TaxID: "52998224725", CorrelationID: "c1"})
		is.NoErr(err) // the same ids are free in another company

		_, err = other.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Third"})
		is.Equal(payments.ErrorCode(err), payments.EFORBIDDEN) // only partners register companies
		_, err = e.svc.Company(ctx, "no-such-company")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
	})
}

// TestService_ChargeCustomerByEmailOrPhone: a charge's customer named by e-mail or phone
// alone is the customer who has it, not a new copy for every charge.
func TestService_ChargeCustomerByEmailOrPhone(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		first, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "Ana", Email: "ana@example.com", TaxID: "52998224725"})
		is.NoErr(err)
		for i := range 3 {
			c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("by-email-", i), Value: 100,
				Customer: &payments.CreateCustomerParams{Name: "Ana", Email: "ANA@example.com"}})
			is.NoErr(err)
			is.Equal(c.Customer.CorrelationID, first.CorrelationID) // the customer with that e-mail
			is.Equal(c.Customer.TaxID.TaxID, "52998224725")
		}
		for i := range 3 {
			_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("by-phone-", i), Value: 100,
				Customer: &payments.CreateCustomerParams{Name: "Bruno", Phone: "+5511999990000"}})
			is.NoErr(err)
		}
		_, page, err := e.svc.ListCustomers(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 2) // Ana, and one Bruno
	})
}

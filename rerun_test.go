package payments_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/storetest"
)

// eachRerun runs fn on a Service over a RerunStore around memory and around bolt. A test
// sets rs.BeforeRerun to commit, between the two runs of its call's transaction, what
// another writer would: the first run rolls back, and the second must answer from what
// it reads then, not from what the first run did.
func eachRerun(t *testing.T, fn func(t *testing.T, e env, rs *storetest.RerunStore)) {
	t.Helper()
	for _, st := range stores {
		if st.name == "rerun" {
			continue
		}
		t.Run(st.name, func(t *testing.T) {
			rs := storetest.Rerun(st.open(t))
			fn(t, newEnv(t, rs), rs)
		})
	}
}

func TestService_Rerun_CreateSubaccount(t *testing.T) {
	t.Parallel()
	eachRerun(t, func(t *testing.T, e env, rs *storetest.RerunStore) {
		is := is.New(t)
		rs.BeforeRerun(func() {
			_, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "sub@example.com", Name: "Theirs"})
			is.NoErr(err)
			is.True(created) // the other writer creates it
		})
		sa, created, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "sub@example.com", Name: "Mine"})
		is.NoErr(err)
		is.True(!created)           // the run that counts found it: not created, though the first run created it
		is.Equal(sa.Name, "Theirs") // the existing subaccount is returned
		_, page, err := e.svc.ListSubaccounts(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 1) // one subaccount
		audit(t, e.svc)
	})
}

func TestService_Rerun_GetOrCreateExclusiveCashback(t *testing.T) {
	t.Parallel()
	eachRerun(t, func(t *testing.T, e env, rs *storetest.RerunStore) {
		is := is.New(t)
		rs.BeforeRerun(func() {
			_, created, err := e.svc.GetOrCreateExclusiveCashback(ctx, "52998224725", 500)
			is.NoErr(err)
			is.True(created) // the other writer creates it
		})
		cb, created, err := e.svc.GetOrCreateExclusiveCashback(ctx, "529.982.247-25", 700)
		is.NoErr(err)
		is.True(!created)              // the run that counts found one pending
		is.Equal(cb.Value, int64(500)) // and returns it
		b, err := e.svc.GetCashbackBalance(ctx, "52998224725")
		is.NoErr(err)
		is.Equal(b.Balance, int64(500)) // one cashback promised, not two
	})
}

func TestService_Rerun_CreatePreRegistration(t *testing.T) {
	t.Parallel()
	eachRerun(t, func(t *testing.T, e env, rs *storetest.RerunStore) {
		is := is.New(t)
		var theirs payments.PreRegistration
		rs.BeforeRerun(func() {
			first := acme
			first.Name = "ACME First"
			var created bool
			var err error
			theirs, created, err = e.svc.CreatePreRegistration(ctx, first)
			is.NoErr(err)
			is.True(created) // the other writer pre-registers the tax ID
		})
		pr, created, err := e.svc.CreatePreRegistration(ctx, acme)
		is.NoErr(err)
		is.True(!created)                          // the run that counts found it
		is.Equal(pr.Details.Name, "ACME First")    // the stored pre-registration is returned
		is.Equal(pr.Company.ID, theirs.Company.ID) // with the other writer's company
		_, page, err := e.svc.ListPreRegistrations(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 1) // one pre-registration
	})
}

func TestService_Rerun_CreatePartnerApplication(t *testing.T) {
	t.Parallel()
	eachRerun(t, func(t *testing.T, e env, rs *storetest.RerunStore) {
		is := is.New(t)
		_, _, err := e.svc.CreatePreRegistration(ctx, acme)
		is.NoErr(err)
		var theirs payments.Application
		rs.BeforeRerun(func() {
			var created bool
			var err error
			theirs, created, err = e.svc.CreatePartnerApplication(ctx, acme.TaxID, payments.CreateApplicationParams{Name: "erp"})
			is.NoErr(err)
			is.True(created) // the other writer creates the application
		})
		a, created, err := e.svc.CreatePartnerApplication(ctx, acme.TaxID, payments.CreateApplicationParams{Name: "erp"})
		is.NoErr(err)
		is.True(!created)                     // the run that counts found it
		is.Equal(a.ClientID, theirs.ClientID) // the existing application is returned
		is.Equal(a.ClientSecret, "")          // without a secret: only its creator saw it
		is.Equal(a.AppID(), "")
	})
}

func TestService_Rerun_UpdateCustomer(t *testing.T) {
	t.Parallel()
	eachRerun(t, func(t *testing.T, e env, rs *storetest.RerunStore) {
		is := is.New(t)
		_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{
			Name: "Dan", Email: "dan@example.com", Phone: "+5511999990000", CorrelationID: "dan",
		})
		is.NoErr(err)
		rs.BeforeRerun(func() {
			c, err := e.svc.UpdateCustomer(ctx, "dan", payments.CustomerUpdate{Email: new("")})
			is.NoErr(err)
			is.Equal(c.Email, "") // the other writer removes the e-mail
		})
		c, err := e.svc.UpdateCustomer(ctx, "dan", payments.CustomerUpdate{Name: new("Daniel")})
		is.NoErr(err)
		is.Equal(c.Name, "Daniel") // this update applies
		is.Equal(c.Email, "")      // on what the run that counts read: the removed e-mail stays removed
		got, err := e.svc.GetCustomer(ctx, "dan")
		is.NoErr(err)
		is.Equal(got, c) // and that is what was stored
	})
}

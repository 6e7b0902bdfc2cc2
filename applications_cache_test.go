package payments_test

import (
	"encoding/base64"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestService_Authenticate_Cache checks that the App ID cache (applications_cache.go)
// never answers for a deactivated application once DeactivateApplication has returned,
// whichever Service of the process asks, and never for a wrong secret or another company.
func TestService_Authenticate_Cache(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		// newApp is an application of a new company (the company's first one stays active,
		// so that the second can be deactivated).
		newApp := func(t *testing.T, name string) (*payments.Service, payments.Application) {
			t.Helper()
			is := is.New(t)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: name})
			is.NoErr(err)
			svc, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			_, err = svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "keeper"})
			is.NoErr(err)
			a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "cached"})
			is.NoErr(err)
			return svc, a
		}

		t.Run("DeactivatedAfterCached", func(t *testing.T) {
			is := is.New(t)
			svc, a := newApp(t, "Deactivated")
			for range 3 {
				got, err := e.svc.Authenticate(ctx, a.AppID())
				is.NoErr(err)
				is.Equal(got.CompanyID(), svc.CompanyID()) // verified, then from the cache
			}
			_, err := svc.DeactivateApplication(ctx, a.ClientID)
			is.NoErr(err)
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // the cached App ID stops working at once
		})

		t.Run("OtherServiceSameStore", func(t *testing.T) {
			is := is.New(t)
			svc, a := newApp(t, "Other Service")
			other, err := payments.New(e.store, payments.Options{Clock: e.clock})
			is.NoErr(err) // a second Service over the same store: its own cache
			_, err = other.Authenticate(ctx, a.AppID())
			is.NoErr(err)
			_, err = other.Authenticate(ctx, a.AppID())
			is.NoErr(err) // cached there
			_, err = svc.DeactivateApplication(ctx, a.ClientID)
			is.NoErr(err)
			_, err = other.Authenticate(ctx, a.AppID())
			is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // a deactivation through one Service reaches every cache of the process
		})

		t.Run("WrongSecretAfterCached", func(t *testing.T) {
			is := is.New(t)
			_, a := newApp(t, "Wrong Secret")
			_, err := e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err)
			for _, bad := range []string{a.ClientSecret + "x", a.ClientSecret[:len(a.ClientSecret)-1], "Client_Secret_guess"} {
				_, err = e.svc.Authenticate(ctx, base64.StdEncoding.EncodeToString([]byte(a.ClientID+":"+bad)))
				is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // a cached client id with another secret is refused
			}
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err) // and the right one still works
		})

		t.Run("EachCompanyItsOwn", func(t *testing.T) {
			is := is.New(t)
			svcA, a := newApp(t, "Company A")
			svcB, b := newApp(t, "Company B")
			for range 3 {
				got, err := e.svc.Authenticate(ctx, a.AppID())
				is.NoErr(err)
				is.Equal(got.CompanyID(), svcA.CompanyID()) // A's App ID acts for A
				got, err = e.svc.Authenticate(ctx, b.AppID())
				is.NoErr(err)
				is.Equal(got.CompanyID(), svcB.CompanyID()) // B's for B, cached or not
			}
		})

		t.Run("ConcurrentDeactivation", func(t *testing.T) {
			is := is.New(t)
			svc, a := newApp(t, "Concurrent")
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 50 {
						_, _ = e.svc.Authenticate(ctx, a.AppID()) // before or after: either answer is right here
					}
				})
			}
			_, err := svc.DeactivateApplication(ctx, a.ClientID)
			is.NoErr(err)
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // refused once the deactivation has returned, while others fill the cache
			wg.Wait()
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // and after they are done
		})
	})
}

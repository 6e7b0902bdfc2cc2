package payments_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
)

func TestService_CreateApplication(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			a, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "site"})
			is.NoErr(err)
			is.Equal(a.Name, "site")
			is.Equal(a.Type, payments.ApplicationAPI) // type defaults to API
			is.True(a.IsActive)                       // new applications are active
			is.Equal(a.CreatedAt, t0)                 // time from the injected clock
			is.True(strings.HasPrefix(a.ClientID, "Client_Id_"))
			is.True(len(a.ClientSecret) >= 43) // 32 random bytes, encoded

			raw, err := base64.StdEncoding.DecodeString(a.AppID())
			is.NoErr(err)
			is.Equal(string(raw), a.ClientID+":"+a.ClientSecret) // App ID = base64(clientId:clientSecret)

			svc, err := e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err)
			is.Equal(svc.CompanyID(), payments.DefaultCompanyID) // the App ID acts for its company
		})
		t.Run("SecretStoredHashed", func(t *testing.T) {
			is := is.New(t)
			a, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "hashed"})
			is.NoErr(err)
			err = e.store.View(ctx, func(tx store.Tx) error {
				r, err := tx.GetByKey("applications", "_system", "clientId:"+a.ClientID)
				is.NoErr(err)
				is.True(!bytes.Contains(r.Data, []byte(a.ClientSecret))) // the secret is not in the record
				return nil
			})
			is.NoErr(err)
		})
		t.Run("TwoSecretsDiffer", func(t *testing.T) {
			is := is.New(t)
			a, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "one"})
			is.NoErr(err)
			b, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "two"})
			is.NoErr(err)
			is.True(a.ClientID != b.ClientID)         // unique client ids
			is.True(a.ClientSecret != b.ClientSecret) // random secrets
		})
		t.Run("ErrDuplicateName", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "dup"})
			is.NoErr(err)
			_, err = e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: " dup "})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // names are unique within a company
			is.Equal(payments.ErrorField(err), "application.name")
		})
		t.Run("ErrNameRequired", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "  "})
			is.Equal(payments.ErrorCode(err), payments.EINVALID) // a name is required
			is.Equal(payments.ErrorField(err), "application.name")
		})
		t.Run("Types", func(t *testing.T) {
			is := is.New(t)
			for _, typ := range []payments.ApplicationType{"PLUGIN", "oracle", " API "} {
				a, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "t-" + string(typ), Type: typ})
				is.NoErr(err) // the real API's three types
				is.Equal(string(a.Type), strings.ToUpper(strings.TrimSpace(string(typ))))
				svc, err := e.svc.Authenticate(ctx, a.AppID())
				is.NoErr(err) // and each authenticates
				is.Equal(svc.CompanyID(), payments.DefaultCompanyID)
			}
		})
		t.Run("ErrType", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "x", Type: "WEB"})
			is.Equal(payments.ErrorCode(err), payments.EINVALID) // not a type of the real API
			is.Equal(payments.ErrorField(err), "application.type")
		})
	})
}

func TestService_Authenticate(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "auth"})
		is.NoErr(err)
		b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			for _, id := range []string{
				a.AppID(),
				strings.TrimRight(a.AppID(), "="), // missing padding tolerated
				"  " + a.AppID() + " ",            // surrounding spaces tolerated
			} {
				svc, err := e.svc.Authenticate(ctx, id)
				is.NoErr(err)
				is.Equal(svc.CompanyID(), payments.DefaultCompanyID)
			}
		})

		bad := []struct{ name, appID string }{
			{"Empty", ""},
			{"Garbage", "not base64 at all!"},
			{"NoColon", b64(a.ClientID + a.ClientSecret)},
			{"EmptySecret", b64(a.ClientID + ":")},
			{"WrongSecret", b64(a.ClientID + ":" + a.ClientSecret + "x")},
			{"UnknownClient", b64("Client_Id_nope:" + a.ClientSecret)},
			{"SecretAsAppID", a.ClientSecret},
			{"TooLong", strings.Repeat("A", 4096)},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				svc, err := e.svc.Authenticate(ctx, tc.appID)
				is.True(svc == nil)
				is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // rejected
				is.Equal(payments.ErrorMessage(err), "invalid App ID")    // one generic message: nothing says which part was wrong
			})
		}

		t.Run("Deactivated", func(t *testing.T) {
			is := is.New(t)
			d, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "to-deactivate"})
			is.NoErr(err)
			got, err := e.svc.DeactivateApplication(ctx, d.ClientID)
			is.NoErr(err)
			is.True(!got.IsActive)
			_, err = e.svc.Authenticate(ctx, d.AppID())
			is.Equal(payments.ErrorCode(err), payments.EUNAUTHORIZED) // an inactive application no longer authenticates
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err) // other applications are unaffected
		})
	})
}

func TestService_ListApplications(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		apps, page, err := e.svc.ListApplications(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(apps), 0) // a new company has no applications
		is.Equal(page.TotalCount, 0)

		for _, name := range []string{"a", "b", "c"} {
			_, err := e.svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: name})
			is.NoErr(err)
			e.clock.Advance(1e9)
		}
		apps, page, err = e.svc.ListApplications(ctx, payments.ListParams{Limit: 2})
		is.NoErr(err)
		is.Equal(page.TotalCount, 3)
		is.Equal([]string{apps[0].Name, apps[1].Name}, []string{"c", "b"}) // newest first
		for _, a := range apps {
			is.Equal(a.ClientSecret, "") // secrets are never listed
			is.Equal(a.AppID(), "")
		}
	})
}

func TestService_DeactivateApplication(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("ErrLastActive", func(t *testing.T) {
			is := is.New(t)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Alone"})
			is.NoErr(err)
			svc, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "only"})
			is.NoErr(err)
			_, err = svc.DeactivateApplication(ctx, a.ClientID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // the last active one stays
			is.Equal(payments.ErrorField(err), "clientId")
			is.True(strings.Contains(payments.ErrorMessage(err), "last active application")) // saying why
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err) // and it still works

			b, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "second"})
			is.NoErr(err)
			got, err := svc.DeactivateApplication(ctx, a.ClientID)
			is.NoErr(err) // with another active one, it may go
			is.True(!got.IsActive)
			got, err = svc.DeactivateApplication(ctx, a.ClientID)
			is.NoErr(err) // again: it stays inactive
			is.True(!got.IsActive)
			_, err = svc.DeactivateApplication(ctx, b.ClientID)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // now b is the last one
		})
		t.Run("ConcurrentLastTwo", func(t *testing.T) {
			is := is.New(t)
			co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Two"})
			is.NoErr(err)
			svc, err := e.svc.Company(ctx, co.ID)
			is.NoErr(err)
			var ids []string
			for _, name := range []string{"a", "b"} {
				a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: name})
				is.NoErr(err)
				ids = append(ids, a.ClientID)
			}
			errs := make([]error, len(ids))
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = svc.DeactivateApplication(ctx, id)
				}()
			}
			wg.Wait()
			is.True((errs[0] == nil) != (errs[1] == nil)) // one deactivated, the other refused
			apps, _, err := svc.ListApplications(ctx, payments.ListParams{})
			is.NoErr(err)
			active := 0
			for _, a := range apps {
				if a.IsActive {
					active++
				}
			}
			is.Equal(active, 1) // one application is left
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.DeactivateApplication(ctx, "Client_Id_nope")
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		})
		t.Run("ErrOtherCompany", func(t *testing.T) {
			is := is.New(t)
			pr, _, err := e.svc.CreatePreRegistration(ctx, payments.CreatePreRegistrationParams{Name: "Other", TaxID: "11.222.333/0001-81"})
			is.NoErr(err)
			a, _, err := e.svc.CreatePartnerApplication(ctx, pr.Details.TaxID.TaxID, payments.CreateApplicationParams{Name: "api"})
			is.NoErr(err)
			_, err = e.svc.DeactivateApplication(ctx, a.ClientID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // another company's application is not visible
			_, err = e.svc.Authenticate(ctx, a.AppID())
			is.NoErr(err) // and stays active
		})
	})
}

package httpadapter_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

// TestRerun_GetOrCreate sends get-or-create requests whose transaction runs twice, with
// another writer creating the resource between the two runs: the answer is the
// existing resource's (200, and no secret for an application), not the rolled-back
// first run's (201).
func TestRerun_GetOrCreate(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	rs := storetest.Rerun(memory.New())
	t.Cleanup(func() { rs.Close() })
	svc, err := payments.New(rs, payments.Options{Clock: payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))})
	is.NoErr(err)
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "test"})
	is.NoErr(err)
	s := server{svc: svc, h: httpadapter.New(svc, httpadapter.Options{}), appID: a.AppID()}

	t.Run("PreRegistration", func(t *testing.T) {
		is := is.New(t)
		rs.BeforeRerun(func() {
			_, created, err := svc.CreatePreRegistration(ctx, payments.CreatePreRegistrationParams{Name: "ACME First", TaxID: "11222333000181"})
			is.NoErr(err)
			is.True(created) // the other writer pre-registers the tax ID
		})
		r := s.do(t, "POST", "/api/v1/partner/company", s.appID, acmeBody)
		mustStatus(t, is, r, http.StatusOK)                            // existing: 200
		is.Equal(str(r.body, "preRegistration", "name"), "ACME First") // the stored one
	})
	t.Run("PartnerApplication", func(t *testing.T) {
		is := is.New(t)
		rs.BeforeRerun(func() {
			_, created, err := svc.CreatePartnerApplication(ctx, "11222333000181", payments.CreateApplicationParams{Name: "ACME API"})
			is.NoErr(err)
			is.True(created) // the other writer creates the application
		})
		r := s.do(t, "POST", "/api/v1/partner/application", s.appID, acmeAppBody)
		mustStatus(t, is, r, http.StatusOK) // existing: 200
		is.True(str(r.body, "application", "clientId") != "")
		is.Equal(get(r.body, "application", "clientSecret"), nil) // no secret: it was shown to its creator only
		is.Equal(get(r.body, "application", "appID"), nil)
	})
	t.Run("Cashback", func(t *testing.T) {
		is := is.New(t)
		rs.BeforeRerun(func() {
			_, created, err := svc.GetOrCreateExclusiveCashback(ctx, "52998224725", 150)
			is.NoErr(err)
			is.True(created) // the other writer promises a cashback
		})
		r := s.do(t, "POST", "/api/v1/cashback-fidelity", s.appID, `{"taxID":"52998224725","value":999}`)
		mustStatus(t, is, r, http.StatusOK)             // one already pending: 200
		is.Equal(num(r.body, "cashback", "value"), 150) // the pending one
		is.Equal(str(r.body, "message"), "Customer already has a pending cashback")
	})
}

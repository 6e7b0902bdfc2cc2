package httpadapter_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// newClockServer is newServer with the sandbox on and an OffsetClock over the ManualClock,
// shared by the Service and the handler, as examples/server shares one over the system
// clock. The test never sleeps: only the offset moves time.
func newClockServer(t *testing.T, sandbox bool) (server, *payments.OffsetClock) {
	t.Helper()
	return newOffsetClockServer(t, sandbox, payments.Options{})
}

// newOffsetClockServer is a test server whose Service runs on an OffsetClock over a
// ManualClock (server.clock), with opts (Clock and DefaultCompany set here).
func newOffsetClockServer(t *testing.T, sandbox bool, opts payments.Options) (server, *payments.OffsetClock) {
	t.Helper()
	mem := memory.New()
	return newOffsetClockServerOn(t, mem, mem, sandbox, opts)
}

// newOffsetClockServerOn is newOffsetClockServer on the store st, which is mem or wraps it.
func newOffsetClockServerOn(t *testing.T, mem *memory.Store, st store.Store, sandbox bool, opts payments.Options) (server, *payments.OffsetClock) {
	t.Helper()
	base := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	clock := payments.NewOffsetClock(base)
	opts.Clock, opts.DefaultCompany = clock, payments.CreateCompanyParams{Name: "Loja Exemplo"}
	svc, err := payments.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	h := httpadapter.New(svc, httpadapter.Options{Sandbox: sandbox, Clock: clock, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return server{svc: svc, clock: base, store: mem, h: h, appID: a.AppID(), logs: logs}, clock
}

func TestSandbox_Clock(t *testing.T) {
	t.Parallel()
	t.Run("AdvanceExpiresCharges", func(t *testing.T) {
		is := is.New(t)
		s, clock := newClockServer(t, true)
		s.createCharge(t, s.appID, `{"correlationID":"soon","value":1000,"expiresIn":900}`)
		s.createCharge(t, s.appID, `{"correlationID":"later","value":1000,"expiresIn":86400}`)

		r := s.do(t, "GET", "/openpix/testing/clock", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "now"), "2026-11-22T12:00:00.000Z") // the base clock, not moved yet

		r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"1h"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "now"), "2026-11-22T13:00:00.000Z")              // an hour later
		is.Equal(clock.Now(), time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)) // the Service's clock moved

		r = s.do(t, "GET", "/api/v1/charge?status=EXPIRED", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		charges := list(r.body, "charges")
		is.Equal(len(charges), 1)                          // only the one past its expiry
		is.Equal(str(charges[0], "correlationID"), "soon") // it
		is.Equal(str(charges[0], "status"), "EXPIRED")
		expired := 0
		evs, err := s.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		for _, ev := range evs {
			if ev.Name == "OPENPIX:CHARGE_EXPIRED" {
				expired++
			}
		}
		is.Equal(expired, 1) // the due pass ran before the answer: the expiry is recorded, once

		r = s.do(t, "GET", "/openpix/testing/clock", s.appID, "")
		is.Equal(str(r.body, "now"), "2026-11-22T13:00:00.000Z") // reading does not move it
		r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"744h"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "now"), "2026-12-23T13:00:00.000Z") // a month (31 days) on
		r = s.do(t, "GET", "/api/v1/charge/later", s.appID, "")
		is.Equal(str(r.body, "charge", "status"), "EXPIRED") // the other one too
	})
	t.Run("AdvanceIsTimePassing", func(t *testing.T) {
		// Three months on: each month's charge was generated on its day and expired a week
		// later, as with the server running; the last is still payable.
		is := is.New(t)
		s, _ := newClockServer(t, true)
		r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"value":2500,"correlationID":"gym",
			"customer":{"name":"Ana","taxID":"52998224725"},"dayGenerateCharge":10,"dayDue":7}`)
		mustStatus(t, is, r, http.StatusOK)
		r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"2064h"}`) // 86 days: Feb 16
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "now"), "2027-02-16T12:00:00.000Z")
		r = s.do(t, "GET", "/api/v1/charge?subscription=gym", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		var got []string
		for _, c := range list(r.body, "charges") { // newest first
			got = append(got, str(c, "correlationID")+" "+str(c, "status")+" "+str(c, "createdAt"))
		}
		is.Equal(got, []string{
			"gym:2027-02-10 ACTIVE 2027-02-10T03:00:00.000Z",
			"gym:2027-01-10 EXPIRED 2027-01-10T03:00:00.000Z",
			"gym:2026-12-10 EXPIRED 2026-12-10T03:00:00.000Z",
		})
	})
	t.Run("LongerThanWriteTimeout", func(t *testing.T) {
		// A server whose WriteTimeout has passed before any handler could answer: the move
		// still answers, since it lifts the deadline; another route's answer is cut off.
		is := is.New(t)
		s, _ := newClockServer(t, true)
		srv := httptest.NewUnstartedServer(s.h)
		srv.Config.WriteTimeout = time.Nanosecond
		srv.Start()
		defer srv.Close()
		call := func(method, path, body string) (int, error) {
			req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
			is.NoErr(err)
			req.Header.Set("Authorization", s.appID)
			req.Header.Set("Content-Type", "application/json")
			res, err := srv.Client().Do(req)
			if err != nil {
				return 0, err
			}
			defer res.Body.Close()
			_, err = io.ReadAll(res.Body)
			return res.StatusCode, err
		}
		code, err := call("POST", "/openpix/testing/clock", `{"advance":"744h"}`)
		is.NoErr(err)
		is.Equal(code, http.StatusOK) // answered
		_, err = call("GET", "/openpix/testing/clock", "")
		is.True(err != nil) // the deadline is real: a route that does not lift it is cut off
	})
	t.Run("Errors", func(t *testing.T) {
		s, clock := newClockServer(t, true)
		for _, tc := range []struct{ name, body string }{
			{"Backwards", `{"advance":"-1h"}`},
			{"Missing", `{}`},
			{"Empty", `{"advance":""}`},
			{"NotADuration", `{"advance":"a month"}`},
			{"NoUnit", `{"advance":"3600"}`},
			{"Number", `{"advance":3600}`},
			{"TooFar", `{"advance":"2562047h"}`},
			{"NotJSON", `advance=1h`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := s.do(t, "POST", "/openpix/testing/clock", s.appID, tc.body)
				mustStatus(t, is, r, http.StatusBadRequest)
				if tc.name != "NotJSON" {
					is.True(bytes.Contains([]byte(r.errMsg()), []byte("advance"))) // the message names the field
				}
				is.Equal(clock.Now(), time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) // the clock did not move
			})
		}
	})
	t.Run("DueWorkFails", func(t *testing.T) {
		// Work that fails on the way (here every write; in life maybe another company's)
		// does not make the move an error: the clock moved, and an error would only lead
		// the client to move it again. The pass logs the failure; the next one catches up.
		is := is.New(t)
		mem := memory.New()
		fs := &failingWrites{Store: mem}
		s, clock := newOffsetClockServerOn(t, mem, fs, true, payments.Options{})
		r := s.do(t, "POST", "/api/v1/subscriptions", s.appID, `{"value":2500,"correlationID":"gym",
			"customer":{"name":"Ana","taxID":"52998224725"},"dayGenerateCharge":10}`)
		mustStatus(t, is, r, http.StatusOK)
		fs.fail.Store(true)
		r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"744h"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(str(r.body, "now"), "2026-12-23T12:00:00.000Z")              // the move was made
		is.Equal(clock.Now(), time.Date(2026, 12, 23, 12, 0, 0, 0, time.UTC)) // for the Service too
		is.True(strings.Contains(s.logs.String(), "disk full"))               // the failure is logged

		fs.fail.Store(false)
		r = s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"0s"}`)
		mustStatus(t, is, r, http.StatusOK)
		r = s.do(t, "GET", "/api/v1/charge?subscription=gym", s.appID, "")
		is.Equal(len(list(r.body, "charges")), 1) // caught up: December's charge
	})
	t.Run("NeedsAppID", func(t *testing.T) {
		is := is.New(t)
		s, _ := newClockServer(t, true)
		mustStatus(t, is, s.do(t, "GET", "/openpix/testing/clock", "", ""), http.StatusUnauthorized)
		mustStatus(t, is, s.do(t, "POST", "/openpix/testing/clock", "", `{"advance":"1h"}`), http.StatusUnauthorized)
	})
	t.Run("SandboxOff", func(t *testing.T) {
		is := is.New(t)
		s, clock := newClockServer(t, false)
		mustStatus(t, is, s.do(t, "GET", "/openpix/testing/clock", s.appID, ""), http.StatusNotFound)                  // no clock route in production
		mustStatus(t, is, s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"1h"}`), http.StatusNotFound) // nor moving it
		is.Equal(clock.Now(), time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))                                          // unmoved
	})
	t.Run("NoClock", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, httpadapter.Options{Sandbox: true})
		r := s.do(t, "POST", "/openpix/testing/clock", s.appID, `{"advance":"1h"}`)
		mustStatus(t, is, r, http.StatusNotImplemented) // a sandbox without a movable clock says so
	})
}

// failingWrites is a store whose writes fail while fail is set.
type failingWrites struct {
	store.Store
	fail atomic.Bool
}

func (f *failingWrites) Update(ctx context.Context, fn func(store.Tx) error) error {
	if f.fail.Load() {
		return errors.New("disk full")
	}
	return f.Store.Update(ctx, fn)
}

package payments_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// TestNew_DefaultCompanyOnReopen: a later open gives the stored default company what
// Options.DefaultCompany sets that differs, in one transaction, logging which fields; an
// empty field keeps the stored value; a Pix key another company holds is refused naming
// DefaultCompany.PixKey and changes nothing. On bolt the file is closed and opened again;
// on the other drivers New runs again over the same store.
func TestNew_DefaultCompanyOnReopen(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			s := st.open(t)
			reopen := func() store.Store { return s }
			if st.name == "bolt" {
				is.NoErr(s.Close()) // a file of its own, closed and opened again below
				path := filepath.Join(t.TempDir(), "payments.db")
				open := func() store.Store {
					b, err := bolt.Open(path)
					is.NoErr(err)
					return b
				}
				s = open()
				reopen = func() store.Store {
					is.NoErr(s.Close())
					s = open()
					return s
				}
			}
			t.Cleanup(func() { s.Close() })
			clock := payments.NewManualClock(t0)
			var logs bytes.Buffer
			open := func(p payments.CreateCompanyParams) (*payments.Service, error) {
				logs.Reset()
				return payments.New(reopen(), payments.Options{Clock: clock, DefaultCompany: p,
					Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			}
			keyOf := func(c payments.Charge) string {
				code, err := brcode.Parse(c.BRCode)
				is.NoErr(err)
				return code.Key
			}
			strp := func(s string) *string { return &s }
			first := payments.CreateCompanyParams{Name: "Loja", PixKey: "first@loja.example.com", MerchantName: "Loja", MerchantCity: "Sao Paulo"}

			svc, err := open(first)
			is.NoErr(err)
			c1, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 100})
			is.NoErr(err)
			is.Equal(keyOf(c1), "first@loja.example.com")
			other, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra", PixKey: "other@loja.example.com"})
			is.NoErr(err)

			clock.Set(t0.Add(time.Hour))
			for _, p := range []payments.CreateCompanyParams{first, {}, {PixKey: " ", MerchantCity: ""}} {
				svc, err = open(p)
				is.NoErr(err)
				co, err := svc.GetCompany(ctx)
				is.NoErr(err)
				is.Equal(co.PixKey, "first@loja.example.com") // the same or nothing given: nothing changes
				is.Equal(co.MerchantCity, "Sao Paulo")
				is.Equal(co.UpdatedAt, t0)                                           // not even written
				is.True(!strings.Contains(logs.String(), "default company changed")) // nor logged
			}

			second := first
			second.PixKey, second.MerchantCity = "second@loja.example.com", "Recife"
			svc, err = open(second)
			is.NoErr(err)
			co, err := svc.GetCompany(ctx)
			is.NoErr(err)
			is.Equal(co.PixKey, "second@loja.example.com") // the new key
			is.Equal(co.MerchantCity, "Recife")
			is.Equal(co.MerchantName, "Loja") // what did not change stays
			is.True(co.Partner)
			is.Equal(co.UpdatedAt, t0.Add(time.Hour))
			is.Equal(strings.Count(logs.String(), "default company changed"), 1)   // one line
			is.True(strings.Contains(logs.String(), "fields=pixKey,merchantCity")) // naming what changed
			c2, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100})
			is.NoErr(err)
			is.Equal(keyOf(c2), "second@loja.example.com") // new charges carry it
			c1, err = svc.GetCharge(ctx, "c1")
			is.NoErr(err)
			is.Equal(keyOf(c1), "first@loja.example.com") // charges made before keep their BR Codes
			otherSvc, err := svc.Company(ctx, other.ID)   // over the store as opened now
			is.NoErr(err)
			_, err = otherSvc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: strp("second@loja.example.com")})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // the new key is the default company's
			_, err = otherSvc.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: strp("first@loja.example.com")})
			is.NoErr(err) // and the old one is free

			clock.Set(t0.Add(2 * time.Hour))
			taken := second
			taken.PixKey, taken.MerchantName = "first@loja.example.com", "Loja Nova"
			_, err = open(taken)
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT)                   // another company's key
			is.Equal(payments.ErrorField(err), "DefaultCompany.PixKey")             // named as the Options field
			is.True(strings.Contains(err.Error(), "Options.DefaultCompany.PixKey")) // and so in the message
			svc, err = open(payments.CreateCompanyParams{})
			is.NoErr(err)
			co, err = svc.GetCompany(ctx)
			is.NoErr(err)
			is.Equal(co.PixKey, "second@loja.example.com") // nothing of the refused open applied
			is.Equal(co.MerchantName, "Loja")
			is.Equal(co.UpdatedAt, t0.Add(time.Hour))
		})
	}
}

package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// TestCompany_Get: GET /company answers the caller's company, and only it, in the official
// document's shape {company:{officialName, tradeName, taxID, correlationID}}.
func TestCompany_Get(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	is := is.New(t)
	me, err := s.svc.GetCompany(ctx)
	is.NoErr(err)

	r := s.do(t, "GET", "/api/v1/company", s.appID, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(r.body, map[string]any{"company": map[string]any{
		"correlationID": me.ID, "officialName": "Loja Exemplo", "tradeName": "Loja Exemplo", // no tax ID: none given
	}})

	other := s.newCompany(t, "Outra Loja", "11.222.333/0001-81")
	r = s.do(t, "GET", "/api/openpix/v1/company", other, "")
	mustStatus(t, is, r, http.StatusOK)
	is.Equal(keys(get(r.body, "company")), []string{"correlationID", "officialName", "taxID", "tradeName"})
	is.Equal(str(r.body, "company", "officialName"), "Outra Loja")
	is.Equal(str(r.body, "company", "taxID"), "11222333000181") // digits only
	is.True(str(r.body, "company", "correlationID") != me.ID)   // its own company, not the caller's partner

	r = s.do(t, "GET", "/api/v1/company", "", "")
	mustStatus(t, is, r, http.StatusUnauthorized) // an App ID says which company
}

// TestWebhookIPs: GET /webhook/ips lists Options.WebhookIPs in canonical form under "ips";
// none configured is an empty list, never null.
func TestWebhookIPs(t *testing.T) {
	t.Parallel()
	t.Run("None", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, httpadapter.Options{})
		r := s.do(t, "GET", "/api/v1/webhook/ips", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.raw, `{"ips":[]}`+"\n") // the document's shape, empty
	})
	t.Run("Configured", func(t *testing.T) {
		is := is.New(t)
		s := newServer(t, httpadapter.Options{WebhookIPs: []string{"203.0.113.7", "2001:DB8:0:0::8", "::ffff:198.51.100.9"}})
		r := s.do(t, "GET", "/api/openpix/v1/webhook/ips", s.appID, "")
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(r.body, map[string]any{"ips": []any{"203.0.113.7", "2001:db8::8", "198.51.100.9"}}) // canonical, in order
		r = s.do(t, "GET", "/api/v1/webhook/ips", "", "")
		mustStatus(t, is, r, http.StatusUnauthorized) // behind the App ID, as in the document
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, ips := range [][]string{
			{""}, {"203.0.113"}, {"203.0.113.7:443"}, {"203.0.113.0/24"}, {"fe80::1%eth0"}, {"example.com"},
			{"203.0.113.7", "203.0.113.7"}, {"198.51.100.9", "::ffff:198.51.100.9"},
		} {
			is := is.New(t)
			err := httpadapter.CheckWebhookIPs(ips)
			is.True(err != nil) // refused
			is.True(strings.Contains(err.Error(), `"`+ips[len(ips)-1]+`"`) || ips[0] == "")
			func() {
				defer func() { is.True(recover() != nil) }() // New refuses it at start
				httpadapter.New(newServer(t, httpadapter.Options{}).svc, httpadapter.Options{WebhookIPs: ips})
			}()
		}
		is := is.New(t)
		is.NoErr(httpadapter.CheckWebhookIPs(nil))                                    // none is fine
		is.NoErr(httpadapter.CheckWebhookIPs([]string{"203.0.113.7", "2001:db8::1"})) // IPv4 and IPv6
	})
}

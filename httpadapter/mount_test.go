package httpadapter_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// pageURLs finds the URLs a payment page names: in src, href and data-*-url attributes
// (the script fetches data-status-url and data-simulate-url).
var pageURLs = regexp.MustCompile(`\s(src|href|data-[a-z-]+-url)="([^"]*)"`)

// TestMountedUnderPrefix mounts the handler under /payments/ on a host's mux, beside a
// route of the host's own, as issue 30 describes, and drives a charge's payment page
// through the prefix: the page, and every URL it names (the QR image, the status the
// script polls, the sandbox's simulate button), resolved against the page's URL as a
// browser does, answer 200 through the same mux; simulating pays the charge.
func TestMountedUnderPrefix(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	host := http.NewServeMux()
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)
	s := newServer(t, httpadapter.Options{Sandbox: true, BaseURL: ts.URL + "/payments"})
	host.Handle("/payments/", http.StripPrefix("/payments", s.h))
	host.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the host's home") })
	other := s.newCompany(t, "Outra Loja", "11222333000181")

	send := func(method, u, appID, body string, headers ...string) (int, http.Header, string) {
		t.Helper()
		r, err := http.NewRequest(method, u, strings.NewReader(body))
		is.NoErr(err)
		if appID != "" {
			r.Header.Set("Authorization", appID)
			r.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		res, err := ts.Client().Do(r)
		is.NoErr(err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		is.NoErr(err)
		return res.StatusCode, res.Header, string(b)
	}

	status, _, body := send("POST", ts.URL+"/payments/api/v1/charge", s.appID, `{"correlationID":"mounted-1","value":1500}`)
	is.Equal(status, http.StatusOK)
	var created struct {
		Charge struct {
			PaymentLinkID  string `json:"paymentLinkID"`
			PaymentLinkURL string `json:"paymentLinkUrl"`
			QRCodeImage    string `json:"qrCodeImage"`
		} `json:"charge"`
	}
	is.NoErr(json.Unmarshal([]byte(body), &created))
	c := created.Charge
	is.Equal(c.PaymentLinkURL, ts.URL+"/payments/pay/"+c.PaymentLinkID) // the links carry the prefix (BaseURL)
	status, hdr, _ := send("GET", c.QRCodeImage, "", "")
	is.Equal(status, http.StatusOK)
	is.Equal(hdr.Get("Content-Type"), "image/png")

	status, hdr, page := send("GET", c.PaymentLinkURL, "", "")
	is.Equal(status, http.StatusOK)
	is.Equal(hdr.Get("Content-Type"), "text/html; charset=utf-8")
	csp := hdr.Get("Content-Security-Policy")
	is.True(strings.Contains(csp, "default-src 'none'; img-src 'self'; connect-src 'self';")) // the policy is kept

	pageURL, err := url.Parse(c.PaymentLinkURL)
	is.NoErr(err)
	named := map[string]string{} // attribute → the absolute URL a browser resolves it to
	for _, m := range pageURLs.FindAllStringSubmatch(page, -1) {
		ref, err := url.Parse(html.UnescapeString(m[2]))
		is.NoErr(err)
		named[m[1]] = pageURL.ResolveReference(ref).String()
	}
	base := ts.URL + "/payments/"
	is.Equal(named, map[string]string{ // exactly these, all under the prefix
		"src":               base + "openpix/charge/brcode/image/" + c.PaymentLinkID + ".png?size=600",
		"data-status-url":   base + "pay/" + c.PaymentLinkID + "/status",
		"data-simulate-url": base + "pay/" + c.PaymentLinkID + "/simulate",
	})

	status, hdr, _ = send("GET", named["src"], "", "")
	is.Equal(status, http.StatusOK)
	is.Equal(hdr.Get("Content-Type"), "image/png")
	status, _, body = send("GET", named["data-status-url"], "", "", "Accept", "application/json")
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, `"status":"WAITING"`))
	// The page's button, as a browser on the page sends it: with the page's Origin.
	status, _, body = send("POST", named["data-simulate-url"], "", "", "Origin", ts.URL, "Accept", "application/json")
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, `"status":"PAID"`))
	status, _, body = send("GET", named["data-status-url"], "", "", "Accept", "application/json")
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, `"status":"PAID"`))

	status, _, body = send("GET", ts.URL+"/payments/api/v1/charge/mounted-1", s.appID, "")
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, `"status":"COMPLETED"`)) // the simulate paid the charge

	// Another company cannot read it through the prefix either: it is answered as a charge
	// that does not exist.
	status, _, body = send("GET", ts.URL+"/payments/api/v1/charge/mounted-1", other, "")
	unknownStatus, _, unknownBody := send("GET", ts.URL+"/payments/api/v1/charge/no-such-charge", other, "")
	is.True(status >= 400)
	is.Equal(status, unknownStatus)
	is.Equal(strings.ReplaceAll(body, "mounted-1", "no-such-charge"), unknownBody)

	// The host's own routes are the host's: its home, and no adapter route outside the prefix.
	status, _, body = send("GET", ts.URL+"/", "", "")
	is.Equal(status, http.StatusOK)
	is.Equal(body, "the host's home")
	status, _, _ = send("GET", ts.URL+"/pay/"+c.PaymentLinkID, "", "")
	is.Equal(status, http.StatusNotFound)
}

// TestMountedUnderPrefix_Redirect: the adapter's redirect of an untidy path keeps the
// prefix a host stripped (a host's own ServeMux cleans the path before, but a proxy or
// another router may not); at the root it is as before.
func TestMountedUnderPrefix_Redirect(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	host := http.StripPrefix("/payments", s.h)
	for _, tc := range []struct {
		h         http.Handler
		path, loc string
	}{
		{host, "/payments/api/v1//charge", "/payments/api/v1/charge"},
		{host, "/payments/api/v1/./charge?limit=1", "/payments/api/v1/charge?limit=1"},
		{s.h, "/api/v1//charge", "/api/v1/charge"},
	} {
		w := httptest.NewRecorder()
		tc.h.ServeHTTP(w, httptest.NewRequest("GET", tc.path, nil))
		is.True(w.Code == http.StatusMovedPermanently || w.Code == http.StatusTemporaryRedirect) // the mux's redirect
		is.Equal(w.Header().Get("Location"), tc.loc)                                             // under the prefix it was asked under
		is.Equal(w.Body.String(), "{}\n")
	}
}

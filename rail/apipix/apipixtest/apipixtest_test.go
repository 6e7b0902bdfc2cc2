package apipixtest_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

const txid1 = "apipixtest0000000000000001" // 26 characters

func cobBody(value string) string {
	return `{"calendario":{"expiracao":3600},"valor":{"original":"` + value + `"},"chave":"pix@psp.example.com","solicitacaoPagador":"pedido 1"}`
}

func TestPSP_MutualTLS(t *testing.T) {
	p, _ := newPSP(t, apipixtest.Options{})
	t.Run("NoClientCertificate", func(t *testing.T) {
		is := is.New(t)
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.RootCAs()}}}
		defer hc.CloseIdleConnections()
		for _, url := range []string{p.TokenURL(), p.URL() + "/cob/" + txid1} {
			resp, err := hc.Get(url)
			if err == nil {
				resp.Body.Close()
			}
			is.True(err != nil) // the handshake fails without the client certificate, token route included
		}
	})
	t.Run("OtherClientCertificate", func(t *testing.T) {
		is := is.New(t)
		other := apipixtest.New(t, apipixtest.Options{})
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: p.RootCAs(), Certificates: []tls.Certificate{other.ClientCertificate()}}}}
		defer hc.CloseIdleConnections()
		resp, err := hc.Get(p.TokenURL())
		if err == nil {
			resp.Body.Close()
		}
		is.True(err != nil) // a certificate another CA signed is refused
	})
	t.Run("URLs", func(t *testing.T) {
		is := is.New(t)
		is.True(strings.HasPrefix(p.URL(), "https://127.0.0.1:")) // the API's base
		is.True(strings.HasSuffix(p.URL(), "/v2"))                // with the standard's version
		is.Equal(p.TokenURL(), strings.TrimSuffix(p.URL(), "/v2")+"/oauth/token")
		is.Equal(p.PixKey(), apipixtest.DefaultPixKey)
	})
}

func TestPSP_Token(t *testing.T) {
	t.Run("JSONAndForm", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		hc := httpClient(t, p)
		a := fetchToken(t, p, hc, "application/json", `{"grant_type":"client_credentials"}`)
		b := fetchToken(t, p, hc, "application/x-www-form-urlencoded", "grant_type=client_credentials")
		is.True(a != b)               // each call a new token
		is.Equal(p.TokensIssued(), 2) // both counted
		noViolations(t, p)
	})
	t.Run("WrongSecret", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		req, _ := http.NewRequest("POST", p.TokenURL(), strings.NewReader(`{"grant_type":"client_credentials"}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(p.ClientID(), "wrong")
		resp, err := httpClient(t, p).Do(req)
		is.NoErr(err)
		resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusUnauthorized) // wrong credentials
		noViolations(t, p)                                 // are no violation
	})
	t.Run("NoBasicAuth", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		resp, err := httpClient(t, p).Post(p.TokenURL(), "application/json", strings.NewReader(`{"grant_type":"client_credentials"}`))
		is.NoErr(err)
		resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusUnauthorized) // no credentials
		is.Equal(len(p.Violations()), 1)                   // break the standard
	})
	t.Run("ExpireTokens", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		status, _ := c.do("GET", "/v2/cob/"+txid1, "")
		is.Equal(status, http.StatusNotFound) // authenticated: the charge is unknown
		p.ExpireTokens()
		status, body := c.do("GET", "/v2/cob/"+txid1, "")
		is.Equal(status, http.StatusUnauthorized) // the token is refused from now on
		is.Equal(body["status"], 401.0)           // with an RFC 7807 body
		c.token = fetchToken(t, p, c.hc, "application/json", `{"grant_type":"client_credentials"}`)
		status, _ = c.do("GET", "/v2/cob/"+txid1, "")
		is.Equal(status, http.StatusNotFound) // a new token works
		noViolations(t, p)
	})
	t.Run("TTL", func(t *testing.T) {
		is := is.New(t)
		p, clk := newPSP(t, apipixtest.Options{TokenTTL: time.Minute})
		c := dial(t, p)
		clk.Advance(59 * time.Second)
		status, _ := c.do("GET", "/v2/cob/"+txid1, "")
		is.Equal(status, http.StatusNotFound) // still valid
		clk.Advance(time.Second)
		status, _ = c.do("GET", "/v2/cob/"+txid1, "")
		is.Equal(status, http.StatusUnauthorized) // expired by the PSP's clock
	})
	t.Run("NoBearer", func(t *testing.T) {
		is := is.New(t)
		p, _ := newPSP(t, apipixtest.Options{})
		c := dial(t, p)
		c.token = ""
		status, _ := c.do("GET", "/v2/cob/"+txid1, "")
		is.Equal(status, http.StatusUnauthorized) // no token
		is.Equal(len(p.Violations()), 1)          // breaks the standard
		is.Equal(p.Count("", "/v2/"), 0)          // and is not counted
	})
}

func TestPSP_FailNext(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	p.FailNext("PUT", "/v2/cob/", http.StatusServiceUnavailable, 1)
	status, body := c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusServiceUnavailable)                                   // failed on purpose
	is.Equal(body["type"], "https://pix.bcb.gov.br/api/v2/error/ServicoIndisponivel") // as the standard's error
	_, ok := p.Charge(txid1)
	is.True(!ok) // before acting
	status, _ = c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusCreated)    // the next one passes
	is.Equal(p.Count("PUT", "/v2/cob/"), 2) // both were seen
	noViolations(t, p)
}

func TestPSP_LoseNext(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	c := dial(t, p)
	p.LoseNext("PUT", "/v2/cob/", 1)
	req, _ := http.NewRequest("PUT", c.base+"/v2/cob/"+txid1, strings.NewReader(cobBody("10.00")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	is.True(err != nil) // no answer
	ch, ok := p.Charge(txid1)
	is.True(ok) // but the PSP acted
	is.Equal(ch.Status, "ATIVA")
	status, body := c.do("PUT", "/v2/cob/"+txid1, cobBody("10.00"))
	is.Equal(status, http.StatusCreated) // the retry finds the charge as it stands
	is.Equal(body["revisao"], 0.0)       // unchanged
	noViolations(t, p)
}

func TestPSP_WritePEM(t *testing.T) {
	is := is.New(t)
	p, _ := newPSP(t, apipixtest.Options{})
	certFile, keyFile, caFile, err := p.WritePEM(t.TempDir())
	is.NoErr(err)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	is.NoErr(err) // the client certificate and key load
	caPEM, err := os.ReadFile(caFile)
	is.NoErr(err)
	roots := x509.NewCertPool()
	is.True(roots.AppendCertsFromPEM(caPEM)) // the CA loads
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}}}
	defer hc.CloseIdleConnections()
	fetchToken(t, p, hc, "application/x-www-form-urlencoded", "grant_type=client_credentials") // and talk to the PSP
}

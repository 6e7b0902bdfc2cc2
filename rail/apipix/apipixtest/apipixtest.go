// Package apipixtest is a make-believe PSP for tests: an in-process HTTPS server that
// speaks the Central Bank's API Pix (bacen/pix-api 2.9.0) and Efí's extension for sending
// Pix, keeps what it is told in memory, and holds every request to the standard.
//
// A test starts one with New, points the driver under test at URL, TokenURL and the
// credentials and certificates the PSP hands out, and plays the rest of the Pix network
// through the PSP's methods: Pay and Receive make money arrive (and notify the webhook the
// driver registered), the clock in Options moves sends and refunds to their final status,
// FailNext and LoseNext break calls on purpose.
//
// The PSP is strict where a real PSP is strict and stricter where a real PSP would only
// be surprised: a request that breaks the standard (a missing or unknown field, a money
// string that is not "123.45", a txid of the wrong shape, a bad CPF check digit, a
// missing token, a wrong method, a path the standard does not have) is answered 400 (or
// 401, 404, 405, 413) in the standard's RFC 7807 shape (on Efí's routes, Efí's
// json_invalido) and listed by Violations, so a driver's tests can end with a check that
// it sent none. Answers a correct client can get (a charge already paid, a refund above
// the Pix's value, a key nobody owns) are given but are no violation.
//
// What a client reads from it: every horario is RFC 3339 in UTC with as many fractional
// digits as the time has (a Pix comes back at the nanosecond it was received); GET /pix
// lists from inicio to fim both included, as the document says; a received Pix names its
// payer in Efí's extension, gnExtras.pagador {nome, cpf or cnpj}, since the standard's
// Pix names none; Efí's routes answer errors as Efí does, {nome, mensagem}, except an
// unknown idEnvio, which Efí answers 404 with the standard's shape
// (PixEnviadoNaoEncontrado).
//
// Where the standard's document is wrong, the PSP follows what PSPs accept and says so
// where it does: its patterns are anchored (the document writes them unanchored, and the
// CPF's JavaScript-style "/^\d{11}$/" would reject every real CPF), the expiracao default
// is the integer 86400 (the document writes it as a string), and a received Pix's txid
// may have 1 to 35 characters (static QR codes carry short ones, which the document's
// allOf with the charge txid's 26..35 rule would reject).
package apipixtest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pixfoundry/payments/brcode"
)

// Defaults of Options.
const (
	DefaultPixKey       = "pix@psp.example.com"
	DefaultClientID     = "client-id"
	DefaultClientSecret = "client-secret"
	DefaultTokenTTL     = time.Hour
	DefaultISPB         = "09089356"
)

// MerchantName and MerchantCity are the receiver as the PSP's BR Codes show it: the API
// Pix takes neither from the client, so a PSP writes its customer's registered name.
const (
	MerchantName = "PSP FAKE"
	MerchantCity = "SAO PAULO"
)

// Options configure a PSP. The zero value works.
type Options struct {
	// Now is the PSP's clock; nil is time.Now. Everything time-dependent reads it: token
	// expiry, every horario, settlement of sends and refunds, the 90-day refund window,
	// charge expiry and due dates. (TLS certificates use the real time.)
	Now func() time.Time
	// PixKey is the receiver's Pix key, the only key its charges, webhook and sends may
	// name; "" is DefaultPixKey.
	PixKey string
	// ClientID and ClientSecret are the OAuth2 client credentials the token route takes;
	// "" is DefaultClientID, DefaultClientSecret.
	ClientID     string
	ClientSecret string
	// TokenTTL is how long an issued token lasts (its expires_in); 0 is DefaultTokenTTL.
	TokenTTL time.Duration
	// SettleDelay is how long after it was made (by Now) a send or a refund stays
	// EM_PROCESSAMENTO; 0 settles them at once.
	SettleDelay time.Duration
	// ISPB is the PSP's institution code, the one in its endToEndIds and rtrIds; "" is
	// DefaultISPB.
	ISPB string
	// RefuseTxIDReuse makes a second PUT of a txid that already has a charge a refusal
	// (400 CobOperacaoInvalida, "txid em uso"), as some PSPs answer. Without it the PSP
	// does what the standard's document says: a PUT of an existing ATIVA charge revises it
	// (the same body again changes nothing), and of a charge no longer ATIVA is refused
	// unless it changes nothing.
	RefuseTxIDReuse bool
}

// PSP is a running make-believe PSP. Its methods are safe for concurrent use.
type PSP struct {
	o     Options
	now   func() time.Time
	srv   *http.Server
	host  string // 127.0.0.1:PORT
	certs certs
	// hook is the client that POSTs notifications to the company's webhook.
	hook *http.Client

	// vmu guards violations alone, so that a request can be rejected while mu is held.
	vmu        sync.Mutex
	violations []string

	mu            sync.Mutex
	tokens        map[string]token
	tokensIssued  int
	seen          []seenRequest
	faults        []fault
	holds         []*Hold
	charges       map[string]*charge
	locSeq        int64
	received      map[string]*received
	sends         map[string]*send
	webhook       *webhookReg
	notify        NotifyMode
	notifications int
	notifyErrs    []error
}

// New starts a PSP on 127.0.0.1 with a CA, a server certificate and a client certificate
// made for it; t.Cleanup stops it. Every route, the token route included, requires and
// verifies the client certificate (mutual TLS), as the API Pix does.
func New(t testing.TB, o Options) *PSP {
	t.Helper()
	p, err := start(o)
	if err != nil {
		t.Fatalf("apipixtest: %v", err)
	}
	t.Cleanup(p.close)
	return p
}

func start(o Options) (*PSP, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PixKey == "" {
		o.PixKey = DefaultPixKey
	}
	if _, canon, err := brcode.DetectKey(o.PixKey); err != nil || canon != o.PixKey {
		return nil, fmt.Errorf("Options.PixKey %q is not a Pix key in the DICT's form (%v)", o.PixKey, err)
	}
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.ClientSecret == "" {
		o.ClientSecret = DefaultClientSecret
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.SettleDelay < 0 {
		return nil, fmt.Errorf("Options.SettleDelay %v is negative", o.SettleDelay)
	}
	if o.ISPB == "" {
		o.ISPB = DefaultISPB
	}
	if !ispbRE.MatchString(o.ISPB) {
		return nil, fmt.Errorf("Options.ISPB %q is not 8 digits", o.ISPB)
	}
	c, err := newCerts()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	clock := o.Now
	p := &PSP{
		o: o,
		// Without its monotonic reading, a time compares the same before and after a
		// round trip through JSON.
		now:      func() time.Time { return clock().Round(0) },
		host:     ln.Addr().String(),
		certs:    c,
		tokens:   map[string]token{},
		charges:  map[string]*charge{},
		received: map[string]*received{},
		sends:    map[string]*send{},
	}
	p.hook = &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			// The company's webhook in a test is an httptest server with a certificate
			// nobody vouches for; a real PSP verifies it. The PSP presents its own
			// certificate, as the standard's webhooks are called over mutual TLS.
			InsecureSkipVerify: true, //nolint:gosec // test servers only
			Certificates:       []tls.Certificate{c.server},
		}},
	}
	p.srv = &http.Server{
		Handler:           p.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // failed handshakes are what some tests want
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{c.server},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    c.pool,
			MinVersion:   tls.VersionTLS12,
			// HTTP/1.1 only: LoseNext hijacks the connection, which HTTP/2 cannot.
			NextProtos: []string{"http/1.1"},
		},
	}
	go func() { _ = p.srv.Serve(tls.NewListener(ln, p.srv.TLSConfig)) }()
	return p, nil
}

func (p *PSP) close() {
	_ = p.srv.Close()
	if t, ok := p.hook.Transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
}

// URL is the base of the API Pix: "https://127.0.0.1:PORT/v2".
func (p *PSP) URL() string { return "https://" + p.host + "/v2" }

// TokenURL is where the OAuth2 token is asked: "https://127.0.0.1:PORT/oauth/token".
func (p *PSP) TokenURL() string { return "https://" + p.host + "/oauth/token" }

// ClientID is the OAuth2 client id the PSP accepts.
func (p *PSP) ClientID() string { return p.o.ClientID }

// ClientSecret is the OAuth2 client secret the PSP accepts.
func (p *PSP) ClientSecret() string { return p.o.ClientSecret }

// PixKey is the receiver's Pix key.
func (p *PSP) PixKey() string { return p.o.PixKey }

// ClientCertificate is the client certificate (and its key) the PSP trusts.
func (p *PSP) ClientCertificate() tls.Certificate { return p.certs.client }

// RootCAs trusts the PSP's server certificate.
func (p *PSP) RootCAs() *x509.CertPool { return p.certs.pool.Clone() }

// seenRequest is a request that passed authentication, for Count.
type seenRequest struct{ method, path string }

// fault is a FailNext or LoseNext rule: the next n matching requests fail with status,
// or (lose) act and lose their answer.
type fault struct {
	method, prefix string
	status         int
	n              int
	lose           bool
}

func matches(method, prefix string, r *http.Request) bool {
	return (method == "" || method == r.Method) && strings.HasPrefix(r.URL.Path, prefix)
}

// FailNext makes the next n requests whose method is method ("" for any) and whose URL
// path starts with pathPrefix (e.g. "PUT", "/v2/cob/") be answered status, with an RFC
// 7807 body, before the PSP acts on them: nothing changes. Rules are used in the order
// they were added.
func (p *PSP) FailNext(method, pathPrefix string, status int, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, fault{method: method, prefix: pathPrefix, status: status, n: n})
}

// Hold is a request HoldNext caught: Acted is closed once the PSP has acted on it, and
// Release lets its connection close, without an answer.
type Hold struct {
	method, prefix string
	acted, release chan struct{}
	once           sync.Once
}

// Acted is closed once the PSP has acted on the held request.
func (h *Hold) Acted() <-chan struct{} { return h.acted }

// Release ends the held request: its connection closes without an answer.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// HoldNext makes the next request matching method and pathPrefix (as FailNext matches
// them) act and then wait, unanswered, until the Hold is released or its client goes: the
// moment between a PSP acting and its client learning it, for a test to kill the client
// in. The test's cleanup releases it.
func (p *PSP) HoldNext(t testing.TB, method, pathPrefix string) *Hold {
	h := &Hold{method: method, prefix: pathPrefix, acted: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.Release)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds, h)
	return h
}

// takeHold returns the hold r matches, taking it off the list; nil when none.
func (p *PSP) takeHold(r *http.Request) *Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, h := range p.holds {
		if matches(h.method, h.prefix, r) {
			p.holds = append(p.holds[:i], p.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// ClearFaults drops every rule FailNext and LoseNext added that is not used up yet.
func (p *PSP) ClearFaults() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// LoseNext makes the next n matching requests (as FailNext matches them) act, and then
// closes their connection without an answer: the client cannot tell what happened.
func (p *PSP) LoseNext(method, pathPrefix string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, fault{method: method, prefix: pathPrefix, n: n, lose: true})
}

// takeFault uses up one request of the first rule that matches r, failing rules first:
// a request both would match fails before acting.
func (p *PSP) takeFault(r *http.Request) (status int, lose bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, wantLose := range []bool{false, true} {
		for i := range p.faults {
			f := &p.faults[i]
			if f.lose == wantLose && f.n > 0 && matches(f.method, f.prefix, r) {
				f.n--
				return f.status, f.lose
			}
		}
	}
	return 0, false
}

// Count is how many requests matching method ("" for any) and pathPrefix the PSP has
// seen after authenticating them, failed and lost ones included.
func (p *PSP) Count(method, pathPrefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, s := range p.seen {
		if (method == "" || method == s.method) && strings.HasPrefix(s.path, pathPrefix) {
			n++
		}
	}
	return n
}

// Violations lists every request that broke the standard, oldest first, each as its
// method, path and what was wrong with it.
func (p *PSP) Violations() []string {
	p.vmu.Lock()
	defer p.vmu.Unlock()
	return append([]string(nil), p.violations...)
}

func (p *PSP) addViolation(r *http.Request, vs []violation) {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	s := r.Method + " " + r.URL.Path + ": " + strings.Join(parts, "; ")
	p.vmu.Lock()
	defer p.vmu.Unlock()
	p.violations = append(p.violations, s)
}

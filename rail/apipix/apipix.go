// Package apipix is a rail driver for a bank (a PSP) that implements the Central Bank's
// API Pix standard: charges (cob and cobv), the Pix received, refunds (devoluções) and the
// webhook that announces received Pix. The standard has no way to send a Pix out, so
// payments and withdrawals go through a Sender, a PSP's own extension; NewEfiSender is
// Efí's.
//
// Every call is made over mutual TLS with the company's client certificate and carries an
// OAuth2 token got with the client credentials (see Driver.Do). A Driver is a rail.Rail,
// a rail.Poller and a rail.Collector:
//
//	d, err := apipix.New(apipix.Config{BaseURL: "https://pix.example.com/v2", ...})
//	d.SetSender(apipix.NewEfiSender(d))
//
// Where the standard's document and what PSPs do disagree (patterns written as
// JavaScript regular expressions, the txid of a static QR code's Pix, a default written
// as a string), the driver follows the PSPs and says so where it does.
package apipix

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// DefaultPollInterval is how often the Service asks about an unsettled order when
// Config.PollInterval is 0: PSPs rate-limit their APIs and announce settlements by
// webhook, so asking seldom is enough.
const DefaultPollInterval = 30 * time.Second

// Timeouts of the HTTP client New builds when Config.HTTPClient is nil. Every call is
// also bounded by its context.
const (
	DefaultDialTimeout = 10 * time.Second
	DefaultTLSTimeout  = 10 * time.Second
	DefaultCallTimeout = 30 * time.Second
)

// Config configures a Driver. BaseURL, ClientID, ClientSecret, PixKey and (unless
// HTTPClient is given) Certificate are required.
type Config struct {
	// BaseURL is the PSP's API Pix base, such as "https://pix.example.com/v2"; the
	// standard's paths ("/cob/{txid}") are appended to it. It must be https unless its
	// host is a loopback address (tests).
	BaseURL string
	// TokenURL is where OAuth2 tokens are asked for; "" is the scheme and host of BaseURL
	// followed by "/oauth/token".
	TokenURL string
	// ClientID and ClientSecret are the company's OAuth2 client credentials at the PSP.
	// The secret is never logged nor put in an error.
	ClientID     string
	ClientSecret string
	// Certificate is the company's client certificate, presented on every call (the
	// token call included), as the standard requires mutual TLS.
	Certificate tls.Certificate
	// RootCAs are the roots the PSP's server certificate is checked against; nil means
	// the system's.
	RootCAs *x509.CertPool
	// PixKey is the company's receiving Pix key at this PSP: the key of charges that name
	// none, of the webhook, and the payer's key of what a Sender sends.
	PixKey string
	// Sender sends payments and withdrawals. Nil refuses them (rail.Refused) until one is
	// set with Driver.SetSender, which is how a sender that needs the Driver (such as
	// NewEfiSender) is configured.
	Sender Sender
	// WithdrawalKey is where a withdrawal (money out to the company's own account) goes
	// when the order names no key or the key the company receives at (PixKey): the key of
	// its account at another bank. "" refuses such withdrawals.
	WithdrawalKey string
	// Now is the clock, read for token expiry and charge expiry; nil is time.Now.
	Now func() time.Time
	// HTTPClient makes the calls; nil builds one from Certificate and RootCAs (TLS 1.2 or
	// later, DefaultDialTimeout, DefaultTLSTimeout, DefaultCallTimeout). A client given
	// here must present the client certificate itself.
	HTTPClient *http.Client
	// PollInterval is the Driver's rail.Poller answer; 0 is DefaultPollInterval.
	PollInterval time.Duration
}

// Sender sends outgoing Pix through a PSP's own extension of the API Pix (the standard has
// none). A Driver hands it the payments and withdrawals it is given, each checked with
// rail.CheckOrder and, for a withdrawal without a key, with Config.WithdrawalKey set as
// its key; payerKey is Config.PixKey. A Sender keeps the contract of rail.Rail's Send and
// Status: idempotent by order ID (see OrderRef), a *rail.RefusedError only when nothing was
// sent, rail.ErrUnknownOrder from Status only when the PSP has no record of the order.
type Sender interface {
	Send(ctx context.Context, o rail.PixOrder, payerKey string) (rail.Settlement, error)
	Status(ctx context.Context, o rail.PixOrder) (rail.Settlement, error)
}

// Driver is a rail.Rail, rail.Poller and rail.Collector over a PSP's API Pix. It is safe
// for concurrent use.
type Driver struct {
	base          string // BaseURL without a trailing slash
	origin        string // scheme://host[:port] of BaseURL
	tokenURL      string
	clientID      string
	clientSecret  string
	pixKey        string
	withdrawalKey string
	now           func() time.Time
	client        *http.Client
	pollInterval  time.Duration

	sender atomic.Pointer[senderBox]

	tokMu      sync.Mutex
	tok        string
	tokRenew   time.Time     // when the cached token is fetched again
	tokPending chan struct{} // closed when the fetch in flight ends; nil when none is
	tokenJSON  atomic.Bool   // the PSP reads the token request as JSON, not a form (fetchToken)
}

// senderBox holds a Sender for an atomic.Pointer (which needs a concrete type).
type senderBox struct{ s Sender }

var (
	_ rail.Rail      = (*Driver)(nil)
	_ rail.Poller    = (*Driver)(nil)
	_ rail.Collector = (*Driver)(nil)
)

// New checks cfg and returns a Driver. It makes no network call: a wrong credential or
// certificate shows at the first call.
func New(cfg Config) (*Driver, error) {
	base, origin, err := checkURL("BaseURL", cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	tokenURL := origin + "/oauth/token"
	if cfg.TokenURL != "" {
		if tokenURL, _, err = checkURL("TokenURL", cfg.TokenURL); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("apipix: Config.ClientID is empty")
	case cfg.ClientSecret == "":
		return nil, errors.New("apipix: Config.ClientSecret is empty")
	case cfg.HTTPClient == nil && len(cfg.Certificate.Certificate) == 0:
		return nil, errors.New("apipix: Config.Certificate is empty: the API Pix requires mutual TLS with the company's client certificate")
	case cfg.PollInterval < 0:
		return nil, errors.New("apipix: Config.PollInterval is negative")
	}
	pixKey, err := checkKey(cfg.PixKey, "")
	if err != nil {
		return nil, fmt.Errorf("apipix: Config.PixKey: %w", err)
	}
	var withdrawalKey string
	if cfg.WithdrawalKey != "" {
		if withdrawalKey, err = checkKey(cfg.WithdrawalKey, ""); err != nil {
			return nil, fmt.Errorf("apipix: Config.WithdrawalKey: %w", err)
		}
	}
	d := &Driver{
		base:          base,
		origin:        origin,
		tokenURL:      tokenURL,
		clientID:      cfg.ClientID,
		clientSecret:  cfg.ClientSecret,
		pixKey:        pixKey,
		withdrawalKey: withdrawalKey,
		now:           cfg.Now,
		client:        cfg.HTTPClient,
		pollInterval:  cfg.PollInterval,
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.client == nil {
		d.client = newHTTPClient(cfg.Certificate, cfg.RootCAs)
	}
	if d.pollInterval == 0 {
		d.pollInterval = DefaultPollInterval
	}
	d.SetSender(cfg.Sender)
	return d, nil
}

// checkURL checks an absolute URL of the PSP and returns it without a trailing slash, and
// its scheme and host. It must be https, or http to a loopback host.
func checkURL(field, raw string) (clean, origin string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", fmt.Errorf("apipix: Config.%s %q is not an absolute http(s) URL", field, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("apipix: Config.%s must have no user, query or fragment", field)
	}
	if u.Scheme != "https" && !loopback(u.Hostname()) {
		return "", "", fmt.Errorf("apipix: Config.%s must be https (plain http only to a loopback host)", field)
	}
	return strings.TrimRight(raw, "/"), u.Scheme + "://" + u.Host, nil
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newHTTPClient is the client of a Driver configured without one: the client certificate
// on every connection, TLS 1.2 or later, and bounded dial, handshake and call times.
func newHTTPClient(cert tls.Certificate, roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: DefaultCallTimeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   DefaultTLSTimeout,
			ResponseHeaderTimeout: DefaultCallTimeout,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   8,
			ForceAttemptHTTP2:     true,
			TLSClientConfig: &tls.Config{
				MinVersion:   tls.VersionTLS12,
				Certificates: []tls.Certificate{cert},
				RootCAs:      roots,
			},
		},
	}
}

// LoadCertificate reads the company's client certificate and key (PEM files) and, when
// caFile is not "", a CA (a PEM bundle) to trust for the PSP's server certificate besides
// the system's roots; with caFile "" the pool is nil, which means the system's roots.
func LoadCertificate(certFile, keyFile, caFile string) (tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apipix: client certificate: %w", err)
	}
	if caFile == "" {
		return cert, nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apipix: CA file: %w", err)
	}
	pool, err := x509.SystemCertPool() // the CA is trusted besides the system's roots
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("apipix: CA file %s holds no PEM certificate", caFile)
	}
	return cert, pool, nil
}

// SetSender sets the Sender of payments and withdrawals (nil refuses them). It is safe to
// call at any time; orders sent after it returns use s.
func (d *Driver) SetSender(s Sender) {
	if s == nil {
		d.sender.Store(nil)
		return
	}
	d.sender.Store(&senderBox{s})
}

func (d *Driver) getSender() Sender {
	if b := d.sender.Load(); b != nil {
		return b.s
	}
	return nil
}

// BaseURL is the API Pix base the Driver was configured with, without a trailing slash.
func (d *Driver) BaseURL() string { return d.base }

// Origin is the scheme and host of BaseURL ("https://pix.example.com"), where a PSP's
// extensions outside the API Pix base path live (Efí's send is under /v3/gn/).
func (d *Driver) Origin() string { return d.origin }

// PixKey is the company's receiving key, in its canonical form.
func (d *Driver) PixKey() string { return d.pixKey }

// PollInterval tells the Service how often to ask about an unsettled order.
func (d *Driver) PollInterval() time.Duration { return d.pollInterval }

// ResolveKey checks that key is a key of keyType (detected when "") and answers
// rail.ErrNoKeyLookup: the API Pix offers no look-up of the DICT. A key that is no key is
// a *rail.InvalidError on "key".
func (d *Driver) ResolveKey(ctx context.Context, key string, keyType brcode.KeyType) (rail.KeyOwner, error) {
	if err := ctxErr(ctx); err != nil {
		return rail.KeyOwner{}, err
	}
	if _, err := checkKey(key, keyType); err != nil {
		return rail.KeyOwner{}, rail.Invalid("key", err.Error())
	}
	return rail.KeyOwner{}, rail.ErrNoKeyLookup
}

// checkKey validates key as a key of type t (detected when "") and returns its canonical
// form.
func checkKey(key string, t brcode.KeyType) (string, error) {
	if t != "" {
		return brcode.NormalizeKey(key, t)
	}
	_, k, err := brcode.DetectKey(key)
	return k, err
}

// refPattern is what the PSP takes as an idEnvio or a devolução id.
var refPattern = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)

// OrderRef is the id an order is known by at the PSP: Efí's idEnvio of a payment or
// withdrawal, the devolução id of a refund. It is the order's ID when that is 1 to 35
// letters and digits (the Service's ids are 24 hex characters), else the first 32 hex
// characters of the SHA-256 of the ID: deterministic, so a resend finds the first send,
// but not reversible, so such a reference cannot be mapped back to its order without the
// Service's own record of it.
func OrderRef(orderID string) string {
	if refPattern.MatchString(orderID) {
		return orderID
	}
	sum := sha256.Sum256([]byte(orderID))
	return hex.EncodeToString(sum[:16])
}

// ctxErr wraps the error of a context that has ended, so that errors.Is finds
// context.Canceled or context.DeadlineExceeded.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("apipix: %w", err)
	}
	return nil
}

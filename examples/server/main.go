// Command server runs the OpenPix-compatible HTTP API over a bbolt file: point an OpenPix
// SDK or integration at it by changing the base URL and the App ID.
//
//	go run ./examples/server -db payments.db -pix-key pix@example.com -merchant-name "Loja Exemplo"
//
// -db may instead be a PostgreSQL URL (postgres://user@host:5432/database): then any
// number of server processes may serve the same database at once (see store/postgres).
// -db memory: keeps everything in the process's memory and nothing anywhere else: for
// trying the API out, never for money that matters.
//
// On the first start with a new database it creates an application for the default
// company and prints its App ID once, as one line on stdout:
//
//	App ID: Q2xpZW50X0lkXy4uLjpDbGllbnRfU2VjcmV0Xy4uLg==
//
// Only a hash of the secret is stored, so the App ID cannot be shown again: later starts
// log that the existing application is in use. Start with -new-app to create and print a
// fresh App ID. Send it raw in the Authorization header:
//
//	curl -H "Authorization: $APP_ID" http://127.0.0.1:8080/api/v1/customer
//
// Links in the records it returns (a charge's qrCodeImage, paymentLinkUrl) start with
// -base-url, by default http://<listen address>, so the QR image URLs point at this server.
// Every -tick (default 5s) it does the work the clock makes due in every company
// (Service.RunDue, run by Service.Run): subscriptions get the charges of their started
// periods, charges past their expiry are recorded EXPIRED, and outgoing orders
// (refunds, payments, withdrawals) whose send failed or hung are sent again and those the
// bank has settled are recorded.
//
// Webhooks are delivered by Service.Run's worker as soon as a commit queues an
// event for one, and every second for retries that became due, each webhook on its own:
// an attempt may take -webhook-timeout (default 100s) and holds back only its webhook. In sandbox mode deliveries may go to loopback and
// private addresses (receivers on this machine); with -sandbox=false only to public ones.
// Webhooks with an e-mail action are only recorded in memory and logged: this server has
// no SMTP settings.
//
// -rail (or -bank) names the bank driver (bank.go): the sandbox (the default) settles
// payouts in a make-believe bank, and says so at start, in GET /health ("sandbox": true) and
// in /metrics (payments_bank_sandbox); apipix is a PSP of the Central Bank's API Pix,
// configured by the -psp-* flags (psp.go). -sandbox=false, for real payers, refuses to start
// (exit status 2) unless -rail is a real bank.
//
// With -sandbox (the default) the server's clock is the system clock plus an offset that
// POST /<vendor>/testing/clock {"advance":"744h"} moves forward (and GET reads): one clock
// for the whole server, every company. Moving it runs the due pass, webhook retries that
// became due included, before it answers (a receiver that hangs holds the answer up to
// -webhook-timeout). The offset lives in the process: a restart starts again from the system clock.
//
// Every flag is checked before anything is opened or written: a bad one (a -vendor that is
// not a simple lower-case name, a -base-url that is not an absolute http(s) URL, ...) is
// reported on stderr and the exit status is 2; -h prints the flags and exits 0. When the
// default company has applications but none active, the server says so on stdout and
// that -new-app makes one.
//
// Each API request is logged as one line (request_id, method, route, status, duration;
// -request-log=false turns it off) and answered with its id in X-Request-Id. With
// -admin-addr (off by default; loopback only unless -admin-allow-remote) an operator
// listener serves /metrics (Prometheus), /debug/pprof/ and GET /backup, a consistent copy
// of the database taken while the server runs; see admin.go.
//
// -cors-origins https://shop.example,https://other.example lets the pages of those origins
// call the API from a browser with the App ID, as @openpix/react does (CORS, see
// httpadapter.Options.CORSOrigins); -cors-origins '*' lets any page. By default none may:
// a browser refuses every cross-origin call.
//
// -webhook-ips 203.0.113.7,203.0.113.8 names the IP addresses this deployment's webhook
// deliveries leave from, which GET /api/v1/webhook/ips lists so that receivers can allow
// them (httpadapter.Options.WebhookIPs); each must be an IP address, checked at start. By
// default the list is empty.
//
// The server stops cleanly on SIGINT or SIGTERM: it finishes the requests in flight (for
// up to shutdownTimeout, then cuts the rest short), stops the tick loop and the webhook
// worker (a delivery cut off is not recorded, so it goes again after the restart) and
// closes the database.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/rail/apipix"
)

// Server timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	defaultTick       = 5 * time.Second
)

// shutdownTimeout is how long a stop waits for the requests in flight (a variable for the
// tests).
var shutdownTimeout = 15 * time.Second

// maxHeaderBytes is net/http's limit on a request's headers, well above the handler's
// (httpadapter.DefaultMaxHeaderBytes): headers between the two are answered 431 by the
// handler, in JSON; only beyond this one does net/http answer itself, in plain text, before
// any handler runs (as it does for a malformed request line or path escape).
const maxHeaderBytes = 1 << 20

func main() {
	// The collector runs at a quarter of Go's default pace: a request allocates a few
	// kilobytes and the live heap is a few megabytes, so at GOGC=100 it collects every few
	// hundred requests, a tenth of the CPU under load. The heap may grow to five times the
	// live data instead of twice. GOGC or GOMEMLIMIT in the environment decide instead.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// gcPercent is the server's GOGC unless the environment sets one (see main).
const gcPercent = 400

// Exit codes.
const (
	exitOK    = 0 // stopped cleanly, or -h
	exitError = 1 // could not start, or failed while serving
	exitUsage = 2 // a bad command line: nothing was opened or written
)

// cli runs the server with the command-line arguments and returns the exit code. Errors
// are reported on stderr.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout, stderr, nil)
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // the flag package printed the usage
		return exitOK
	case errors.As(err, &ue):
		if ue.msg != "" { // "" when the flag package has reported it already
			fmt.Fprintf(stderr, "server: %s (server -h lists the flags)\n", ue.msg)
		}
		return exitUsage
	default:
		fmt.Fprintln(stderr, "server:", err)
		return exitError
	}
}

// usageError is a bad command line.
type usageError struct{ msg string }

func (e *usageError) Error() string {
	if e.msg == "" {
		return "bad command line"
	}
	return e.msg
}

func badFlag(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// durationFlag is fs.DurationVar whose refusal of a bare number ("-tick 1") says a duration
// needs its unit, where the flag package says only "parse error".
func durationFlag(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage)
}

// durationValue is a flag.Value of a time.Duration.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration: give a number with its unit, such as 5s, 500ms or 1m")
	}
	*d = durationValue(v)
	return nil
}

// config is the parsed command line.
type config struct {
	addr, db, baseURL, vendor          string
	pixKey, merchantName, merchantCity string
	bank                               string    // a name in banks (bank.go): -rail, or -bank
	psp                                pspConfig // -psp-*, for -rail apipix (psp.go)
	sandbox, newApp                    bool
	tick, webhookTimeout               time.Duration
	adminAddr                          string // operator listener (admin.go); "" is off
	adminAllowRemote, requestLog       bool
	corsOrigins                        []string // -cors-origins, split at commas; nil is none
	webhookIPs                         []string // -webhook-ips, split at commas; nil is none
}

// parseFlags parses and checks the command line, before anything is opened or written.
// -h gives flag.ErrHelp; anything wrong, a *usageError naming the flag.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: server [flags]\n\nServes the OpenPix-compatible HTTP API over a bbolt file or a PostgreSQL database.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.db, "db", "payments.db", "bbolt database file (created if missing), a PostgreSQL URL postgres://user@host:port/database shared by several servers, or memory: (nothing kept: everything is lost when the server stops)")
	fs.StringVar(&c.baseURL, "base-url", "", "public base URL used in returned links (default http://<listen address>, localhost for a wildcard one)")
	fs.StringVar(&c.vendor, "vendor", payments.DefaultVendor, "vendor name in event names, links and the paths named after it (/api/<vendor>/v1, /<vendor>/...; /openpix/... is served too)")
	fs.StringVar(&c.pixKey, "pix-key", "", "the default company's Pix key (default: a random key on first start, then unchanged)")
	fs.StringVar(&c.merchantName, "merchant-name", "", "the default company's merchant name, as BR Codes show it")
	fs.StringVar(&c.merchantCity, "merchant-city", "", "the default company's merchant city, as BR Codes show it")
	fs.BoolVar(&c.sandbox, "sandbox", true, "serve the sandbox routes (simulated payments); false is for real payers and needs a real -bank")
	fs.StringVar(&c.bank, "rail", defaultBank, "the bank driver that sends Pix and looks up keys: "+bankNames()+" (the sandbox's money is make-believe; apipix is a PSP of the Central Bank's API Pix, configured by the -psp-* flags)")
	fs.StringVar(&c.bank, "bank", defaultBank, "the same as -rail (its older name)")
	fs.StringVar(&c.psp.url, "psp-url", "", "-rail apipix: the PSP's API Pix base URL, e.g. https://pix.example.com/v2")
	fs.StringVar(&c.psp.tokenURL, "psp-token-url", "", "-rail apipix: the PSP's OAuth2 token URL (default: scheme and host of -psp-url, then /oauth/token)")
	fs.StringVar(&c.psp.clientID, "psp-client-id", "", "-rail apipix: the OAuth2 client id the PSP gave the company")
	fs.StringVar(&c.psp.clientSecret, "psp-client-secret", "", "-rail apipix: the OAuth2 client secret (or set "+pspEnvSecret+", which a process listing does not show)")
	fs.StringVar(&c.psp.cert, "psp-cert", "", "-rail apipix: the company's client certificate (PEM) for mutual TLS")
	fs.StringVar(&c.psp.key, "psp-key", "", "-rail apipix: the client certificate's private key (PEM)")
	fs.StringVar(&c.psp.ca, "psp-ca", "", "-rail apipix: a CA (PEM) to trust for the PSP's server certificate besides the system's (tests, private PKI)")
	fs.StringVar(&c.psp.pixKey, "psp-pix-key", "", "-rail apipix: the company's Pix key registered at the PSP, which its charges and payouts use")
	fs.StringVar(&c.psp.send, "psp-send", "efi", "-rail apipix: the PSP's extension for sending Pix (payments, withdrawals): efi, or none to refuse payouts")
	fs.StringVar(&c.psp.withdrawalKey, "psp-withdrawal-key", "", "-rail apipix: the Pix key of the company's account at another bank, where withdrawals go (default: withdrawals are refused)")
	fs.StringVar(&c.psp.webhookSecret, "psp-webhook-secret", "", "-rail apipix: the secret the PSP's webhook calls must carry (in their hmac parameter)")
	durationFlag(fs, &c.psp.reconcile, "psp-reconcile", defaultReconcile, "-rail apipix: how often (a `duration`, such as 1m) to list what the PSP received and record what its webhook missed")
	fs.BoolVar(&c.newApp, "new-app", false, "create a new application and print its App ID")
	durationFlag(fs, &c.tick, "tick", defaultTick, "how often (a `duration`, such as 5s) to expire charges and re-send or settle outgoing orders (0 turns it off)")
	durationFlag(fs, &c.webhookTimeout, "webhook-timeout", payments.DefaultWebhookTimeout, "how long (a `duration`, such as 100s) one webhook delivery may take")
	fs.StringVar(&c.adminAddr, "admin-addr", "", "operator listener for /metrics, /debug/pprof/ and /backup, e.g. 127.0.0.1:9090 (default off; loopback only)")
	fs.BoolVar(&c.adminAllowRemote, "admin-allow-remote", false, "let -admin-addr be a non-loopback address (it has no authentication)")
	fs.BoolVar(&c.requestLog, "request-log", true, "log one line per API request (request id, method, route, status, duration)")
	corsOrigins := fs.String("cors-origins", "", "comma-separated web origins (scheme://host[:port], e.g. https://shop.example) whose pages may call the API from a browser with the App ID, or * for any page (default none)")
	webhookIPs := fs.String("webhook-ips", "", "comma-separated IP addresses webhook deliveries leave from (e.g. 203.0.113.7,203.0.113.8), which GET /api/v1/webhook/ips lists for receivers to allow (default none: an empty list)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, &usageError{} // the flag package has printed the error and the usage
	}
	if fs.NArg() > 0 {
		return c, badFlag("unexpected arguments: %q", fs.Args())
	}
	if *corsOrigins != "" {
		for o := range strings.SplitSeq(*corsOrigins, ",") {
			c.corsOrigins = append(c.corsOrigins, strings.TrimSpace(o)) // an empty one is checked, and refused
		}
	}
	if *webhookIPs != "" {
		for ip := range strings.SplitSeq(*webhookIPs, ",") {
			c.webhookIPs = append(c.webhookIPs, strings.TrimSpace(ip)) // an empty one is checked, and refused
		}
	}
	return c, c.check()
}

// maxMerchantText is the longest -merchant-name or -merchant-city, as the Service limits
// a company's.
const maxMerchantText = 200

// check validates every flag, so that a mistake is reported before anything is opened.
func (c config) check() error {
	if _, port, err := net.SplitHostPort(c.addr); err != nil {
		return badFlag("-addr %q must be host:port, e.g. 127.0.0.1:8080 or :8080", c.addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return badFlag("-addr %q: the port must be a number from 0 to 65535", c.addr)
	}
	if c.db == "" {
		return badFlag("-db must name a database file")
	}
	if isPostgres(c.db) {
		if err := checkPostgresURL(c.db); err != nil {
			return badFlag("-db %q %v", redactDB(c.db), err) // never the password
		}
	} else if c.db != memoryDB {
		if fi, err := os.Stat(c.db); err == nil && fi.IsDir() {
			return badFlag("-db %q is a directory; name a file in it, e.g. %s", c.db, filepath.Join(c.db, "payments.db"))
		}
	}
	if c.baseURL != "" {
		if err := checkBaseURL(c.baseURL); err != nil {
			return badFlag("-base-url %q %v", c.baseURL, err)
		}
	}
	if err := payments.CheckVendor(c.vendor); err != nil {
		return badFlag("-%s", payments.ErrorMessage(err)) // "-vendor ... must be ..."
	}
	if c.pixKey != "" {
		if _, _, err := brcode.DetectKey(c.pixKey); err != nil {
			return badFlag("-pix-key %q is not a valid Pix key: %s", c.pixKey, strings.TrimPrefix(err.Error(), "brcode: "))
		}
	}
	for _, f := range []struct{ name, value string }{{"-merchant-name", c.merchantName}, {"-merchant-city", c.merchantCity}} {
		if utf8.RuneCountInString(f.value) > maxMerchantText {
			return badFlag("%s must have at most %d characters", f.name, maxMerchantText)
		}
		if !utf8.ValidString(f.value) || strings.IndexFunc(f.value, unicode.IsControl) >= 0 {
			return badFlag("%s must be text without control characters", f.name)
		}
		if f.value != "" && brcode.Fold(f.value) == "" { // as the Service checks it, before the database is opened
			return badFlag("%s %q has no character a BR Code can carry (letters, digits or signs of printable ASCII once accents are dropped)", f.name, f.value)
		}
	}
	if c.webhookTimeout < time.Millisecond {
		return badFlag("-webhook-timeout must be at least 1ms, got %v", c.webhookTimeout)
	}
	if c.tick < 0 || c.tick > 0 && c.tick < time.Millisecond {
		return badFlag("-tick must be 0 (the periodic work off) or at least 1ms, got %v", c.tick)
	}
	if err := checkBank(c.bank, c.sandbox); err != nil {
		return err
	}
	if check := banks[c.bank].check; check != nil {
		if err := check(c); err != nil {
			return err
		}
	} else if c.psp.url != "" || c.psp.clientID != "" || c.psp.cert != "" || c.psp.pixKey != "" || c.psp.webhookSecret != "" {
		return badFlag("the -psp-* flags configure -rail apipix, and -rail is %s", c.bank)
	}
	if err := httpadapter.CheckCORSOrigins(c.corsOrigins); err != nil {
		return badFlag("-cors-origins: %v", err)
	}
	if err := httpadapter.CheckWebhookIPs(c.webhookIPs); err != nil {
		return badFlag("-webhook-ips: %v", err)
	}
	if c.adminAddr != "" {
		return checkAdminAddr(c.adminAddr, c.adminAllowRemote)
	}
	return nil
}

// checkBaseURL accepts an absolute http or https URL with a host and no query, fragment
// or credentials: the links the server returns are built by appending paths to it.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("must start with http:// or https://")
	case u.Host == "" || u.Opaque != "":
		return errors.New("must name a host, e.g. https://pix.example.com")
	case u.User != nil:
		return errors.New("must not carry credentials")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return errors.New("must not have a query or a fragment")
	case strings.ContainsAny(s, " \t\"<>\\^`{|}"):
		return errors.New("must not contain spaces, quotes or other characters a URL escapes")
	case strings.IndexFunc(s, func(r rune) bool { return r > unicode.MaxASCII }) >= 0:
		return errors.New("must be plain ASCII: write other characters %-escaped (a URL escapes them)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return errors.New("must have a port from 1 to 65535")
		}
	}
	return nil
}

// run serves until ctx is done, then shuts down. It prints the App ID line (when it
// creates an application) to stdout and logs to stderr; ready, if not nil, is called
// with the listening address once the server accepts connections.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	// Listen first: the default base URL is the address actually bound (-addr may say port 0).
	ln, err := net.Listen("tcp", cfg.addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w: another process is listening on %s (another server still running?); stop it, or pick another address with -addr, e.g. -addr 127.0.0.1:8081 (port 0 takes any free one)", err, cfg.addr)
	}
	if err != nil {
		return err
	}
	defer ln.Close() // after Shutdown it is closed already; this covers the early returns
	baseURL := strings.TrimRight(cfg.baseURL, "/")
	if baseURL == "" {
		baseURL = defaultBaseURL(ln.Addr())
	}

	// The clock: in the sandbox, the system clock plus an offset the clock route moves.
	var clock payments.Clock = payments.SystemClock{}
	var advancer payments.MovableClock
	if cfg.sandbox {
		c := payments.NewOffsetClock(payments.SystemClock{})
		clock, advancer = c, c
	}
	// The operator listener, if asked for: its metrics observe the store, the Service and
	// the handler, so they exist before those are made.
	adminLn, err := listenAdmin(cfg.adminAddr)
	if err != nil {
		return err
	}
	var m *metrics
	if adminLn != nil {
		defer adminLn.Close()
		m = newMetrics()
	}
	driver := banks[cfg.bank]
	bank, err := driver.open(clock, cfg)
	if err != nil {
		return err
	}
	psp, _ := bank.(*apipix.Driver)
	if psp != nil && cfg.pixKey == "" {
		cfg.pixKey = cfg.psp.pixKey // the default company receives at its PSP key
	}
	svc, closeDB, err := openService(ctx, cfg.db, m.onCommit(), payments.Options{
		Clock:  clock,
		Logger: log,
		Vendor: cfg.vendor,
		Rail:   bank,
		// A PSP registers the charges and issues their BR Codes (charges_bank.go).
		BankCharges: driver.bankCharges,
		// Webhooks are POSTed over HTTP; the sandbox may deliver to receivers on this
		// machine or its network, production only to public addresses.
		WebhookSender:    httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: cfg.sandbox}),
		WebhookTimeout:   cfg.webhookTimeout,
		OnWebhookAttempt: m.onWebhookAttempt(),
		// Run's background work (see below): -tick 0 turns the due work off; the PSP's
		// reconciliation is the reconciler's (psp.go), which registers the webhook first
		// and shares its window with the operator's POST /psp/reconcile.
		DueInterval:       dueInterval(cfg.tick),
		WebhookPoll:       webhookPoll,
		ReconcileInterval: -1,
		// Created on the first start; on a later one the flags given that differ apply to
		// it (new charges use them, existing ones keep their codes).
		DefaultCompany: payments.CreateCompanyParams{
			Name: cfg.merchantName, PixKey: cfg.pixKey, MerchantName: cfg.merchantName, MerchantCity: cfg.merchantCity,
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := closeDB(); err != nil {
			log.Error("closing the database", "err", err)
		}
	}()

	if err := ensureApplication(ctx, svc, cfg.newApp, stdout, log); err != nil {
		return err
	}

	// The handler first: httpadapter.New installs the links records carry (paymentLinkUrl,
	// qrCodeImage, from baseURL), which the tick loop's events carry too.
	var requestLog *slog.Logger
	if cfg.requestLog {
		lines := newLineWriter(stderr, gatherFor)  // see logbuf.go: not a write per request
		defer lines.Close()                        // after the shutdown below: every request's line is written
		requestLog = slog.New(newTextLines(lines)) // slog.TextHandler's lines, made faster (logtext.go)
	}
	var handler http.Handler = httpadapter.New(svc, httpadapter.Options{
		Sandbox: cfg.sandbox, Clock: advancer, Logger: log, BaseURL: baseURL,
		RequestLog: requestLog, OnRequest: m.onRequest(), CORSOrigins: cfg.corsOrigins, WebhookIPs: cfg.webhookIPs,
	})
	var rec *reconciler
	if psp != nil { // the PSP's webhook, and the reconciliation that heals what it loses
		handler = withPSPWebhook(handler, pspWebhook(svc, cfg.psp.webhookSecret, log))
		rec = &reconciler{svc: svc, psp: psp, hookURL: pspWebhookURL(baseURL, cfg.psp.webhookSecret), interval: cfg.psp.reconcile, log: log}
		if len(cfg.psp.webhookSecret) < 16 {
			log.Warn("psp: -psp-webhook-secret is short: anyone who guesses it can report Pix to this server; use 16 random characters or more")
		}
		rec.register(ctx) // before serving: the PSP sends nothing until then
	}

	// The background work (Service.Run: the due work every -tick, the webhook worker) and
	// the reconciler stop, and are waited for, before the database closes (defers run last
	// first).
	dueCtx, stopDue := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		if err := svc.Run(dueCtx); err != nil {
			log.Error("background work", "err", err)
		}
	}()
	recDone := make(chan struct{})
	go func() {
		defer close(recDone)
		if rec != nil {
			rec.run(dueCtx)
		}
	}()
	defer func() {
		stopDue()
		<-runDone
		<-recDone
	}()

	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	if svc.Sandbox() {
		log.Warn("bank: sandbox: payouts settle in a make-believe bank and no real centavo moves; for real payers run -sandbox=false with a real -bank", "bank", cfg.bank)
	} else {
		log.Info("bank: real money moves through it", "bank", cfg.bank)
	}
	if cfg.sandbox {
		log.Info("sandbox routes are on: do not expose this server to real payers (-sandbox=false turns them off)")
	}
	if cfg.db == memoryDB {
		log.Warn("-db memory: keeps nothing: every record is lost when the server stops")
	}
	log.Info("listening", "addr", ln.Addr().String(), "db", redactDB(cfg.db), "base_url", baseURL, "tick", cfg.tick)

	if adminLn != nil {
		admin := adminHandler(svc, m, rec, log, os.Args)
		if !cfg.adminAllowRemote {
			admin = loopbackOnly(admin) // see there: with remote access allowed, names vary
		}
		stopAdmin := startAdmin(adminLn, admin, log)
		defer stopAdmin() // before the database closes
		log.Info("operator listener", "addr", adminLn.Addr().String(), "paths", "/metrics /debug/pprof/ /backup")
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case err := <-serveErr:
		return err // Serve failed before any shutdown was asked for
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		// a request still running (a webhook's test call may take -webhook-timeout) is
		// cut short: its client sees the connection close, and a retry by correlationID
		// is safe; the stop itself is clean
		log.Warn("requests still running after the shutdown timeout were cut short", "timeout", shutdownTimeout)
		srv.Close()
	} else if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// webhookPoll is how often the webhook worker looks for due retries when no commit woke it.
const webhookPoll = time.Second

// dueInterval is payments.Options.DueInterval for -tick: 0 turns the due work off.
func dueInterval(tick time.Duration) time.Duration {
	if tick == 0 {
		return -1
	}
	return tick
}

// ensureApplication creates an application for the default company and prints its App ID
// when the company has none yet (a new database), or when asked with -new-app. When the
// company has applications but none is active (a database from a version that let the
// last one be deactivated), no request can authenticate: it says so on stdout, with the
// fix.
func ensureApplication(ctx context.Context, svc *payments.Service, newApp bool, stdout io.Writer, log *slog.Logger) error {
	err := ensureApplicationOnce(ctx, svc, newApp, stdout, log)
	if !newApp && payments.ErrorCode(err) == payments.ECONFLICT {
		// Another server on the same empty database created "default" between our count
		// and our create (servers may start together on PostgreSQL): use it.
		return ensureApplicationOnce(ctx, svc, newApp, stdout, log)
	}
	return err
}

func ensureApplicationOnce(ctx context.Context, svc *payments.Service, newApp bool, stdout io.Writer, log *slog.Logger) error {
	total, active, err := countApplications(ctx, svc)
	if err != nil {
		return err
	}
	name := "default"
	switch {
	case total > 0 && active == nil && !newApp:
		log.Warn("the default company has no active application", "applications", total)
		_, err := fmt.Fprintln(stdout, "No active application: the default company's App IDs are all deactivated, so every API request gets 401. Start the server with -new-app to create an application and print its App ID.")
		return err
	case total > 0 && !newApp:
		log.Info("using the existing application; its App ID was printed when it was created (-new-app makes another)",
			"client_id", active.ClientID, "applications", total)
		return nil
	case total > 0:
		name = "server " + time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	a, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: name, Type: payments.ApplicationAPI})
	if err != nil {
		return err
	}
	log.Info("created an application", "name", a.Name, "client_id", a.ClientID)
	_, err = fmt.Fprintf(stdout, "App ID: %s\n", a.AppID())
	return err
}

// countApplications returns how many applications the company has and its newest active
// one (nil when none is active).
func countApplications(ctx context.Context, svc *payments.Service) (int, *payments.Application, error) {
	for skip := 0; ; skip += payments.MaxLimit {
		apps, page, err := svc.ListApplications(ctx, payments.ListParams{Skip: skip, Limit: payments.MaxLimit})
		if err != nil {
			return 0, nil, err
		}
		for _, a := range apps {
			if a.IsActive {
				return page.TotalCount, &a, nil
			}
		}
		if !page.HasNextPage {
			return page.TotalCount, nil, nil
		}
	}
}

// defaultBaseURL is the base URL of the links the server hands out when -base-url is not
// given: the address it listens on, except that a wildcard one (":8080", "0.0.0.0:8080",
// which Go reports as [::]) is no address a browser can open: localhost stands for it.
// Behind a proxy, or for payers on other machines, -base-url says the public address.
func defaultBaseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Command server runs the OpenPix-compatible HTTP API over a bbolt file: point an OpenPix
// SDK or integration at it by changing the base URL and the App ID.
//
//	go run ./examples/server -db payments.db -pix-key pix@example.com -merchant-name "Loja Exemplo"
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
// (Service.RunDue): charges past their expiry are recorded EXPIRED, and refunds the bank
// has settled are recorded CONFIRMED or REJECTED.
//
// The server stops cleanly on SIGINT or SIGTERM: it finishes the requests in flight (for
// up to shutdownTimeout), stops the tick loop and closes the database.
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
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// Server timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 15 * time.Second
	defaultTick       = 5 * time.Second
)

// maxHeaderBytes is net/http's limit on a request's headers, well above the handler's
// (httpadapter.DefaultMaxHeaderBytes): headers between the two are answered 431 by the
// handler, in JSON; only beyond this one does net/http answer itself, in plain text, before
// any handler runs (as it does for a malformed request line or path escape).
const maxHeaderBytes = 1 << 20

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	addr, db, baseURL, vendor          string
	pixKey, merchantName, merchantCity string
	sandbox, newApp                    bool
	tick                               time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.db, "db", "payments.db", "bbolt database file (created if missing)")
	fs.StringVar(&c.baseURL, "base-url", "", "public base URL used in returned links (default http://<listen address>)")
	fs.StringVar(&c.vendor, "vendor", payments.DefaultVendor, "vendor name in event names and the legacy /api/<vendor>/v1 prefix")
	fs.StringVar(&c.pixKey, "pix-key", "", "the default company's Pix key (default: a random key on first start, then unchanged)")
	fs.StringVar(&c.merchantName, "merchant-name", "", "the default company's merchant name, as BR Codes show it")
	fs.StringVar(&c.merchantCity, "merchant-city", "", "the default company's merchant city, as BR Codes show it")
	fs.BoolVar(&c.sandbox, "sandbox", true, "serve the sandbox routes (simulated payments)")
	fs.BoolVar(&c.newApp, "new-app", false, "create a new application and print its App ID")
	fs.DurationVar(&c.tick, "tick", defaultTick, "how often to expire charges and settle refunds in every company (0 turns it off)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.tick < 0 {
		return c, fmt.Errorf("-tick must not be negative, got %v", c.tick)
	}
	return c, nil
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
	if err != nil {
		return err
	}
	defer ln.Close() // after Shutdown it is closed already; this covers the early returns
	baseURL := strings.TrimRight(cfg.baseURL, "/")
	if baseURL == "" {
		baseURL = "http://" + ln.Addr().String()
	}

	svc, err := payments.Open(cfg.db, payments.Options{
		Logger:    log,
		Vendor:    cfg.vendor,
		PublicURL: baseURL,
		DefaultCompany: payments.CompanyParams{
			Name: cfg.merchantName, PixKey: cfg.pixKey, MerchantName: cfg.merchantName, MerchantCity: cfg.merchantCity,
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := svc.Close(); err != nil {
			log.Error("closing the database", "err", err)
		}
	}()

	if err := applyIdentity(ctx, svc, cfg); err != nil {
		return err
	}
	if err := ensureApplication(ctx, svc, cfg.newApp, stdout, log); err != nil {
		return err
	}

	// The tick loop stops, and is waited for, before the database closes (defers run last
	// first).
	dueCtx, stopDue := context.WithCancel(ctx)
	dueDone := make(chan struct{})
	go func() {
		defer close(dueDone)
		runDue(dueCtx, svc, cfg.tick, log)
	}()
	defer func() {
		stopDue()
		<-dueDone
	}()

	srv := &http.Server{
		Handler: httpadapter.New(svc, httpadapter.Options{
			Sandbox: cfg.sandbox, Logger: log, BaseURL: baseURL,
		}),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	if cfg.sandbox {
		log.Info("sandbox routes are on: do not expose this server to real payers (-sandbox=false turns them off)")
	}
	log.Info("listening", "addr", ln.Addr().String(), "db", cfg.db, "base_url", baseURL, "tick", cfg.tick)

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
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// runDue calls svc.RunDue at once and then every tick until ctx is done; tick 0 does
// nothing. Failures are logged: the next tick tries again.
func runDue(ctx context.Context, svc *payments.Service, tick time.Duration, log *slog.Logger) {
	if tick == 0 {
		return
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if err := svc.RunDue(ctx); err != nil && ctx.Err() == nil {
			log.Error("expiring charges and settling refunds", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ensureApplication creates an application for the default company and prints its App ID
// when the company has none yet (a new database), or when asked with -new-app.
func ensureApplication(ctx context.Context, svc *payments.Service, newApp bool, stdout io.Writer, log *slog.Logger) error {
	apps, page, err := svc.ListApplications(ctx, payments.ListParams{Limit: 1})
	if err != nil {
		return err
	}
	name := "default"
	switch {
	case page.TotalCount > 0 && !newApp:
		log.Info("using the existing application; its App ID was printed when it was created (-new-app makes another)",
			"client_id", apps[0].ClientID, "applications", page.TotalCount)
		return nil
	case page.TotalCount > 0:
		name = "server " + time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	a, err := svc.CreateApplication(ctx, payments.ApplicationParams{Name: name, Type: payments.ApplicationAPI})
	if err != nil {
		return err
	}
	log.Info("created an application", "name", a.Name, "client_id", a.ClientID)
	_, err = fmt.Fprintf(stdout, "App ID: %s\n", a.AppID())
	return err
}

// applyIdentity sets the default company's receiving identity from the flags given, on
// every start: new charges use it, existing ones keep their codes.
func applyIdentity(ctx context.Context, svc *payments.Service, cfg config) error {
	var u payments.CompanyUpdate
	if cfg.pixKey != "" {
		u.PixKey = &cfg.pixKey
	}
	if cfg.merchantName != "" {
		u.MerchantName = &cfg.merchantName
	}
	if cfg.merchantCity != "" {
		u.MerchantCity = &cfg.merchantCity
	}
	if u == (payments.CompanyUpdate{}) {
		return nil
	}
	_, err := svc.UpdateCompany(ctx, u)
	return err
}

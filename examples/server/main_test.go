package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines to write while the test
// reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a server started by run in this process.
type running struct {
	base           string
	stdout, stderr *lockedBuffer
	stop           func() error // cancels run's context and returns run's error
}

// start runs the server on a free port with args and waits until it accepts connections.
func start(t *testing.T, args ...string) running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, stderr, func(addr string) { ready <- addr })
	}()
	select {
	case addr := <-ready:
		var once sync.Once
		var err error
		stop := func() error {
			once.Do(func() { cancel(); err = <-done })
			return err
		}
		t.Cleanup(func() { stop() })
		return running{base: "http://" + addr, stdout: stdout, stderr: stderr, stop: stop}
	case err := <-done:
		cancel()
		t.Fatalf("run returned before serving: %v\nstderr:\n%s", err, stderr.String())
		return running{}
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

// call makes a request and decodes the JSON reply.
func call(t *testing.T, method, url, appID, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if appID != "" {
		req.Header.Set("Authorization", appID)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: reply is not JSON: %v", method, url, err)
	}
	return res.StatusCode, out
}

var appIDLine = regexp.MustCompile(`^App ID: ([A-Za-z0-9+/=]+)\n$`)

// TestRun starts the server on a new database, uses it over real HTTP, stops it, and
// starts it again on the same file, as a user would.
func TestRun(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "payments.db")
	flags := []string{"-db", db, "-pix-key", "pix@loja.example.com", "-merchant-name", "Loja Exemplo", "-merchant-city", "Sao Paulo"}

	srv := start(t, flags...)
	m := appIDLine.FindStringSubmatch(srv.stdout.String())
	is.True(m != nil) // the first start prints exactly one "App ID: <value>" line
	appID := m[1]
	is.True(strings.Contains(srv.stderr.String(), "sandbox routes are on")) // sandbox is on by default, and says so

	status, body := call(t, "GET", srv.base+"/health", "", "")
	is.Equal(status, http.StatusOK)
	is.Equal(body["status"], "ok")

	status, body = call(t, "POST", srv.base+"/api/v1/customer", appID,
		`{"name":"Ana Souza","taxID":"529.982.247-25","email":"ana@example.com","correlationID":"ana+pix@example.com"}`)
	is.Equal(status, http.StatusOK) // created over real HTTP with the printed App ID
	is.Equal(body["customer"].(map[string]any)["taxID"].(map[string]any)["taxID"], "52998224725")
	status, body = call(t, "GET", srv.base+"/api/v1/customer/ana+pix@example.com", appID, "")
	is.Equal(status, http.StatusOK)
	is.Equal(body["customer"].(map[string]any)["name"], "Ana Souza")
	status, _ = call(t, "GET", srv.base+"/api/v1/customer", "", "")
	is.Equal(status, http.StatusUnauthorized) // and nothing without it

	is.NoErr(srv.stop())                                      // a clean shutdown returns nil
	is.True(strings.Contains(srv.stderr.String(), "stopped")) // after closing down

	// Same file again: no new App ID, the old one works, the data is there.
	srv = start(t, flags...)
	is.Equal(srv.stdout.String(), "")                                                // nothing printed on later starts
	is.True(strings.Contains(srv.stderr.String(), "using the existing application")) // but it says so in the log
	status, body = call(t, "GET", srv.base+"/api/v1/customer/52998224725", appID, "")
	is.Equal(status, http.StatusOK) // the customer and the application survived the restart
	is.Equal(body["customer"].(map[string]any)["correlationID"], "ana+pix@example.com")
	is.NoErr(srv.stop())

	// -new-app prints a fresh App ID; both work.
	srv = start(t, append(flags, "-new-app", "-sandbox=false", "-bank", testRealBank)...)
	m = appIDLine.FindStringSubmatch(srv.stdout.String())
	is.True(m != nil)      // one new App ID line
	is.True(m[1] != appID) // a different one
	is.True(!strings.Contains(srv.stderr.String(), "sandbox routes are on"))
	for _, id := range []string{appID, m[1]} {
		status, _ = call(t, "GET", srv.base+"/api/v1/customer", id, "")
		is.Equal(status, http.StatusOK)
	}
	is.NoErr(srv.stop())
}

func TestRun_BadFlags(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var stdout, stderr lockedBuffer
	err := run(context.Background(), []string{"-nope"}, &stdout, &stderr, nil)
	is.True(err != nil) // unknown flags are an error
	err = run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "extra"}, &stdout, &stderr, nil)
	is.True(err != nil) // so are stray arguments
}

// TestRun_AddressInUse: an -addr another process listens on says so, and how to pick
// another.
func TestRun_AddressInUse(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	defer taken.Close()
	var stdout, stderr lockedBuffer
	err = run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "-addr", taken.Addr().String()}, &stdout, &stderr, nil)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "another process is listening on "+taken.Addr().String())) // what happened
	is.True(strings.Contains(err.Error(), "-addr"))                                                  // and what to do
}

// TestRun_Links: the links a charge carries point at this server (or at -base-url), and
// the QR image is served there without an App ID; the sandbox pays the charge. The tick
// loop runs every millisecond meanwhile, and stops cleanly with the server.
func TestRun_Links(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	srv := start(t, "-db", filepath.Join(dir, "a.db"), "-tick", "1ms")
	appID := appIDLine.FindStringSubmatch(srv.stdout.String())[1]

	status, body := call(t, "POST", srv.base+"/api/v1/charge", appID, `{"correlationID":"c1","value":1000}`)
	is.Equal(status, http.StatusOK)
	charge := body["charge"].(map[string]any)
	link := charge["qrCodeImage"].(string)
	is.Equal(link, srv.base+"/openpix/charge/brcode/image/"+charge["paymentLinkID"].(string)+".png") // on this server
	res, err := client.Get(link + "?size=600")                                                       // no App ID, as a browser
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Content-Type"), "image/png")

	status, body = call(t, "GET", srv.base+"/openpix/testing?transactionID="+charge["transactionID"].(string), appID, "")
	is.Equal(status, http.StatusOK) // the sandbox is on by default
	is.Equal(body["charge"].(map[string]any)["status"], "COMPLETED")
	is.NoErr(srv.stop())

	srv = start(t, "-db", filepath.Join(dir, "b.db"), "-base-url", "https://pix.example.com/", "-sandbox=false", "-bank", testRealBank)
	appID = appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	status, body = call(t, "POST", srv.base+"/api/v1/charge", appID, `{"correlationID":"c1","value":1000}`)
	is.Equal(status, http.StatusOK)
	charge = body["charge"].(map[string]any)
	is.True(strings.HasPrefix(charge["qrCodeImage"].(string), "https://pix.example.com/openpix/charge/brcode/image/")) // -base-url, without its trailing slash
	status, _ = call(t, "GET", srv.base+"/openpix/testing?transactionID="+charge["transactionID"].(string), appID, "")
	is.Equal(status, http.StatusNotFound) // no sandbox with -sandbox=false
	is.NoErr(srv.stop())
}

// TestCLI_Help: -h prints the flags and exits 0.
func TestCLI_Help(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var stdout, stderr lockedBuffer
	code := cli(context.Background(), []string{"-h"}, &stdout, &stderr)
	is.Equal(code, 0)                                           // help is not an error
	is.True(strings.Contains(stderr.String(), "Usage: server")) // the usage
	is.True(strings.Contains(stderr.String(), "-vendor"))       // with every flag
	is.True(!strings.Contains(stderr.String(), "help requested"))
}

// TestCLI_BadFlags: every flag is checked before anything is opened or written; a bad one
// is named on stderr, with exit status 2, and no panic.
func TestCLI_BadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"Unknown", []string{"-nope"}, "flag provided but not defined: -nope"},
		{"Extra", []string{"extra"}, "unexpected arguments"},
		{"VendorDotDot", []string{"-vendor", "../x"}, "-vendor"},
		{"VendorSlash", []string{"-vendor", "/"}, "-vendor"},
		{"VendorWildcard", []string{"-vendor", "{x}"}, "-vendor"},
		{"VendorEmpty", []string{"-vendor", ""}, "-vendor"},
		{"VendorUpper", []string{"-vendor", "OpenPix"}, "-vendor"},
		{"VendorSpace", []string{"-vendor", "a b"}, "-vendor"},
		{"VendorLong", []string{"-vendor", strings.Repeat("a", 33)}, "-vendor"},
		{"BaseURLJavascript", []string{"-base-url", "javascript:alert(1)"}, "-base-url"},
		{"BaseURLNoScheme", []string{"-base-url", "pix.example.com"}, "-base-url"},
		{"BaseURLFTP", []string{"-base-url", "ftp://pix.example.com"}, "-base-url"},
		{"BaseURLNoHost", []string{"-base-url", "https://"}, "-base-url"},
		{"BaseURLQuery", []string{"-base-url", "https://pix.example.com/?a=1"}, "-base-url"},
		{"BaseURLUser", []string{"-base-url", "https://me:pw@pix.example.com"}, "-base-url"},
		{"AddrNoPort", []string{"-addr", "localhost"}, "-addr"},
		{"AddrBadPort", []string{"-addr", "127.0.0.1:99999"}, "-addr"},
		{"DBEmpty", []string{"-db", ""}, "-db"},
		{"DBDirectory", []string{"-db", dir}, "-db"},
		{"PixKey", []string{"-pix-key", "not a key"}, "-pix-key"},
		{"MerchantNameControl", []string{"-merchant-name", "Loja\nX"}, "-merchant-name"},
		{"MerchantCityLong", []string{"-merchant-city", strings.Repeat("a", 201)}, "-merchant-city"},
		{"TickNegative", []string{"-tick", "-1s"}, "-tick"},
		{"TickNotDuration", []string{"-tick", "soon"}, "-tick"},
		{"TickTooShort", []string{"-tick", "1ns"}, "-tick"}, // a busy loop
		{"WebhookTimeoutTooShort", []string{"-webhook-timeout", "1ns"}, "-webhook-timeout"},
		{"VendorAPI", []string{"-vendor", "api"}, "-vendor"}, // its paths would collide
		{"BaseURLPort", []string{"-base-url", "http://pix.example:99999"}, "-base-url"},
		{"BaseURLSpace", []string{"-base-url", "http://pix.example/a b"}, "-base-url"},
		{"BaseURLQuote", []string{"-base-url", `http://pix.example/"<x>`}, "-base-url"},
		{"DBPostgresParam", []string{"-db", "postgres://postgres@127.0.0.1:5432/x?pool_max_conns=abc"}, "-db"},
		{"DBPostgresNoDatabase", []string{"-db", "postgres://postgres:S3cretPW@127.0.0.1:5432/"}, "-db"},
		{"DBPostgresBadEscape", []string{"-db", "postgres://admin:S3cretPW%zz@db.example.com/payments"}, "-db"}, // does not parse
		{"DBPostgresSpace", []string{"-db", "postgres://admin:S3cretPW x@127.0.0.1:1/x"}, "-db"},
		{"MerchantNameFoldsToNothing", []string{"-merchant-name", "🎉"}, "-merchant-name"}, // no BR Code could carry it
		{"MerchantCityFoldsToNothing", []string{"-merchant-city", "東京"}, "-merchant-city"},
		{"BaseURLNonASCII", []string{"-base-url", "http://pix.example/ç"}, "-base-url"},
		{"BankUnknown", []string{"-bank", "itau"}, "-rail"},
		{"WebhookIPsNotAnIP", []string{"-webhook-ips", "203.0.113.7,gateway.example"}, `-webhook-ips: "gateway.example" is not an IP address`},
		{"NoSandboxWithoutARealBank", []string{"-sandbox=false"}, "-sandbox=false is for real payers, but -rail sandbox"}, // make-believe money for real payers
		{"NoSandboxOnTheSandboxBank", []string{"-sandbox=false", "-bank", "sandbox"}, "make-believe bank"},
		{"PSPFlagsWithoutAPIPix", []string{"-psp-url", "https://pix.example.com/v2"}, "-psp-* flags configure -rail apipix"},
		{"APIPixWithoutFlags", []string{"-rail", "apipix"}, "-rail apipix needs -psp-url"},
		{"APIPixNoCert", []string{"-rail", "apipix", "-psp-url", "https://pix.example.com/v2", "-psp-client-id", "id", "-psp-client-secret", "s",
			"-psp-cert", "/nonexistent/c.pem", "-psp-key", "/nonexistent/k.pem", "-psp-pix-key", "pix@example.com", "-psp-webhook-secret", "0123456789abcdef"}, "-psp-cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			db := filepath.Join(t.TempDir(), "x.db")
			var stdout, stderr lockedBuffer
			code := cli(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-db", db}, tc.args...), &stdout, &stderr)
			is.Equal(code, 2)                                       // a usage error
			is.True(strings.Contains(stderr.String(), tc.want))     // naming the flag
			is.True(!strings.Contains(stderr.String(), "S3cretPW")) // and never a password
			is.Equal(stdout.String(), "")
			_, err := os.Stat(db)
			is.True(errors.Is(err, fs.ErrNotExist)) // nothing was written
		})
	}
}

// TestRun_NoActiveApplication: a database whose default company has applications but none
// active (possible before the last one could no longer be deactivated) starts, and says on
// stdout that nothing can authenticate and how to fix it.
func TestRun_NoActiveApplication(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "payments.db")
	srv := start(t, "-db", db)
	appID := appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	is.NoErr(srv.stop())

	// Deactivate it behind the Service's back, as an older version could.
	st, err := bolt.Open(db)
	is.NoErr(err)
	err = st.Update(context.Background(), func(tx store.Tx) error {
		page, err := tx.List("applications", "_system", store.Query{Index: "company:" + payments.DefaultCompanyID, Limit: 10})
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			var a map[string]any
			if err := json.Unmarshal(r.Data, &a); err != nil {
				return err
			}
			a["isActive"] = false
			if r.Data, err = json.Marshal(a); err != nil {
				return err
			}
			if err := tx.Put("applications", "_system", r); err != nil {
				return err
			}
		}
		return nil
	})
	is.NoErr(err)
	is.NoErr(st.Close())

	srv = start(t, "-db", db)
	is.True(strings.HasPrefix(srv.stdout.String(), "No active application:")) // said on stdout
	is.True(strings.Contains(srv.stdout.String(), "-new-app"))                // with the fix
	status, _ := call(t, "GET", srv.base+"/api/v1/customer", appID, "")
	is.Equal(status, http.StatusUnauthorized) // indeed
	is.NoErr(srv.stop())

	srv = start(t, "-db", db, "-new-app")
	m := appIDLine.FindStringSubmatch(srv.stdout.String())
	is.True(m != nil) // the fix works
	status, _ = call(t, "GET", srv.base+"/api/v1/customer", m[1], "")
	is.Equal(status, http.StatusOK)
	is.NoErr(srv.stop())
}

func TestRun_BadTick(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var stdout, stderr lockedBuffer
	err := run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "-tick", "-1s"}, &stdout, &stderr, nil)
	is.True(err != nil) // a negative tick is an error
	err = run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "-tick", "soon"}, &stdout, &stderr, nil)
	is.True(err != nil) // so is one that is not a duration
}

// TestRun_Memory: -db memory: serves from memory, says it keeps nothing, writes no file,
// and a restart starts from nothing (a new App ID, the charge gone).
func TestRun_Memory(t *testing.T) {
	is := is.New(t)
	t.Chdir(t.TempDir())
	srv := start(t, "-db", "memory:")
	m := appIDLine.FindStringSubmatch(srv.stdout.String())
	is.True(m != nil) // a fresh store: a new application
	is.True(strings.Contains(srv.stderr.String(), "keeps nothing"))
	status, body := call(t, "POST", srv.base+"/api/v1/charge", m[1], `{"correlationID":"c1","value":100}`)
	is.Equal(status, http.StatusOK)
	is.Equal(body["charge"].(map[string]any)["value"], 100.0)
	status, _ = call(t, "GET", srv.base+"/api/v1/charge/c1", m[1], "")
	is.Equal(status, http.StatusOK)
	is.NoErr(srv.stop())
	files, err := os.ReadDir(".")
	is.NoErr(err)
	is.Equal(len(files), 0) // nothing written

	srv = start(t, "-db", "memory:")
	m2 := appIDLine.FindStringSubmatch(srv.stdout.String())
	is.True(m2 != nil && m2[1] != m[1]) // started from nothing
	status, body = call(t, "GET", srv.base+"/api/v1/charge/c1", m2[1], "")
	is.Equal(status, http.StatusBadRequest) // the wire's "not found" for a charge
	is.Equal(body["error"], "Charge not found")
}

// TestRun_IdentityOnRestart: -pix-key and -merchant-* given on a later start apply to new
// charges.
func TestRun_IdentityOnRestart(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "payments.db")
	srv := start(t, "-db", db, "-pix-key", "first@loja.example.com")
	appID := appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	is.NoErr(srv.stop())

	srv = start(t, "-db", db, "-pix-key", "second@loja.example.com", "-merchant-city", "Recife")
	status, body := call(t, "POST", srv.base+"/api/v1/charge", appID, `{"correlationID":"c1","value":100}`)
	is.Equal(status, http.StatusOK)
	code, err := brcode.Parse(body["brCode"].(string))
	is.NoErr(err)
	is.Equal(code.Key, "second@loja.example.com") // the key of this start
	is.Equal(code.City, "Recife")
}

// TestRun_SandboxClock: the server's clock in the sandbox is the system clock plus an
// offset the clock route moves; the Service's records follow it (a charge created after a
// month's advance is dated a month ahead), and without the sandbox the route is 404.
func TestRun_SandboxClock(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	dir := t.TempDir()
	srv := start(t, "-db", filepath.Join(dir, "a.db"), "-tick", "0")
	appID := appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	status, body := call(t, "POST", srv.base+"/openpix/testing/clock", appID, `{"advance":"744h"}`)
	is.Equal(status, http.StatusOK) // moved
	now, err := time.Parse(time.RFC3339, body["now"].(string))
	is.NoErr(err)
	is.True(time.Until(now) > 743*time.Hour) // a month ahead of the system clock
	status, body = call(t, "POST", srv.base+"/api/v1/charge", appID, `{"correlationID":"c1","value":1000}`)
	is.Equal(status, http.StatusOK)
	created, err := time.Parse(time.RFC3339, body["charge"].(map[string]any)["createdAt"].(string))
	is.NoErr(err)
	is.True(!created.Before(now)) // the Service's time is the moved clock
	status, _ = call(t, "POST", srv.base+"/openpix/testing/clock", appID, `{"advance":"-1s"}`)
	is.Equal(status, http.StatusBadRequest) // never backwards
	is.NoErr(srv.stop())

	srv = start(t, "-db", filepath.Join(dir, "b.db"), "-sandbox=false", "-bank", testRealBank)
	appID = appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	status, _ = call(t, "GET", srv.base+"/openpix/testing/clock", appID, "")
	is.Equal(status, http.StatusNotFound) // no clock route without the sandbox
	is.NoErr(srv.stop())
}

// TestDefaultBaseURL: without -base-url the links name the address the server listens on,
// and localhost for a wildcard one, which no browser can open (a charge's
// paymentLinkUrl was http://[::]:8080/pay/...).
func TestDefaultBaseURL(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"[::1]:8080":     "http://[::1]:8080",
		"[::]:8080":      "http://localhost:8080",
		"0.0.0.0:8080":   "http://localhost:8080",
		"10.1.2.3:80":    "http://10.1.2.3:80",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		is.NoErr(err)
		is.Equal(defaultBaseURL(tcp), want)
	}
}

// TestRun_ShutdownCutsLongRequests: a stop waits shutdownTimeout for the requests in
// flight, then cuts the rest short and still stops cleanly. Before, a request longer than
// that (a webhook whose test call hangs) made the stop fail: exit status 1.
func TestRun_ShutdownCutsLongRequests(t *testing.T) {
	is := is.New(t)
	old := shutdownTimeout
	shutdownTimeout = 200 * time.Millisecond
	t.Cleanup(func() { shutdownTimeout = old })
	entered, release := make(chan struct{}, 1), make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select { // the test call hangs until the test ends
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(receiver.Close)
	t.Cleanup(func() { close(release) })
	srv := start(t, "-db", filepath.Join(t.TempDir(), "payments.db"), "-tick", "0")
	appID := appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	go func() { // its client sees the connection close: no reply to check
		req, _ := http.NewRequest("POST", srv.base+"/api/v1/webhook", strings.NewReader(`{"webhook":{"name":"slow","url":"`+receiver.URL+`"}}`))
		req.Header.Set("Authorization", appID)
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	<-entered            // the request is in flight, waiting on the receiver
	is.NoErr(srv.stop()) // stopped cleanly, the request cut short
	is.True(strings.Contains(srv.stderr.String(), "requests still running after the shutdown timeout were cut short"))
}

// TestRun_TickWithoutUnit: "-tick 1" is refused with what a duration needs, not the flag
// package's bare "parse error".
func TestRun_TickWithoutUnit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var stdout, stderr lockedBuffer
	err := run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "-tick", "1"}, &stdout, &stderr, nil)
	is.True(err != nil)
	is.True(strings.Contains(stderr.String(), "give a number with its unit, such as 5s")) // says how
}

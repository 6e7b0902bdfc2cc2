package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
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
	srv = start(t, append(flags, "-new-app", "-sandbox=false")...)
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
	is := is.New(t)
	var stdout, stderr lockedBuffer
	err := run(context.Background(), []string{"-nope"}, &stdout, &stderr, nil)
	is.True(err != nil) // unknown flags are an error
	err = run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "extra"}, &stdout, &stderr, nil)
	is.True(err != nil) // so are stray arguments
}

// TestRun_Links: the links a charge carries point at this server (or at -base-url), and
// the QR image is served there without an App ID; the sandbox pays the charge. The tick
// loop runs every millisecond meanwhile, and stops cleanly with the server.
func TestRun_Links(t *testing.T) {
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

	srv = start(t, "-db", filepath.Join(dir, "b.db"), "-base-url", "https://pix.example.com/", "-sandbox=false")
	appID = appIDLine.FindStringSubmatch(srv.stdout.String())[1]
	status, body = call(t, "POST", srv.base+"/api/v1/charge", appID, `{"correlationID":"c1","value":1000}`)
	is.Equal(status, http.StatusOK)
	charge = body["charge"].(map[string]any)
	is.True(strings.HasPrefix(charge["qrCodeImage"].(string), "https://pix.example.com/openpix/charge/brcode/image/")) // -base-url, without its trailing slash
	status, _ = call(t, "GET", srv.base+"/openpix/testing?transactionID="+charge["transactionID"].(string), appID, "")
	is.Equal(status, http.StatusNotFound) // no sandbox with -sandbox=false
	is.NoErr(srv.stop())
}

func TestRun_BadTick(t *testing.T) {
	is := is.New(t)
	var stdout, stderr lockedBuffer
	err := run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "-tick", "-1s"}, &stdout, &stderr, nil)
	is.True(err != nil) // a negative tick is an error
	err = run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "x.db"), "-tick", "soon"}, &stdout, &stderr, nil)
	is.True(err != nil) // so is one that is not a duration
}

// TestRun_IdentityOnRestart: -pix-key and -merchant-* given on a later start apply to new
// charges.
func TestRun_IdentityOnRestart(t *testing.T) {
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

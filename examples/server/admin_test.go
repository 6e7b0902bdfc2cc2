package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

func TestCLI_BadAdminAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, addr string }{
		{"AllInterfaces", ":9090"},
		{"Unspecified", "0.0.0.0:9090"},
		{"PublicIP", "203.0.113.7:9090"},
		{"HostName", "admin.example.com:9090"},
		{"NoPort", "127.0.0.1"},
		{"BadPort", "127.0.0.1:99999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			db := filepath.Join(t.TempDir(), "x.db")
			var stdout, stderr lockedBuffer
			code := cli(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db, "-admin-addr", tc.addr}, &stdout, &stderr)
			is.Equal(code, 2)                                         // a usage error
			is.True(strings.Contains(stderr.String(), "-admin-addr")) // naming the flag
			_, err := os.Stat(db)
			is.True(errors.Is(err, fs.ErrNotExist)) // nothing was written
		})
	}
	for _, args := range [][]string{
		{"-admin-addr", "127.0.0.1:9090"},
		{"-admin-addr", "[::1]:9090"},
		{"-admin-addr", "localhost:0"},
		{"-admin-addr", "0.0.0.0:9090", "-admin-allow-remote"},
	} {
		_, err := parseFlags(args, io.Discard)
		if err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

var adminLine = regexp.MustCompile(`msg="operator listener" addr=(\S+)`)

// TestRun_Admin starts the server with the operator listener, uses the API, and reads
// what an operator would: metrics by route and of commits, pprof, and a backup that opens
// as a database holding what the API acknowledged. It also checks the request log.
func TestRun_Admin(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := start(t, "-db", filepath.Join(t.TempDir(), "payments.db"), "-admin-addr", "127.0.0.1:0", "-tick", "0")
	m := adminLine.FindStringSubmatch(srv.stderr.String())
	is.True(m != nil) // the operator listener's address is logged
	admin := "http://" + m[1]
	appID := appIDLine.FindStringSubmatch(srv.stdout.String())[1]

	for _, corr := range []string{"a1", "a2", "a3"} {
		status, _ := call(t, "POST", srv.base+"/api/v1/charge", appID, `{"correlationID":"`+corr+`","value":1500}`)
		is.Equal(status, 200)
	}
	status, _ := call(t, "GET", srv.base+"/api/v1/charge/a1", appID, "")
	is.Equal(status, 200)
	status, _ = call(t, "GET", srv.base+"/api/v1/charge/missing", appID, "")
	is.Equal(status, 400)

	// The request log: one line per request, with its id, also answered as a header.
	req, _ := http.NewRequest("GET", srv.base+"/health", nil)
	req.Header.Set("X-Request-Id", "trace-42")
	res, err := client.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.Header.Get("X-Request-Id"), "trace-42") // a sane incoming id is kept

	get := func(path string) (int, string) {
		t.Helper()
		res, err := client.Get(admin + path)
		is.NoErr(err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		is.NoErr(err)
		return res.StatusCode, string(b)
	}
	status, body := get("/metrics")
	is.Equal(status, 200)
	for _, want := range []string{
		`payments_http_requests_total{code="200",route="POST /api/v1/charge"} 3`,
		`payments_http_requests_total{code="400",route="GET /api/v1/charge/{id}"} 1`,
		`payments_http_request_duration_seconds_count{route="GET /api/v1/charge/{id}"} 2`,
		`payments_store_commit_calls_count`,
		`payments_store_commit_duration_seconds_bucket`,
		`payments_store_commit_write_seconds_bucket`,
		`payments_store_commit_written_bytes_bucket`,
		`payments_webhook_attempts_total{outcome="gave_up"} 0`,
		"payments_outbox_lag_seconds 0",
		"payments_outbox_lag_webhooks 0",
		"payments_bank_sandbox 1", // the default bank is make-believe, and says so
		"payments_orders_stuck 0",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	is.True(!strings.Contains(body, `route="/api/v1/charge/a1"`)) // no raw paths as labels
	commits := regexp.MustCompile(`payments_store_commit_calls_sum (\d+)`).FindStringSubmatch(body)
	is.True(commits != nil && commits[1] != "0") // commits were observed
	written := regexp.MustCompile(`payments_store_commit_written_bytes_sum (\S+)`).FindStringSubmatch(body)
	is.True(written != nil && written[1] != "0") // and what they wrote

	status, body = get("/orders/stuck")
	is.Equal(status, 200)
	is.Equal(strings.TrimSpace(body), `{"orders":[],"pageInfo":{"skip":0,"limit":`+strconv.Itoa(payments.DefaultLimit)+`,"totalCount":0,"hasPreviousPage":false,"hasNextPage":false}}`) // none stuck
	status, _ = get("/orders/stuck?limit=x")
	is.Equal(status, 400)

	status, body = get("/debug/pprof/")
	is.Equal(status, 200)
	is.True(strings.Contains(body, "goroutine")) // the pprof index

	status, _ = get("/api/v1/charge")
	is.Equal(status, 404) // the API is not on the operator listener

	// A request naming another host is refused: a web page whose name resolves to
	// 127.0.0.1 (DNS rebinding) would otherwise read the backup through the browser.
	for _, host := range []string{"rebind.attacker.example", "rebind.attacker.example:" + strings.Split(m[1], ":")[1], "10.0.0.1"} {
		req, _ := http.NewRequest("GET", admin+"/backup", nil)
		req.Host = host
		res, err := client.Do(req)
		is.NoErr(err)
		res.Body.Close()
		is.Equal(res.StatusCode, http.StatusMisdirectedRequest)
	}
	for _, host := range []string{"localhost", "LOCALHOST:1", "127.0.0.1", "[::1]:9090"} {
		req, _ := http.NewRequest("GET", admin+"/debug/pprof/", nil)
		req.Host = host
		res, err := client.Do(req)
		is.NoErr(err)
		res.Body.Close()
		is.Equal(res.StatusCode, 200) // the operator's own names
	}

	// A backup taken while the server runs opens as a database with the charges.
	status, snap := get("/backup")
	is.Equal(status, 200)
	path := filepath.Join(t.TempDir(), "copy.db")
	is.NoErr(os.WriteFile(path, []byte(snap), 0o600))
	st, err := bolt.Open(path)
	is.NoErr(err)
	defer st.Close()
	svc, err := payments.New(st, payments.Options{})
	is.NoErr(err)
	c, err := svc.GetCharge(context.Background(), "a3")
	is.NoErr(err)
	is.Equal(c.Value, int64(1500)) // acknowledged before the backup, so in it
	report, err := svc.Audit(context.Background())
	is.NoErr(err)
	is.True(report.OK()) // the copy audits clean
	is.NoErr(srv.stop())

	// The request log is written by its own goroutine (logbuf.go); stopping the server
	// writes whatever is left, so every line is there now.
	logs := srv.stderr.String()
	is.True(strings.Contains(logs, `msg=request request_id=trace-42 method=GET route="GET /health" status=200`)) // logged with its route
	is.True(strings.Contains(logs, `route="GET /api/v1/charge/{id}" status=400`))                                // the pattern, not the path
}

// Without -admin-addr there is no operator listener.
func TestRun_AdminOff(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := start(t, "-db", filepath.Join(t.TempDir(), "payments.db"), "-tick", "0")
	is.True(!strings.Contains(srv.stderr.String(), "operator listener")) // off by default
	res, err := client.Get(srv.base + "/metrics")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 404) // and the API port does not serve it
}

// A store without online backup (PostgreSQL) answers /backup 501 saying so, before any
// byte of a file: not a server failure.
func TestAdmin_BackupUnsupported(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.New(storetest.Rerun(memory.New()), payments.Options{})
	is.NoErr(err)
	h := adminHandler(svc, newMetrics(), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/backup", nil))
	is.Equal(rec.Code, http.StatusNotImplemented)                        // no snapshot
	is.True(strings.Contains(rec.Body.String(), "has no online backup")) // and why
	is.Equal(rec.Header().Get("Content-Disposition"), "")                // not offered as a file
}

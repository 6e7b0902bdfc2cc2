package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// serverEnv set to 1 makes this test binary the server: TestMain runs main instead of the
// tests. The tests that run the server as a process of its own start this binary so (see
// buildServer), rather than building the server with go build: on a fresh machine that is
// a second compile of everything, without -race, of about a minute.
const serverEnv = "PAYMENTS_TEST_BINARY_IS_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		main() // exits
	}
	os.Setenv(serverEnv, "1") // for the processes the tests start: they are the server
	os.Exit(m.Run())
}

// buildServer returns the server binary (this test binary, which is the server for the
// processes it starts; see serverEnv) with the path of a database file in a temporary
// directory, for the tests that kill the process.
func buildServer(t *testing.T) (bin, db string) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	return bin, filepath.Join(t.TempDir(), "payments.db")
}

// TestCrash_NothingAcknowledgedIsLost runs the real server binary, creates and pays charges
// from 16 connections, kills the process with SIGKILL in the middle, and restarts it on the
// same file: every charge the server answered 200 for is there, every payment it answered
// 200 for left the charge COMPLETED, and the ledger audits clean. (A request the kill cut
// off has no promise either way: its payment may or may not have committed.)
func TestCrash_NothingAcknowledgedIsLost(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills a server process")
	}
	is := is.New(t)
	bin, db := buildServer(t)

	base, appID, proc := startProcess(t, bin, db, true)
	var created, paid sync.Map // correlationID -> true, acknowledged with 200
	var acks atomic.Int64
	underWay := make(chan struct{}) // closed at the 300th acknowledged charge
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				corr := fmt.Sprintf("crash-%d-%d", g, i)
				if status(base, "POST", "/api/v1/charge", appID, `{"correlationID":"`+corr+`","value":1000}`) != http.StatusOK {
					continue // the server died under the request: unknown, not acknowledged
				}
				created.Store(corr, true)
				if acks.Add(1) == 300 {
					close(underWay)
				}
				if i%2 == 0 && status(base, "GET", "/openpix/testing?transactionID="+corr, appID, "") == http.StatusOK {
					paid.Store(corr, true)
				}
			}
		}()
	}
	select {
	case <-underWay:
	case <-time.After(time.Minute):
		t.Fatal("the load did not get under way")
	}
	is.NoErr(proc.Process.Signal(syscall.SIGKILL)) // no clean shutdown
	proc.Wait()
	close(killed)
	wg.Wait()

	base, _, proc = startProcess(t, bin, db, false)
	n := 0
	created.Range(func(k, _ any) bool {
		n++
		got := chargeStatus(t, base, appID, k.(string))
		_, payAcked := paid.Load(k)
		switch {
		case payAcked && got != "COMPLETED":
			t.Errorf("charge %s: paid with a 200, but %q after the crash", k, got)
		case got != "ACTIVE" && got != "COMPLETED": // a payment the crash cut off may have committed
			t.Errorf("charge %s: created with a 200, but %q after the crash", k, got)
		}
		return true
	})
	is.True(n >= 300) // every acknowledged charge was checked
	is.NoErr(proc.Process.Signal(syscall.SIGTERM))
	proc.Wait()

	svc, err := payments.Open(db, payments.Options{})
	is.NoErr(err)
	defer svc.Close()
	report, err := svc.Audit(context.Background())
	is.NoErr(err)
	is.True(report.OK()) // the ledger re-derives cleanly after the crash
	if !report.OK() {
		t.Log(report.Problems)
	}
}

// startProcess starts the server binary on a free port and returns its base URL, the App
// ID it prints on a first start (wantAppID), and the process. It is ready when it logs
// "listening": the port is bound by then. extra are more flags.
func startProcess(t *testing.T, bin, db string, wantAppID bool, extra ...string) (string, string, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"-addr", addr, "-db", db, "-tick", "0"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	appID, listening := make(chan string, 1), make(chan struct{})
	go scanLines(stdout, func(line string) bool {
		v, ok := strings.CutPrefix(line, "App ID: ")
		if ok {
			appID <- v
		}
		return !ok
	})
	var listened sync.Once
	var errs serverErrors // kept for a failure: the cause of a 500 is in the server's log
	n, _ := processesStarted.LoadOrStore(t, new(atomic.Int64))
	started := n.(*atomic.Int64)
	nth := started.Add(1)
	t.Cleanup(func() {
		// Only the last two processes of a failed test say what they logged (the harness
		// starts hundreds, and their lines would bury the failure), and only if they
		// logged an error or a warning.
		if t.Failed() && nth >= started.Load()-1 && errs.String() != "" {
			t.Logf("the server's errors and warnings (%s, process %d of the test):\n%s", addr, nth, errs.String())
		}
		if nth == 1 {
			processesStarted.Delete(t)
		}
	})
	go scanLines(stderr, func(line string) bool {
		if strings.Contains(line, "msg=listening") {
			listened.Do(func() { close(listening) })
		}
		errs.add(line)
		return true
	})
	timeout := time.After(time.Minute)
	id := ""
	if wantAppID {
		select {
		case id = <-appID:
		case <-timeout:
			t.Fatal("no App ID line")
		}
	}
	select {
	case <-listening:
	case <-timeout:
		t.Fatal("the server did not start listening")
	}
	return "http://" + addr, id, cmd
}

// processesStarted counts the server processes each test started (*testing.T ->
// *atomic.Int64).
var processesStarted sync.Map

// serverErrors keeps the last lines at level ERROR or WARN a server process logged.
type serverErrors struct {
	mu    sync.Mutex
	lines []string
}

func (e *serverErrors) add(line string) {
	if !strings.Contains(line, "level=ERROR") && !strings.Contains(line, "level=WARN") {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.lines) == 50 {
		e.lines = e.lines[1:]
	}
	e.lines = append(e.lines, line)
}

func (e *serverErrors) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.lines, "\n")
}

// scanLines calls fn with each line of r until fn returns false, then drains r so that
// the process never blocks on a full pipe.
func scanLines(r io.Reader, fn func(string) bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() && fn(sc.Text()) {
	}
	io.Copy(io.Discard, r)
}

func status(base, method, path, appID, body string) int {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return 0
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if appID != "" {
		req.Header.Set("Authorization", appID)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

func chargeStatus(t *testing.T, base, appID, corr string) string {
	t.Helper()
	code, body := call(t, "GET", base+"/api/v1/charge/"+corr, appID, "")
	if code != http.StatusOK {
		return fmt.Sprintf("HTTP %d", code)
	}
	return body["charge"].(map[string]any)["status"].(string)
}

// Package pgtest gives tests an empty PostgreSQL schema of their own.
//
// Tests that need PostgreSQL call URL: it skips the test, saying why, unless
// PAYMENTS_POSTGRES_URL names a server (.ci/run sets it), and otherwise returns a URL
// whose search_path is a schema no other test uses while this one runs (FreshURL: a
// schema never used before).
//
// Making a schema and its tables costs about a fifth of a second, and the Service tests
// need hundreds, so a test process keeps the schemas its tests are done with and hands
// them to later tests emptied (every row deleted but the store's record of migrations).
// They are named after the host and the process (payments_test_<host>_<pid>_<n>); the
// first URL call of a process drops those left by processes of this host that have
// ended, so each run starts from fresh schemas and leaves only its own behind.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the environment variable that names the server tests use.
const EnvURL = "PAYMENTS_POSTGRES_URL"

var (
	mu      sync.Mutex
	swept   bool
	free    []string // schemas of this process no test is using
	counter int
)

// URL returns the URL of an empty schema on the server of PAYMENTS_POSTGRES_URL, for t
// alone until it ends; it skips t when the variable is not set.
func URL(t testing.TB) string {
	t.Helper()
	base, conn := connect(t)
	defer conn.Close(ctx)
	schema, err := take(ctx, conn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		free = append(free, schema)
	})
	return withSchema(t, base, schema)
}

// FreshURL is URL with a schema never used before, dropped when t ends: for tests of
// what happens on an empty database (migrations).
func FreshURL(t testing.TB) string {
	t.Helper()
	base, conn := connect(t)
	defer conn.Close(ctx)
	mu.Lock()
	counter++
	schema := fmt.Sprintf("%s%d_fresh%d", prefix(), os.Getpid(), counter)
	mu.Unlock()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	return withSchema(t, base, schema)
}

var ctx = context.Background()

// connect connects to the server of PAYMENTS_POSTGRES_URL, and skips t when the variable
// is not set.
func connect(t testing.TB) (string, *pgx.Conn) {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (e.g. postgres://postgres@127.0.0.1:5432/test) to run them", EnvURL)
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", EnvURL, err)
	}
	return base, conn
}

// withSchema is base with its search_path set to schema.
func withSchema(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// prefix names this host's schemas: payments_test_<host hash>_.
func prefix() string {
	host, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(host))
	return fmt.Sprintf("payments_test_%08x_", h.Sum32())
}

// take returns an emptied schema this process has used before, or a new one.
func take(ctx context.Context, conn *pgx.Conn) (string, error) {
	mu.Lock()
	if !swept {
		swept = true
		if err := sweep(ctx, conn); err != nil {
			mu.Unlock()
			return "", err
		}
	}
	if n := len(free); n > 0 {
		schema := free[n-1]
		free = free[:n-1]
		mu.Unlock()
		return schema, empty(ctx, conn, schema)
	}
	counter++
	schema := fmt.Sprintf("%s%d_%d", prefix(), os.Getpid(), counter)
	mu.Unlock()
	_, err := conn.Exec(ctx, "CREATE SCHEMA "+schema)
	return schema, err
}

// empty deletes the rows of every table of schema but the record of applied migrations.
func empty(ctx context.Context, conn *pgx.Conn, schema string) error {
	rows, err := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'payments_schema'", schema)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		return err
	}
	var sql strings.Builder // DELETE, not TRUNCATE: a test leaves few rows, and TRUNCATE makes new files
	for _, name := range tables {
		fmt.Fprintf(&sql, "DELETE FROM %s.%s;", schema, pgx.Identifier{name}.Sanitize())
	}
	return conn.PgConn().Exec(ctx, sql.String()).Close()
}

// sweep drops the schemas left by test processes of this host that have ended.
func sweep(ctx context.Context, conn *pgx.Conn) error {
	p := prefix()
	rows, err := conn.Query(ctx, "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", p)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, p), "_", 2)[0])
		if err != nil || alive(pid) {
			continue
		}
		// Best effort: another process may be dropping it at the same time.
		conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	}
	return nil
}

// alive reports whether a process with pid runs on this host.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return !errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

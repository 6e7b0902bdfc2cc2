// Package pgtest gives tests a fresh, empty PostgreSQL schema of their own.
//
// Tests that need PostgreSQL call URL: it skips the test, saying why, unless
// PAYMENTS_POSTGRES_URL names a server (.ci/run sets it), and otherwise creates a schema
// that it drops when the test ends, returning a URL whose search_path is that schema.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the environment variable that names the server tests use.
const EnvURL = "PAYMENTS_POSTGRES_URL"

// URL returns the URL of a new schema on the server of PAYMENTS_POSTGRES_URL, dropped
// with everything in it when t ends; it skips t when the variable is not set.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (e.g. postgres://postgres@127.0.0.1:5432/test) to run them", EnvURL)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "payments_test_" + hex.EncodeToString(b)
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
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

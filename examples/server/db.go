package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/postgres"
)

// memoryDB is the -db value that keeps everything in the process's memory (store/memory):
// nothing is written anywhere and everything is gone when the server stops. It is for
// trying the API out and for measuring the service without a disk (bench/load.sh, DB=memory:),
// never for money that matters.
const memoryDB = "memory:"

// isPostgres reports whether -db names a PostgreSQL database rather than a bbolt file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// checkPostgresURL accepts postgres://[user[:password]@]host[:port]/database[?params].
func checkPostgresURL(db string) error {
	u, err := url.Parse(db)
	switch {
	case err != nil:
		return errors.New("is not a URL")
	case u.Host == "":
		return errors.New("must name a host, e.g. postgres://postgres@127.0.0.1:5432/payments")
	case strings.Trim(u.Path, "/") == "":
		return errors.New("must name a database, e.g. postgres://postgres@127.0.0.1:5432/payments")
	}
	if _, err := pgxpool.ParseConfig(db); err != nil { // its parameters (pool_max_conns, sslmode, ...)
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			return fmt.Errorf("has a bad parameter: %v", pe.Unwrap())
		}
		return errors.New("has a bad parameter")
	}
	return nil
}

// openService opens the Service on -db: a bbolt file, which this process alone may use,
// a PostgreSQL database, which any number of server processes may share (webhook
// deliveries are then leased, see payments.Options.WebhookLease), or memory (memoryDB).
// Closing the Service closes the database. onCommit observes bbolt's group commits
// (metrics); nil for none.
func openService(ctx context.Context, db string, onCommit func(bolt.CommitInfo), opts payments.Options) (*payments.Service, func() error, error) {
	var st store.Store
	var err error
	switch {
	case isPostgres(db):
		st, err = postgres.Open(ctx, db)
	case db == memoryDB:
		st = memory.New()
	default:
		st, err = bolt.OpenWith(db, bolt.Options{OnCommit: onCommit})
	}
	if err != nil {
		return nil, nil, err
	}
	svc, err := payments.New(st, opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return svc, st.Close, nil
}

// redactDB is -db for the log and for errors: a PostgreSQL URL without its password. A URL
// that does not parse (a "%" in the password that is not an escape, a space) loses all
// that stands between the scheme and its last "@", where a password would be.
func redactDB(db string) string {
	if !isPostgres(db) {
		return db
	}
	if u, err := url.Parse(db); err == nil {
		return u.Redacted()
	}
	scheme, rest, _ := strings.Cut(db, "://")
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return scheme + "://xxxxx@" + rest[i+1:]
	}
	return db
}

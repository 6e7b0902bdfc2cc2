// Package postgres is the store.Store on PostgreSQL (pgx), for several server processes
// sharing one database.
//
// # Transactions
//
// Update runs its function in one SERIALIZABLE transaction and, when the database aborts
// it with a serialization failure or a deadlock (SQLSTATE 40001, 40P01) or a unique
// violation that a concurrent commit caused (23505), rolls back and runs the function
// again, as the store contract allows: the payments Service writes its transaction
// functions to be rerun (storetest.Rerun holds it to that). SERIALIZABLE rather than
// explicit row locks because the contract asks for more than row locks can give: a Get
// that found nothing, or a List that counted a range, must stay true until commit (no
// phantoms), and PostgreSQL's serializable snapshot isolation protects those reads with
// predicate locks; with row locks every "insert if missing" would need a lock on
// something that does not exist yet. It is also the isolation that PostgreSQL-wire
// distributed databases offer.
//
// View runs in a REPEATABLE READ READ ONLY transaction: one snapshot, no predicate locks.
//
// # Hot rows: the company gate
//
// Every write of one company rewrites a few rows: the outbox counter (Next of the events
// sequence), the company's system books, kept index counts. Under SERIALIZABLE two
// concurrent writers of one such row cannot both commit: the second waits for the first
// and then fails with 40001 and runs again, so under load much of the work of one
// company is thrown away. Of those rows the outbox counter cannot be spread out: the
// contract (storetest NextCommitOrder) asks that its values become visible in commit
// order, which makes the writers of one company a chain of commits whatever else is done
// (a sequence would hand out values in take order, not commit order). Sharding books or
// counting instead of keeping counts would not remove that chain, so the store serializes
// the writers of one company instead, before they start: an Update takes a lock on the
// company of its first call (an in-process mutex, then a session advisory lock,
// pg_advisory_lock, so that other processes queue too) before its transaction takes its
// snapshot, and releases it with the commit. The writers of one company then wait for
// each other instead of failing, while other companies' writers run in parallel and share
// fsyncs. SERIALIZABLE still guards correctness: the gate only schedules, and a
// transaction that reaches rows of another company or of the system space is rerun when
// it conflicts. Options.NoCompanyGate turns it off (for databases without advisory locks).
// The lock's key is the company's in the store's schema: stores in different schemas of
// one database do not queue behind each other's companies (all of them have a "default").
//
// Kept index counts are split into 16 shards by record id, so that writers of an index
// shared by all companies (the due and webhook queues of the system space) rarely rewrite
// the same row; a Put that leaves a record in the same indexes does not touch them.
//
// Measured (BenchmarkCreateChargeDurable, BenchmarkCreateChargeCompanies in the payments
// package; PostgreSQL 15 on the same 2-core machine as bolt, shared with other builds;
// medians of 5 runs at load average 2 to 6, where runs of one benchmark stayed within about
// 30% of each other, twice that between two benchmarks of the same case): durable
// CreateCharge in one company, with the gate, 356 a second from 1 caller, 406 from 16 and
// 420 from 64, no reruns; without it 437, 156 and 69, with 3.1 and 5.4 reruns per call at
// 16 and 64 callers. Sixteen callers over sixteen companies: 263 a second with the gate,
// 174 without, still with 2.0 reruns per call (all companies share the system space's due
// queue, which every CreateCharge writes). Two stores (two server processes) on one
// database, with the gate: 262, 212 and 236 a second. bolt, with group commit, did 1184,
// 3990 and 4067. An earlier run at load average 15 to 22 (single runs varying up to 3x)
// ranked them the same. One company on PostgreSQL is bounded by one commit per call (an
// fsync, and 13 round trips for a CreateCharge), which no choice of rows inside the store
// removes while the outbox is ordered by commit. Here sixteen companies went hardly faster
// than one (263 against 247 a second in the same benchmark), which points at the machine's
// two cores rather than the gate as the bound reached; not profiled further.
//
// # Schema
//
// Open applies the embedded migrations (migrations/*.sql) in one transaction under a
// transaction advisory lock, recording each in payments_schema: processes opening one
// database at the same time apply each migration once.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pixfoundry/payments/store"
)

// DefaultMaxConns is the size of the connection pool unless the URL sets pool_max_conns.
const DefaultMaxConns = 16

// MaxAttempts is how many times Update runs a function that keeps losing serialization
// races before it gives up with the last error.
const MaxAttempts = 100

// Options tune a Store. The zero value is the default.
type Options struct {
	// NoCompanyGate turns off the per-company lock taken before each Update (see the
	// package doc); needed on databases without pg_advisory_lock.
	NoCompanyGate bool
}

// Store is a store.Store on a PostgreSQL database.
type Store struct {
	url   string
	pool  *pgxpool.Pool
	gate  bool
	local [64]sync.Mutex // in-process part of the company gate, striped by company hash
	// schema is the schema the store's tables are in (current_schema()): part of the
	// gate's lock key, so that stores in different schemas of one database (tests,
	// separate deployments) never wait on each other's companies.
	schema string

	retries atomic.Int64
	closed  atomic.Bool // Close was called: transactions fail, as the contract says
}

//go:embed migrations/*.sql
var migrations embed.FS

// Open connects to the database at url (postgres://user@host:port/db?...) and applies
// the schema migrations.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenOptions(ctx, url, Options{})
}

// OpenOptions is Open with options.
func OpenOptions(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{url: url, pool: pool, gate: !opts.NoCompanyGate}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: migrate: %w", err)
	}
	if err := pool.QueryRow(ctx, "SELECT coalesce(current_schema(), '')").Scan(&s.schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: read the schema: %w", err)
	}
	return s, nil
}

// migrationLock is the advisory lock key that serializes migrations.
const migrationLock = 0x7061796d656e7473 // "payments"

func (s *Store) migrate(ctx context.Context) error {
	names, err := migrations.ReadDir("migrations")
	if err != nil {
		return err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	return s.retry(ctx, func() error {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{})
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		if s.gate {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS payments_schema (version integer PRIMARY KEY)"); err != nil {
			return err
		}
		var applied int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM payments_schema").Scan(&applied); err != nil {
			return err
		}
		for _, e := range names {
			v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
			if err != nil {
				return fmt.Errorf("migration %s: no version number", e.Name())
			}
			if v <= applied {
				continue
			}
			body, err := migrations.ReadFile(path.Join("migrations", e.Name()))
			if err != nil {
				return err
			}
			if err := tx.Conn().PgConn().Exec(ctx, string(body)).Close(); err != nil {
				return fmt.Errorf("migration %s: %w", e.Name(), err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO payments_schema (version) VALUES ($1)", v); err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	})
}

// URL is the URL the store was opened with.
func (s *Store) URL() string { return s.url }

// Close closes the connection pool.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.pool.Close()
	return nil
}

// Retries is how many times Update has rerun a function since Open.
func (s *Store) Retries() int64 { return s.retries.Load() }

// retryable reports whether err is a conflict with a concurrent transaction, which a
// rerun of the transaction resolves, or a connection lost before COMMIT was sent
// (lostBeforeCommit).
func retryable(err error) bool {
	var lost *lostConnError
	if errors.As(err, &lost) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01", "23505", "42P07":
		return true // serialization failure, deadlock, unique key or table taken meanwhile
	}
	return false
}

// lostConnError is a transaction that failed because its connection was lost before
// COMMIT was sent: the server rolled it back, so running it again on another connection
// is safe. The pool hands out a connection the server ended while it was idle (a restart,
// a failover, pg_terminate_backend) without checking it first; its first statement fails.
type lostConnError struct{ err error }

func (e *lostConnError) Error() string { return e.err.Error() }
func (e *lostConnError) Unwrap() error { return e.err }

// maxLostConnections is how many lost connections one Update or View runs again after:
// enough for the dead connections of a pool after a restart to be found, not so many
// that a database that is gone holds a caller long.
const maxLostConnections = 3

// lostBeforeCommit wraps err in a *lostConnError when it is the loss of t's connection
// before COMMIT was sent (the server ended the session, or the network did), not an answer
// to a statement or the caller's cancellation.
func (t *tx) lostBeforeCommit(err error) error {
	if err == nil || t.committing || t.ctx.Err() != nil || !lostConnection(err) {
		return err
	}
	return &lostConnError{err}
}

// lostConnection reports whether err says the connection is gone.
func lostConnection(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03":
			return true // connection exception; admin, crash or cannot-connect-now shutdown
		}
		return false
	}
	var ne net.Error
	return pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne)
}

// retry runs attempt until it succeeds, fails with an error a rerun cannot resolve, or
// MaxAttempts have failed (maxLostConnections for lost connections); it waits a short,
// growing, random time between attempts.
func (s *Store) retry(ctx context.Context, attempt func() error) error {
	var err error
	lost := 0
	for i := range MaxAttempts {
		if err = attempt(); !retryable(err) {
			return err
		}
		var le *lostConnError
		if errors.As(err, &le) {
			if lost++; lost > maxLostConnections {
				return le.err
			}
		}
		s.retries.Add(1)
		wait := time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 6)))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("postgres store: gave up after %d conflicting attempts: %w", MaxAttempts, err)
}

// Update runs fn in a SERIALIZABLE transaction, again after a serialization failure; see
// the package doc.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	var fnErr error
	err := s.retry(ctx, func() error {
		t := &tx{s: s, ctx: ctx, writable: true}
		defer t.end()
		fnErr = nil
		if err := runFn(t, fn); err != nil {
			if t.dbErr != nil {
				return t.lostBeforeCommit(t.dbErr) // the database failed under fn: retried if it was a conflict
			}
			fnErr = err
			return nil
		}
		if t.dbErr != nil {
			return t.lostBeforeCommit(t.dbErr)
		}
		if t.conn == nil {
			return nil // fn did nothing in the database
		}
		return t.lostBeforeCommit(t.commit())
	})
	if err != nil {
		return err
	}
	return fnErr
}

// errCollection is a collection name that is not UTF-8 text without NUL bytes: the
// collection column is text (the Service's collections are plain names). Refused before
// the database sees it, which would fail the whole transaction.
var errCollection = fmt.Errorf("%w: a collection name must be UTF-8 text without NUL bytes", store.ErrInvalid)

// errClosed is a transaction after Close. A transaction opens its connection at its first
// call, so one whose function makes none would otherwise succeed.
var errClosed = errors.New("postgres store: closed")

// usable is nil when a transaction may start: the store is open and ctx is not done.
func (s *Store) usable(ctx context.Context) error {
	if s.closed.Load() {
		return errClosed
	}
	return ctx.Err()
}

// runFn runs fn, ending the transaction before re-raising its panic.
func runFn(t *tx, fn func(store.Tx) error) error {
	defer func() {
		if p := recover(); p != nil {
			t.end()
			panic(p)
		}
	}()
	return fn(t)
}

// View runs fn in a REPEATABLE READ READ ONLY transaction: one snapshot.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	var fnErr error
	err := s.retry(ctx, func() error {
		t := &tx{s: s, ctx: ctx}
		defer t.end()
		fnErr = runFn(t, fn)
		if t.dbErr == nil {
			return nil
		}
		// A View function is not held to being run twice as an Update's is: it is run
		// again only when its connection was gone before anything was read (BEGIN failed),
		// as the pool's connections the server ended while idle are.
		var lost *lostConnError
		if err := t.lostBeforeCommit(t.dbErr); errors.As(err, &lost) && !t.begun {
			fnErr = nil
			return err // read again, on another connection
		}
		if fnErr == nil {
			fnErr = t.dbErr
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fnErr
}

// companyKey is the advisory lock key of a company's gate.
func companyKey(schema, company string) int64 {
	h := fnv.New64a()
	h.Write([]byte("company:"))
	h.Write([]byte(schema))
	h.Write([]byte{0})
	h.Write([]byte(company))
	return int64(h.Sum64())
}

// begin opens the transaction on the first call, which names the company the gate locks.
// Every call begins with it, so it also refuses a collection the text column cannot hold.
func (t *tx) begin(collection, company string) error {
	if t.dbErr != nil {
		return t.dbErr
	}
	if !utf8.ValidString(collection) || strings.IndexByte(collection, 0) >= 0 {
		return errCollection
	}
	if t.open {
		return nil
	}
	ctx := t.ctx
	gate := t.writable && t.s.gate
	if gate {
		key := companyKey(t.s.schema, company)
		t.local = &t.s.local[uint64(key)%uint64(len(t.s.local))]
		t.local.Lock()
		t.lockKey = key
	}
	conn, err := t.s.pool.Acquire(ctx)
	if err != nil {
		return t.fail(err)
	}
	t.conn = conn
	if gate {
		t.locked = true // from here on it may be held: end releases it, or drops the connection
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", t.lockKey); err != nil {
			return t.fail(err)
		}
	}
	mode := "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	if t.writable {
		mode = "BEGIN ISOLATION LEVEL SERIALIZABLE"
	}
	b := &pgx.Batch{}
	b.Queue(mode) // sent with the first statement, in its round trip
	t.pending = b.QueuedQueries
	t.open = true
	return nil
}

// exec sends the statements still pending (BEGIN, writes) and then b's, in one round
// trip, and returns the results of b's. An error of a pending statement fails the
// transaction. The caller closes the results.
func (t *tx) exec(b *pgx.Batch) (pgx.BatchResults, error) {
	n := len(t.pending)
	if n > 0 {
		b.QueuedQueries = append(t.pending, b.QueuedQueries...)
		t.pending = nil
	}
	res := t.conn.SendBatch(t.ctx, b)
	for range n {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return nil, t.fail(err)
		}
		t.begun = true // BEGIN is always the first pending statement
	}
	return res, nil
}

// commit sends the pending writes, COMMIT and the release of the gate in one round trip.
// Once COMMIT's answer is read the transaction has committed, whatever happens to the
// release or the connection after it: commit reports success, and end releases the gate
// by closing the connection if the release failed. (It reported the failure, so a caller
// took work that was done for work that was not.)
func (t *tx) commit() error {
	b := &pgx.Batch{}
	b.Queue("COMMIT")
	if t.locked {
		b.Queue("SELECT pg_advisory_unlock($1)", t.lockKey)
	}
	// COMMIT goes in one batch with the pending writes: once it is sent, a lost connection
	// leaves the outcome unknown, and the transaction is not run again.
	t.committing = true
	res, err := t.exec(b)
	if err != nil {
		// A pending write failed (end rolls back and releases the gate), or the connection
		// was lost with COMMIT sent.
		return commitErr(err)
	}
	defer res.Close()
	if _, err := res.Exec(); err != nil {
		return t.fail(commitErr(err)) // not committed, or not known to be: not run again
	}
	t.open = false // committed
	if t.locked {
		if _, err := res.Exec(); err == nil {
			t.locked = false
		} // else end drops the connection, which releases the gate on the server
	}
	_ = res.Close()
	return nil
}

// commitErr says, of a lost connection, that a commit's outcome is unknown.
func commitErr(err error) error {
	if lostConnection(err) {
		return fmt.Errorf("postgres store: the connection was lost with COMMIT sent, so whether it committed is unknown: %w", err)
	}
	return err
}

// fail records a database error: the transaction is over, and every later call fails.
func (t *tx) fail(err error) error {
	if t.dbErr == nil {
		t.dbErr = err
	}
	return t.dbErr
}

// end rolls back what is still open, releases the gate and the connection. It runs once
// whatever happened, even when ctx is canceled.
func (t *tx) end() {
	if t.ended {
		return
	}
	t.ended = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), endTimeout)
	defer cancel()
	if t.conn != nil {
		broken := false
		if t.open {
			if _, err := t.conn.Exec(ctx, "ROLLBACK"); err != nil {
				broken = true
			}
		}
		if t.locked {
			var held bool
			if err := t.conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", t.lockKey).Scan(&held); err != nil {
				broken = true
			}
		}
		if broken {
			// Close the socket now: the server then ends the session, its transaction and
			// its locks (the company gate) at once. A connection whose query a context
			// cancelled is already closed for pgx, which closes it in the background:
			// it writes Terminate and reads until the server hangs up, for up to 15 s; over
			// TLS that write fails (crypto/tls fails every write after one that timed out),
			// so the server kept the gate all that time and the company's next
			// transactions waited for it
			// (TestService_Run on PostgreSQL: a webhook step after a Run stopped).
			t.conn.Conn().PgConn().Conn().Close()
			t.conn.Conn().Close(ctx) // the pool drops it
		}
		t.conn.Release()
	}
	if t.local != nil {
		t.local.Unlock()
	}
}

// endTimeout bounds the rollback and the release of the gate when a transaction ends;
// past it the connection is dropped, which releases both on the server.
const endTimeout = 10 * time.Second

// shard is the counts shard of a record id.
func shard(id string) int32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int32(h.Sum32() % countShards)
}

const countShards = 16

// Shared reports that several processes may use the store at once: the payments Service
// then leases webhook deliveries (Options.WebhookLease).
func (s *Store) Shared() bool { return true }

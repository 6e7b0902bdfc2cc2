package postgres_test

// Real database faults under the postgres store: backends the server terminates
// (pg_terminate_backend, as a failover or an administrator does) and a connection cut
// around COMMIT by a proxy.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/postgres"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
)

var faultSeq atomic.Int64

// faultURL is a schema of the test's own, with an application_name no other test uses.
func faultURL(t *testing.T) (string, string) {
	t.Helper()
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("connfaults_%d_%d", os.Getpid(), faultSeq.Add(1))
	q := u.Query()
	q.Set("application_name", app)
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String(), app
}

func faultAdmin(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), os.Getenv(pgtest.EnvURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// killApp terminates every backend of app and waits (poll with a deadline) until they
// are gone; it returns how many it terminated.
func killApp(t *testing.T, admin *pgx.Conn, app string) int {
	t.Helper()
	ctx := context.Background()
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("backends of %s still there", app)
		}
		time.Sleep(2 * time.Millisecond) // poll for the backends to go
	}
}

func putThing(s store.Store, company, id string) error {
	return s.Update(context.Background(), func(tx store.Tx) error {
		return tx.Insert("things", company, store.Record{ID: id, Data: []byte("x")})
	})
}

func countThings(t *testing.T, s store.Store, company string, ids ...string) int {
	t.Helper()
	n := 0
	err := s.View(context.Background(), func(tx store.Tx) error {
		n = 0
		for _, id := range ids {
			_, err := tx.Get("things", company, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// withIdleKilled is a store of a schema of the test's own that wrote record "a" of company
// "co1", whose pooled connections, idle since, the server then terminated.
func withIdleKilled(t *testing.T) *postgres.Store {
	t.Helper()
	u, app := faultURL(t)
	s, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := putThing(s, "co1", "a"); err != nil { // a connection now idle in the pool
		t.Fatal(err)
	}
	if killApp(t, faultAdmin(t), app) == 0 {
		t.Fatal("no backend of the store to terminate")
	}
	return s
}

// TestConnFaults_IdleConnectionKilled: the database terminates the store's idle pooled
// connections. The pool hands one out again without checking it, and the next Update's
// first statement fails on it; nothing of it ran anywhere, so the store runs it again on
// another connection (it reported the dead connection, once per dead connection).
func TestConnFaults_IdleConnectionKilled(t *testing.T) {
	is := is.New(t)
	s := withIdleKilled(t)
	err := putThing(s, "co1", "b")
	is.NoErr(err) // Update after the idle connection was killed: nothing had been sent, rerun on a fresh one
	err = s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Get("things", "co1", "a")
		return err
	})
	is.NoErr(err) // later calls succeed
}

// TestConnFaults_IdleConnectionKilledView is the same for View.
func TestConnFaults_IdleConnectionKilledView(t *testing.T) {
	is := is.New(t)
	s := withIdleKilled(t)
	err := s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Get("things", "co1", "a")
		return err
	})
	is.NoErr(err) // View after the idle connection was killed
}

// TestConnFaults_KilledWhileHoldingGate: a connection that holds a company's gate (inside an
// Update, before COMMIT) is terminated: the server rolls the transaction back and frees
// the gate, the store runs the function again on another connection, once, and another
// store (another process) takes the gate at once after it.
func TestConnFaults_KilledWhileHoldingGate(t *testing.T) {
	is := is.New(t)
	u, app := faultURL(t)
	s1, err := postgres.Open(context.Background(), u)
	is.NoErr(err)
	defer s1.Close()
	u2, _ := url.Parse(u)
	q := u2.Query()
	q.Set("application_name", app+"_other")
	u2.RawQuery = q.Encode()
	s2, err := postgres.Open(context.Background(), u2.String())
	is.NoErr(err)
	defer s2.Close()
	admin := faultAdmin(t)

	inside := make(chan struct{})
	killed := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- s1.Update(context.Background(), func(tx store.Tx) error {
			if err := tx.Insert("things", "co1", store.Record{ID: "doomed", Data: []byte("x")}); err != nil {
				return err
			}
			if _, err := tx.Get("things", "co1", "doomed"); err != nil { // gate and transaction held now
				return err
			}
			if first {
				first = false
				close(inside)
				<-killed
			}
			_, err := tx.Get("things", "co1", "doomed")
			return err
		})
	}()
	<-inside
	killApp(t, admin, app)
	close(killed)
	err = <-done
	is.NoErr(err)                                    // run again on another connection
	is.True(s1.Retries() >= 1)                       // and counted
	is.Equal(countThings(t, s2, "co1", "doomed"), 1) // once

	// another process takes the gate at once
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	is.NoErr(s2.Update(ctx, func(tx store.Tx) error {
		return tx.Insert("things", "co1", store.Record{ID: "other", Data: []byte("x")})
	}))
	// and this one, on the same company
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	is.NoErr(s1.Update(ctx2, func(tx store.Tx) error {
		return tx.Insert("things", "co1", store.Record{ID: "after", Data: []byte("x")})
	}))
}

// cutProxy is a TCP proxy to the PostgreSQL server that, when armed, cuts the connection
// at the first CommandComplete "COMMIT" the server sends: before forwarding it (the
// client does not learn that the commit happened) or right after it (the client learns it,
// and nothing after it in the same round trip).
type cutProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	armed   bool
	forward bool
	fired   chan struct{}
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) arm(forward bool) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.forward, p.fired = true, forward, make(chan struct{})
	return p.fired
}

func (p *cutProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { io.Copy(s, c); s.Close() }()
	hdr := make([]byte, 5)
	for {
		if _, err := io.ReadFull(s, hdr); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		body := make([]byte, n)
		if _, err := io.ReadFull(s, body); err != nil {
			return
		}
		if hdr[0] == 'C' && string(body) == "COMMIT\x00" {
			p.mu.Lock()
			if p.armed {
				p.armed = false
				if p.forward {
					c.Write(append(append([]byte(nil), hdr...), body...))
				}
				close(p.fired)
				p.mu.Unlock()
				return // cut: both sides closed
			}
			p.mu.Unlock()
		}
		if _, err := c.Write(append(append([]byte(nil), hdr...), body...)); err != nil {
			return
		}
	}
}

// viaProxy is u with its host replaced by the proxy's.
func viaProxy(t *testing.T, u string, p *cutProxy) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = p.ln.Addr().String()
	return pu.String()
}

// proxiedStores opens a schema of the test's own twice: directly, and through a cutProxy.
func proxiedStores(t *testing.T) (direct, proxied *postgres.Store, p *cutProxy) {
	t.Helper()
	u, _ := faultURL(t)
	direct, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	pu, _ := url.Parse(u)
	p = newCutProxy(t, pu.Host)
	proxied, err = postgres.Open(context.Background(), viaProxy(t, u, p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxied.Close() })
	return direct, proxied, p
}

// TestConnFaults_CommitAckedGateReleaseLost: the server commits and says so, and the
// connection is lost before the answer to the gate's release, sent in the same round
// trip. The Update's writes are committed and the Update knows it (it read COMMIT's
// answer): it reports success (it reported a failure, for work that was done).
func TestConnFaults_CommitAckedGateReleaseLost(t *testing.T) {
	is := is.New(t)
	direct, s, p := proxiedStores(t)

	fired := p.arm(true) // forward COMMIT's answer, then cut
	err := putThing(s, "co1", "x")
	<-fired
	is.Equal(countThings(t, direct, "co1", "x"), 1) // committed
	is.NoErr(err)                                   // and the Update, which read COMMIT's answer, reports success

	is.NoErr(putThing(s, "co1", "y")) // the store recovers, the gate is free
}

// TestConnFaults_AmbiguousCommit: the connection is cut after COMMIT was sent and before its
// answer: the server committed, the Update cannot know. It must fail (it cannot claim
// success), must not run the function again (that would apply it twice), and the store
// must recover.
func TestConnFaults_AmbiguousCommit(t *testing.T) {
	is := is.New(t)
	direct, s, p := proxiedStores(t)

	fired := p.arm(false)
	runs := 0
	err := s.Update(context.Background(), func(tx store.Tx) error {
		runs++
		n, err := tx.Next("ctr", "co1", "n")
		if err != nil {
			return err
		}
		return tx.Insert("things", "co1", store.Record{ID: fmt.Sprint("r", n), Data: []byte("x")})
	})
	<-fired
	is.True(err != nil) // ambiguous: reported as a failure
	is.Equal(runs, 1)   // not rerun
	t.Logf("ambiguous commit error: %v", err)
	is.Equal(countThings(t, direct, "co1", "r1", "r2"), 1) // applied once
	is.NoErr(putThing(s, "co1", "after"))
}

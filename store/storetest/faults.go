package storetest

import (
	"context"
	"errors"
	"sync"

	"github.com/pixfoundry/payments/store"
)

// ErrInjected is the failure a FaultStore injects.
var ErrInjected = errors.New("storetest: injected store fault")

// FaultStore is a store.Store for tests that fails on purpose, once armed (Arm): the
// failAt-th Tx call (any method, in Update or View) returns ErrInjected without reaching
// the inner store; the commitFailAt-th Update commits and then reports ErrInjected (an
// ambiguous commit, as a connection lost during COMMIT gives); the viewFailAt-th View
// fails before it runs. SetRandom and SetOnCall add failures of the test's choosing.
type FaultStore struct {
	inner store.Store

	mu                               sync.Mutex
	armed                            bool
	calls, updates, views            int
	failAt, commitFailAt, viewFailAt int
	fired                            bool
	where                            string
	onCall                           func(method string) error
	random                           func(what string) bool
}

// Faults wraps inner, which the FaultStore closes when it is closed.
func Faults(inner store.Store) *FaultStore { return &FaultStore{inner: inner} }

// Arm starts counting calls, Updates and Views from zero and fails at the given ones (0:
// none).
func (s *FaultStore) Arm(failAt, commitFailAt, viewFailAt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.calls, s.updates, s.views = true, 0, 0, 0
	s.failAt, s.commitFailAt, s.viewFailAt, s.fired, s.where = failAt, commitFailAt, viewFailAt, false, ""
}

// Disarm stops failing and reports what was counted since Arm, whether a failure was
// injected and where the last one was ("Get charges", "commit", "view").
func (s *FaultStore) Disarm() (calls, updates, views int, fired bool, where string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	return s.calls, s.updates, s.views, s.fired, s.where
}

// SetRandom makes random decide, while armed, whether each Tx call ("call"), commit
// ("commit") and View ("view") fails; nil stops it.
func (s *FaultStore) SetRandom(random func(what string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.random = random
}

// SetOnCall shows onCall, while armed, every counted Tx call by its method and collection
// ("Get webhook_keys"); the error it returns is the call's. nil stops it.
func (s *FaultStore) SetOnCall(onCall func(method string) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCall = onCall
}

func (s *FaultStore) tick(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.armed {
		return nil
	}
	s.calls++
	if s.failAt != 0 && s.calls == s.failAt || s.random != nil && s.random("call") {
		s.fired, s.where = true, method
		return ErrInjected
	}
	if s.onCall != nil {
		return s.onCall(method)
	}
	return nil
}

// Update runs fn in an Update of the inner store, with its calls counted.
func (s *FaultStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	n := 0
	if s.armed {
		s.updates++
		n = s.updates
	}
	s.mu.Unlock()
	err := s.inner.Update(ctx, func(tx store.Tx) error { return fn(&faultTx{tx: tx, s: s}) })
	if err == nil && n != 0 {
		s.mu.Lock()
		hit := s.armed && (s.commitFailAt == n || s.random != nil && s.random("commit"))
		if hit {
			s.fired, s.where = true, "commit"
		}
		s.mu.Unlock()
		if hit {
			return ErrInjected
		}
	}
	return err
}

// View runs fn in a View of the inner store, with its calls counted.
func (s *FaultStore) View(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	hit := false
	if s.armed {
		s.views++
		hit = s.viewFailAt == s.views || s.random != nil && s.random("view")
		if hit {
			s.fired, s.where = true, "view"
		}
	}
	s.mu.Unlock()
	if hit {
		return ErrInjected
	}
	return s.inner.View(ctx, func(tx store.Tx) error { return fn(&faultTx{tx: tx, s: s}) })
}

// Close closes the inner store.
func (s *FaultStore) Close() error { return s.inner.Close() }

// faultTx counts its calls on its FaultStore, which may fail them.
type faultTx struct {
	tx store.Tx
	s  *FaultStore
}

func (t *faultTx) Get(c, co, id string) (store.Record, error) {
	if err := t.s.tick("Get " + c); err != nil {
		return store.Record{}, err
	}
	return t.tx.Get(c, co, id)
}

func (t *faultTx) GetByKey(c, co, key string) (store.Record, error) {
	if err := t.s.tick("GetByKey " + c); err != nil {
		return store.Record{}, err
	}
	return t.tx.GetByKey(c, co, key)
}

func (t *faultTx) Insert(c, co string, r store.Record) error {
	if err := t.s.tick("Insert " + c); err != nil {
		return err
	}
	return t.tx.Insert(c, co, r)
}

func (t *faultTx) Put(c, co string, r store.Record) error {
	if err := t.s.tick("Put " + c); err != nil {
		return err
	}
	return t.tx.Put(c, co, r)
}

func (t *faultTx) Delete(c, co, id string) error {
	if err := t.s.tick("Delete " + c); err != nil {
		return err
	}
	return t.tx.Delete(c, co, id)
}

func (t *faultTx) List(c, co string, q store.Query) (store.Page, error) {
	if err := t.s.tick("List " + c); err != nil {
		return store.Page{}, err
	}
	return t.tx.List(c, co, q)
}

func (t *faultTx) Next(c, co, counter string) (uint64, error) {
	if err := t.s.tick("Next " + c); err != nil {
		return 0, err
	}
	return t.tx.Next(c, co, counter)
}

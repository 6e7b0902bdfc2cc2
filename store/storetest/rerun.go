package storetest

import (
	"context"
	"errors"
	"sync"

	"github.com/pixfoundry/payments/store"
)

// RerunStore is a store.Store for tests that holds its callers to the contract that an
// Update function may run more than once. Its Update runs the function once in an Update
// of the inner store that it then rolls back, whatever the function returned, and runs it
// again for real: the second run's result is the Update's. A caller whose function keeps
// state from one run to the next (a flag set in one branch only, a slice appended to, a
// value decoded into a variable declared outside) shows it on this store. View, and the
// inner store's own behaviour, are unchanged.
//
// BeforeRerun makes the next Update call a function between its two runs, with no
// transaction open: a test commits there what another writer would (through this store
// or the inner one), as a serializable database would make the first run lose a race.
type RerunStore struct {
	inner store.Store

	mu   sync.Mutex
	hook func()
}

// Rerun wraps inner, which the RerunStore closes when it is closed.
func Rerun(inner store.Store) *RerunStore { return &RerunStore{inner: inner} }

// errRerun rolls back the first run.
var errRerun = errors.New("storetest: first run rolled back")

// BeforeRerun sets hook to run once, between the two runs of the next Update (whichever
// Update takes it first when several run at once).
func (s *RerunStore) BeforeRerun(hook func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hook
}

// Update runs fn twice, rolling back the first run; see RerunStore.
func (s *RerunStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := s.inner.Update(ctx, func(tx store.Tx) error {
		fn(tx) // its result is dropped: this run is rolled back either way
		return errRerun
	})
	if !errors.Is(err, errRerun) {
		return err // the inner store failed before or after fn (closed, canceled)
	}
	s.mu.Lock()
	hook := s.hook
	s.hook = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.inner.Update(ctx, fn)
}

// View runs fn in a read transaction of the inner store.
func (s *RerunStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.inner.View(ctx, fn)
}

// Close closes the inner store.
func (s *RerunStore) Close() error { return s.inner.Close() }

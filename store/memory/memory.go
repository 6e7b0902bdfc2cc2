// Package memory is an in-memory store.Store: the sandbox and test driver.
//
// Write transactions are serialized by one lock and apply their changes in place with an
// undo log, so a failed or panicking transaction leaves nothing behind; read transactions
// share the lock with each other. Indexes are B-trees, so listing costs grow with the page.
package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/btree"

	"github.com/pixfoundry/payments/store"
)

// Store is an in-memory store.Store. The zero value is not usable; call New.
type Store struct {
	mu     sync.RWMutex
	closed bool

	records  map[string]map[string]store.Record // space -> id -> record
	keys     map[string]map[string]string       // space -> unique key -> id
	indexes  map[string]*btree.BTreeG[entry]    // space + index name -> entries
	counters map[string]uint64                  // space + counter name -> last value
}

type entry struct{ sort, id string }

func lessEntry(a, b entry) bool {
	if a.sort != b.sort {
		return a.sort < b.sort
	}
	return a.id < b.id
}

// New returns an empty store.
func New() *Store {
	return &Store{
		records:  map[string]map[string]store.Record{},
		keys:     map[string]map[string]string{},
		indexes:  map[string]*btree.BTreeG[entry]{},
		counters: map[string]uint64{},
	}
}

var errClosed = errors.New("memory store: closed")

// Update runs fn in a write transaction; see store.Store.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	tx := &tx{s: s, writable: true}
	defer func() {
		if p := recover(); p != nil {
			tx.rollback()
			panic(p)
		}
		if err != nil {
			tx.rollback()
		}
	}()
	return fn(tx)
}

// View runs fn in a read transaction; see store.Store.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	return fn(&tx{s: s})
}

// Close makes later transactions fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

type tx struct {
	s        *Store
	writable bool
	undo     []func()
}

func (t *tx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
}

// space is the map key of a (collection, company): the two joined by a NUL byte, as index
// and counter names are joined to it.
func space(collection, company string) string { return collection + "\x00" + company }

// checkNames refuses the names space and the index and counter keys join with NUL when one
// holds a NUL: company "co\x00x" would otherwise share company "co"'s index "x\x00all", or
// a counter. The store cannot represent them, so they are invalid (store.ErrInvalid) in
// writes and Get; a List of such an index finds nothing, as on the other drivers (a
// client's filter becomes an index name). The Service's own names never hold one. Ids and
// unique keys live in maps of their own space and may hold any byte.
func checkNames(names ...string) error {
	for _, n := range names {
		if strings.IndexByte(n, 0) >= 0 {
			return errNUL
		}
	}
	return nil
}

var errNUL = fmt.Errorf("%w: a collection, company, index or counter name with a NUL byte", store.ErrInvalid)

func clone(r store.Record) store.Record {
	r.Data = bytes.Clone(r.Data)
	r.Keys = slices.Clone(r.Keys)
	r.Indexes = slices.Clone(r.Indexes)
	return r
}

func (t *tx) Get(collection, company, id string) (store.Record, error) {
	if err := checkNames(collection, company); err != nil {
		return store.Record{}, err
	}
	r, ok := t.s.records[space(collection, company)][id]
	if !ok {
		return store.Record{}, store.ErrNotFound
	}
	return clone(r), nil
}

func (t *tx) GetByKey(collection, company, key string) (store.Record, error) {
	if err := checkNames(collection, company); err != nil {
		return store.Record{}, err
	}
	id, ok := t.s.keys[space(collection, company)][key]
	if !ok {
		return store.Record{}, store.ErrNotFound
	}
	return t.Get(collection, company, id)
}

func (t *tx) Insert(collection, company string, r store.Record) error {
	if !t.writable {
		return errReadOnly
	}
	if err := r.Check(collection, company); err != nil {
		return err
	}
	if err := checkIndexNames(collection, company, r); err != nil {
		return err
	}
	sp := space(collection, company)
	if _, ok := t.s.records[sp][r.ID]; ok {
		return &store.ConflictError{Collection: collection, Key: "id:" + r.ID}
	}
	if err := t.checkKeys(collection, sp, r.ID, r.Keys); err != nil {
		return err
	}
	t.add(sp, clone(r))
	return nil
}

func (t *tx) Put(collection, company string, r store.Record) error {
	if !t.writable {
		return errReadOnly
	}
	if err := r.Check(collection, company); err != nil {
		return err
	}
	if err := checkIndexNames(collection, company, r); err != nil {
		return err
	}
	sp := space(collection, company)
	old, ok := t.s.records[sp][r.ID]
	if !ok {
		return store.ErrNotFound
	}
	if err := t.checkKeys(collection, sp, r.ID, r.Keys); err != nil {
		return err
	}
	t.remove(sp, old)
	t.add(sp, clone(r))
	return nil
}

func (t *tx) Delete(collection, company, id string) error {
	if !t.writable {
		return errReadOnly
	}
	if err := checkNames(collection, company); err != nil {
		return err
	}
	sp := space(collection, company)
	old, ok := t.s.records[sp][id]
	if !ok {
		return store.ErrNotFound
	}
	t.remove(sp, old)
	return nil
}

// checkIndexNames is checkNames of collection, company and r's index names.
func checkIndexNames(collection, company string, r store.Record) error {
	if err := checkNames(collection, company); err != nil {
		return err
	}
	for _, ix := range r.Indexes {
		if err := checkNames(ix.Name); err != nil {
			return err
		}
	}
	return nil
}

var errReadOnly = fmt.Errorf("%w: write in a read-only transaction", store.ErrInvalid)

// checkKeys fails if a unique key belongs to a record other than id.
func (t *tx) checkKeys(collection, sp, id string, keys []string) error {
	for _, k := range keys {
		if owner, ok := t.s.keys[sp][k]; ok && owner != id {
			return &store.ConflictError{Collection: collection, Key: k}
		}
	}
	return nil
}

// add writes r with its keys and index entries and records how to undo it.
func (t *tx) add(sp string, r store.Record) {
	recs := t.s.records[sp]
	if recs == nil {
		recs = map[string]store.Record{}
		t.s.records[sp] = recs
	}
	recs[r.ID] = r
	keys := t.s.keys[sp]
	if keys == nil {
		keys = map[string]string{}
		t.s.keys[sp] = keys
	}
	for _, k := range r.Keys {
		keys[k] = r.ID
	}
	for _, ix := range r.Indexes {
		name := sp + "\x00" + ix.Name
		tree := t.s.indexes[name]
		if tree == nil {
			tree = btree.NewG(16, lessEntry)
			t.s.indexes[name] = tree
		}
		tree.ReplaceOrInsert(entry{ix.Sort, r.ID})
	}
	t.undo = append(t.undo, func() { t.removeNow(sp, r) })
}

// remove deletes r with its keys and index entries and records how to undo it.
func (t *tx) remove(sp string, r store.Record) {
	t.removeNow(sp, r)
	t.undo = append(t.undo, func() {
		t.s.records[sp][r.ID] = r
		for _, k := range r.Keys {
			t.s.keys[sp][k] = r.ID
		}
		for _, ix := range r.Indexes {
			t.s.indexes[sp+"\x00"+ix.Name].ReplaceOrInsert(entry{ix.Sort, r.ID})
		}
	})
}

func (t *tx) removeNow(sp string, r store.Record) {
	delete(t.s.records[sp], r.ID)
	for _, k := range r.Keys {
		if t.s.keys[sp][k] == r.ID {
			delete(t.s.keys[sp], k)
		}
	}
	for _, ix := range r.Indexes {
		if tree := t.s.indexes[sp+"\x00"+ix.Name]; tree != nil {
			tree.Delete(entry{ix.Sort, r.ID})
		}
	}
}

func (t *tx) List(collection, company string, q store.Query) (store.Page, error) {
	if err := q.Check(); err != nil {
		return store.Page{}, err
	}
	if checkNames(collection, company, q.Index) != nil {
		return store.Page{}, nil // nothing is stored under such a name (Insert and Put refuse it)
	}
	sp := space(collection, company)
	tree := t.s.indexes[sp+"\x00"+q.Index]
	if tree == nil {
		return store.Page{}, nil
	}
	var page store.Page
	skip := q.Skip
	visit := func(e entry) bool {
		if q.From != "" && e.sort < q.From || q.To != "" && e.sort >= q.To {
			return false // the walk starts inside the range, so it has left it
		}
		if skip > 0 {
			skip--
			return true
		}
		if len(page.Records) >= q.Limit {
			return false
		}
		page.Records = append(page.Records, clone(t.s.records[sp][e.id]))
		return true
	}
	lo, hi := entry{sort: q.From}, entry{sort: q.To}
	switch {
	case q.Desc && q.To != "":
		tree.DescendLessOrEqual(hi, visit)
	case q.Desc:
		tree.Descend(visit)
	case q.From != "":
		tree.AscendGreaterOrEqual(lo, visit)
	default:
		tree.Ascend(visit)
	}
	switch {
	case q.NoTotal:
		return page, nil
	case q.From == "" && q.To == "":
		page.Total = tree.Len()
		return page, nil
	}
	count := func(entry) bool { page.Total++; return true }
	switch {
	case q.From != "" && q.To != "":
		tree.AscendRange(lo, hi, count)
	case q.From != "":
		tree.AscendGreaterOrEqual(lo, count)
	default:
		tree.AscendLessThan(hi, count)
	}
	return page, nil
}

func (t *tx) Next(collection, company, counter string) (uint64, error) {
	if !t.writable {
		return 0, errReadOnly
	}
	if err := checkNames(collection, company, counter); err != nil {
		return 0, err
	}
	name := space(collection, company) + "\x00" + counter
	prev := t.s.counters[name]
	t.s.counters[name] = prev + 1
	t.undo = append(t.undo, func() { t.s.counters[name] = prev })
	return prev + 1, nil
}

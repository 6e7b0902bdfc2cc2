// Package storetest is the conformance suite every store.Store driver passes.
//
// A driver's test is a few lines:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{Open: func(t *testing.T) store.Store { return memory.New() }})
//	}
//
// For the code above a store, Rerun wraps any driver so that every Update function runs
// twice, the first run rolled back: tests of callers run on it to show that their
// functions may run more than once, as the contract says.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// Harness tells the suite how to make stores of one driver.
type Harness struct {
	// Open returns a new, empty store. The suite closes it.
	Open func(t *testing.T) store.Store
	// Reopen, if set, closes s and opens the same data again (persistent drivers).
	Reopen func(t *testing.T, s store.Store) store.Store
}

// Run runs every conformance test against the driver.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"NotFound", testNotFound},
		{"Conflict", testConflict},
		{"Rollback", testRollback},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"PutAndDelete", testPutAndDelete},
		{"List", testList},
		{"ListRange", testListRange},
		{"CompanyIsolation", testCompanyIsolation},
		{"Counter", testCounter},
		{"ReadOnlyView", testReadOnlyView},
		{"TimeRoundTrip", testTimeRoundTrip},
		{"ConcurrentReadModifyWrite", testConcurrentRMW},
		{"ConcurrentFailuresIsolated", testConcurrentFailures},
		{"ConflictKeepsTransaction", testConflictKeepsTransaction},
		{"ViewSnapshot", testViewSnapshot},
		{"NextCommitOrder", testNextCommitOrder},
		{"NoPhantoms", testNoPhantoms},
		{"Reopen", testReopen},
		{"PutChanges", testPutChanges},
		{"KeyBytes", testKeyBytes},
		{"NULInNames", testNULInNames},
		{"AfterClose", testAfterClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

const (
	coll    = "things"
	company = "co1"
)

var ctx = context.Background()

func open(t *testing.T, h Harness) store.Store {
	t.Helper()
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

func rec(id string, keys ...string) store.Record {
	return store.Record{
		ID:      id,
		Data:    []byte(`{"id":"` + id + `"}`),
		Keys:    keys,
		Indexes: []store.Index{{Name: "all", Sort: id}},
	}
}

func insert(t *testing.T, s store.Store, company string, rs ...store.Record) {
	t.Helper()
	err := s.Update(ctx, func(tx store.Tx) error {
		for _, r := range rs {
			if err := tx.Insert(coll, company, r); err != nil {
				return err
			}
		}
		return nil
	})
	is.New(t).NoErr(err) // insert fixture
}

func get(s store.Store, company, id string) (store.Record, error) {
	var r store.Record
	err := s.View(ctx, func(tx store.Tx) error {
		var err error
		r, err = tx.Get(coll, company, id)
		return err
	})
	return r, err
}

func list(t *testing.T, s store.Store, company string, q store.Query) ([]string, int) {
	t.Helper()
	var page store.Page
	err := s.View(ctx, func(tx store.Tx) error {
		var err error
		page, err = tx.List(coll, company, q)
		return err
	})
	is.New(t).NoErr(err) // list
	ids := []string{}
	for _, r := range page.Records {
		ids = append(ids, r.ID)
	}
	return ids, page.Total
}

func testNotFound(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	_, err := get(s, company, "nope")
	is.True(errors.Is(err, store.ErrNotFound)) // Get of a missing id
	err = s.View(ctx, func(tx store.Tx) error { _, err := tx.GetByKey(coll, company, "k:nope"); return err })
	is.True(errors.Is(err, store.ErrNotFound)) // GetByKey of a missing key
	err = s.Update(ctx, func(tx store.Tx) error { return tx.Put(coll, company, rec("nope")) })
	is.True(errors.Is(err, store.ErrNotFound)) // Put of a missing record
	err = s.Update(ctx, func(tx store.Tx) error { return tx.Delete(coll, company, "nope") })
	is.True(errors.Is(err, store.ErrNotFound)) // Delete of a missing record
}

func testConflict(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, company, rec("a", "corr:1"), rec("b", "corr:2"))

	err := s.Update(ctx, func(tx store.Tx) error { return tx.Insert(coll, company, rec("a")) })
	is.True(errors.Is(err, store.ErrConflict)) // duplicate id

	err = s.Update(ctx, func(tx store.Tx) error { return tx.Insert(coll, company, rec("c", "corr:1")) })
	is.True(errors.Is(err, store.ErrConflict)) // duplicate unique key
	var ce *store.ConflictError
	is.True(errors.As(err, &ce))  // conflict names the key
	is.Equal(ce.Key, "corr:1")    // the key that is taken
	_, err = get(s, company, "c") // nothing of the failed insert remains
	is.True(errors.Is(err, store.ErrNotFound))

	err = s.Update(ctx, func(tx store.Tx) error { return tx.Put(coll, company, rec("b", "corr:1")) })
	is.True(errors.Is(err, store.ErrConflict)) // Put taking another record's key

	// A record listing a key or an index entry twice is invalid, and leaves the transaction
	// usable: the next Insert in it commits.
	twice := rec("d", "corr:4", "corr:4")
	twiceIx := rec("e")
	twiceIx.Indexes = append(twiceIx.Indexes, twiceIx.Indexes[0])
	err = s.Update(ctx, func(tx store.Tx) error {
		is.True(errors.Is(tx.Insert(coll, company, twice), store.ErrInvalid))   // key twice
		is.True(errors.Is(tx.Insert(coll, company, twiceIx), store.ErrInvalid)) // index entry twice
		return tx.Insert(coll, company, rec("f", "corr:4"))
	})
	is.NoErr(err) // the transaction went on
	_, err = get(s, company, "d")
	is.True(errors.Is(err, store.ErrNotFound)) // nothing of the invalid records
	_, err = get(s, company, "f")
	is.NoErr(err)

	insert(t, s, "co2", rec("x", "corr:1")) // the same key in another company is free
	err = s.View(ctx, func(tx store.Tx) error {
		r, err := tx.GetByKey(coll, company, "corr:1")
		is.NoErr(err)
		is.Equal(r.ID, "a") // key still resolves to its owner
		return nil
	})
	is.NoErr(err)
}

var errBoom = errors.New("boom")

func testRollback(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, company, rec("keep", "k:keep"))
	err := s.Update(ctx, func(tx store.Tx) error {
		is.NoErr(tx.Insert(coll, company, rec("new", "k:new")))
		changed := rec("keep", "k:changed")
		changed.Data = []byte(`{"changed":true}`)
		is.NoErr(tx.Put(coll, company, changed))
		if _, err := tx.Next(coll, company, "seq"); err != nil {
			return err
		}
		r, err := tx.Get(coll, company, "new") // a transaction sees its own writes
		is.NoErr(err)
		is.Equal(r.ID, "new")
		return errBoom
	})
	is.True(errors.Is(err, errBoom)) // the function's error comes back

	_, err = get(s, company, "new")
	is.True(errors.Is(err, store.ErrNotFound)) // insert rolled back
	r, err := get(s, company, "keep")
	is.NoErr(err)
	is.Equal(string(r.Data), `{"id":"keep"}`) // put rolled back
	err = s.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetByKey(coll, company, "k:keep")
		is.NoErr(err) // old key restored
		_, err = tx.GetByKey(coll, company, "k:changed")
		is.True(errors.Is(err, store.ErrNotFound)) // new key rolled back
		_, err = tx.GetByKey(coll, company, "k:new")
		is.True(errors.Is(err, store.ErrNotFound)) // inserted key rolled back
		return nil
	})
	is.NoErr(err)
	ids, total := list(t, s, company, store.Query{Index: "all", Limit: 10})
	is.Equal(ids, []string{"keep"}) // index entries rolled back
	is.Equal(total, 1)              // count rolled back
	err = s.Update(ctx, func(tx store.Tx) error {
		n, err := tx.Next(coll, company, "seq")
		is.Equal(n, uint64(1)) // counter increment rolled back
		return err
	})
	is.NoErr(err)
}

func testRollbackOnPanic(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	func() {
		defer func() { is.True(recover() != nil) }() // the panic reaches the caller
		s.Update(ctx, func(tx store.Tx) error {
			is.NoErr(tx.Insert(coll, company, rec("p", "k:p")))
			panic("boom")
		})
	}()
	_, err := get(s, company, "p")
	is.True(errors.Is(err, store.ErrNotFound)) // nothing written before the panic remains
	insert(t, s, company, rec("after"))        // the store still works
}

func testPutAndDelete(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, company, rec("a", "k:a1"))
	err := s.Update(ctx, func(tx store.Tx) error {
		r := rec("a", "k:a2")
		r.Indexes = []store.Index{{Name: "all", Sort: "z"}, {Name: "status:done", Sort: "a"}}
		return tx.Put(coll, company, r)
	})
	is.NoErr(err)
	err = s.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetByKey(coll, company, "k:a1")
		is.True(errors.Is(err, store.ErrNotFound)) // the dropped key is free
		r, err := tx.GetByKey(coll, company, "k:a2")
		is.NoErr(err)
		is.Equal(r.Keys, []string{"k:a2"}) // keys come back with the record
		return nil
	})
	is.NoErr(err)
	ids, total := list(t, s, company, store.Query{Index: "status:done", Limit: 10})
	is.Equal(ids, []string{"a"}) // record moved into the new index
	is.Equal(total, 1)
	err = s.Update(ctx, func(tx store.Tx) error { return tx.Delete(coll, company, "a") })
	is.NoErr(err)
	_, total = list(t, s, company, store.Query{Index: "status:done", Limit: 10})
	is.Equal(total, 0) // delete removes index entries
	_, total = list(t, s, company, store.Query{Index: "all", Limit: 10})
	is.Equal(total, 0)
	insert(t, s, company, rec("b", "k:a2")) // delete frees unique keys
}

// testPutChanges: a Put that keeps some keys and index entries, drops some and adds some
// leaves exactly the new ones, with counts to match, however often it is repeated.
func testPutChanges(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	ix := func(pairs ...string) []store.Index {
		var out []store.Index
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, store.Index{Name: pairs[i], Sort: pairs[i+1]})
		}
		return out
	}
	a := rec("a", "k:1", "k:2")
	a.Indexes = ix("all", "s1", "status:a", "s1", "x", "s1")
	b := rec("b", "k:b")
	b.Indexes = ix("all", "s0", "status:a", "s0", "x", "s3")
	insert(t, s, company, a, b)

	a.Keys = []string{"k:1", "k:3"}                          // keeps k:1, drops k:2, adds k:3
	a.Indexes = ix("all", "s1", "status:b", "s1", "x", "s2") // keeps all, moves status, re-sorts x
	a.Data = []byte(`{"id":"a","v":2}`)
	for range 2 { // the second Put changes nothing more
		is.NoErr(s.Update(ctx, func(tx store.Tx) error {
			if err := tx.Put(coll, company, a); err != nil {
				return err
			}
			return tx.Put(coll, company, a) // and twice in one transaction
		}))
	}
	is.NoErr(s.View(ctx, func(tx store.Tx) error {
		for k, want := range map[string]bool{"k:1": true, "k:2": false, "k:3": true, "k:b": true} {
			_, err := tx.GetByKey(coll, company, k)
			is.Equal(err == nil, want) // keys kept, dropped and added
		}
		r, err := tx.Get(coll, company, "a")
		is.NoErr(err)
		is.Equal(string(r.Data), `{"id":"a","v":2}`) // the new data
		is.Equal(r.Indexes, a.Indexes)               // and indexes
		return nil
	}))
	for _, c := range []struct {
		q     store.Query
		ids   []string
		total int
	}{
		{store.Query{Index: "all", Limit: 10}, []string{"b", "a"}, 2},
		{store.Query{Index: "status:a", Limit: 10}, []string{"b"}, 1},
		{store.Query{Index: "status:b", Limit: 10}, []string{"a"}, 1},
		{store.Query{Index: "x", Limit: 10}, []string{"a", "b"}, 2},
		{store.Query{Index: "x", From: "s2", To: "s3", Limit: 10}, []string{"a"}, 1},
		{store.Query{Index: "x", To: "s2", Limit: 10}, []string{}, 0},
	} {
		ids, total := list(t, s, company, c.q)
		is.Equal(ids, c.ids)     // the entries
		is.Equal(total, c.total) // and the count
	}
}

func testList(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	var rs []store.Record
	for i := range 25 {
		r := rec(fmt.Sprintf("id%02d", i))
		r.Indexes = []store.Index{{Name: "all", Sort: fmt.Sprintf("t%02d", i/2)}} // pairs share a sort value
		if i%3 == 0 {
			r.Indexes = append(r.Indexes, store.Index{Name: "three", Sort: r.Indexes[0].Sort})
		}
		rs = append(rs, r)
	}
	insert(t, s, company, rs...)

	ids, total := list(t, s, company, store.Query{Index: "all", Limit: 4})
	is.Equal(total, 25)                                     // total ignores limit
	is.Equal(ids, []string{"id00", "id01", "id02", "id03"}) // ascending by sort, then id
	ids, _ = list(t, s, company, store.Query{Index: "all", Skip: 22, Limit: 10})
	is.Equal(ids, []string{"id22", "id23", "id24"}) // last page is short
	ids, _ = list(t, s, company, store.Query{Index: "all", Desc: true, Limit: 3})
	is.Equal(ids, []string{"id24", "id23", "id22"}) // descending
	ids, _ = list(t, s, company, store.Query{Index: "all", Desc: true, Skip: 23, Limit: 3})
	is.Equal(ids, []string{"id01", "id00"}) // descending last page
	ids, total = list(t, s, company, store.Query{Index: "all", Skip: 30, Limit: 3})
	is.Equal(len(ids), 0) // skip past the end
	is.Equal(total, 25)
	ids, total = list(t, s, company, store.Query{Index: "three", Limit: 100})
	is.Equal(total, 9) // a secondary index holds only its records
	is.Equal(ids[0], "id00")
	is.Equal(ids[8], "id24")
	_, total = list(t, s, company, store.Query{Index: "none", Limit: 1})
	is.Equal(total, 0) // an unknown index is empty
	ids, total = list(t, s, company, store.Query{Index: "all"})
	is.Equal(len(ids), 0) // limit 0 returns only the count
	is.Equal(total, 25)
}

func testListRange(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	var rs []store.Record
	for i := range 10 {
		r := rec(fmt.Sprintf("id%d", i))
		r.Indexes = []store.Index{{Name: "all", Sort: fmt.Sprintf("t%d", i)}}
		rs = append(rs, r)
	}
	insert(t, s, company, rs...)
	ids, total := list(t, s, company, store.Query{Index: "all", From: "t3", To: "t7", Limit: 10})
	is.Equal(ids, []string{"id3", "id4", "id5", "id6"}) // From inclusive, To exclusive
	is.Equal(total, 4)
	ids, total = list(t, s, company, store.Query{Index: "all", From: "t3", To: "t7", Desc: true, Skip: 1, Limit: 2})
	is.Equal(ids, []string{"id5", "id4"}) // descending within the range
	is.Equal(total, 4)
	ids, total = list(t, s, company, store.Query{Index: "all", From: "t8", Limit: 10})
	is.Equal(ids, []string{"id8", "id9"}) // open end
	is.Equal(total, 2)
	ids, total = list(t, s, company, store.Query{Index: "all", To: "t2", Desc: true, Limit: 10})
	is.Equal(ids, []string{"id1", "id0"}) // open start, descending
	is.Equal(total, 2)
	for _, q := range []store.Query{
		{Index: "all", From: "t3", To: "t7", Limit: 2},
		{Index: "all", From: "t8", Limit: 1},
		{Index: "all", Desc: true, Skip: 1, Limit: 3},
	} {
		want, _ := list(t, s, company, q)
		q.NoTotal = true
		ids, total = list(t, s, company, q)
		is.Equal(ids, want) // NoTotal: the same records
		is.Equal(total, 0)  // and no count
	}
}

func testCompanyIsolation(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, "co1", rec("a", "k:a"))
	insert(t, s, "co2", rec("b", "k:b"))
	_, err := get(s, "co2", "a")
	is.True(errors.Is(err, store.ErrNotFound)) // another company's id is not found
	err = s.View(ctx, func(tx store.Tx) error { _, err := tx.GetByKey(coll, "co2", "k:a"); return err })
	is.True(errors.Is(err, store.ErrNotFound)) // nor its keys
	ids, total := list(t, s, "co2", store.Query{Index: "all", Limit: 10})
	is.Equal(ids, []string{"b"}) // lists hold only the company's records
	is.Equal(total, 1)
	insert(t, s, "co2", rec("a")) // the same id in another company is a different record
}

func testCounter(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	var got []uint64
	for range 3 {
		var n uint64
		err := s.Update(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.Next(coll, company, "seq") // assigned, not appended: the function may run again
			return err
		})
		is.NoErr(err)
		got = append(got, n)
	}
	is.Equal(got, []uint64{1, 2, 3}) // counters count from 1
	err := s.Update(ctx, func(tx store.Tx) error {
		n, err := tx.Next(coll, "co2", "seq")
		is.Equal(n, uint64(1)) // counters are per company
		return err
	})
	is.NoErr(err)
}

func testReadOnlyView(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, company, rec("b"))
	err := s.View(ctx, func(tx store.Tx) error { return tx.Insert(coll, company, rec("a")) })
	is.True(errors.Is(err, store.ErrInvalid)) // writes fail in a view
	_, err = get(s, company, "a")
	is.True(errors.Is(err, store.ErrNotFound)) // and leave nothing
	// Refused as writes before anything is looked at: not a conflict or a missing record.
	err = s.View(ctx, func(tx store.Tx) error { return tx.Insert(coll, company, rec("b")) })
	is.True(errors.Is(err, store.ErrInvalid)) // not ErrConflict
	err = s.View(ctx, func(tx store.Tx) error { return tx.Put(coll, company, rec("c")) })
	is.True(errors.Is(err, store.ErrInvalid)) // not ErrNotFound
	err = s.View(ctx, func(tx store.Tx) error { return tx.Delete(coll, company, "c") })
	is.True(errors.Is(err, store.ErrInvalid)) // not ErrNotFound
}

// A record past store.MaxKeyBytes is refused as invalid before anything of it is written,
// and the transaction goes on; one at the bound is stored, found and listed, with data no
// compression shrinks (PostgreSQL compresses what it can).
func testKeyBytes(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	room := store.MaxKeyBytes - len(coll) - len(company)
	long := func(n int) string { // n bytes of pseudo-random printable text
		b := make([]byte, n)
		x := uint32(2463534242)
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte('!' + x%94)
		}
		return string(b)
	}
	over := []store.Record{
		{ID: long(room + 1), Data: []byte(`{}`)},
		{ID: "k", Data: []byte(`{}`), Keys: []string{long(room + 1)}},
		{ID: "i", Data: []byte(`{}`), Indexes: []store.Index{{Name: "all", Sort: long(room - len("all") - len("i") + 1)}}},
	}
	err := s.Update(ctx, func(tx store.Tx) error {
		for _, r := range over {
			if err := tx.Insert(coll, company, r); !errors.Is(err, store.ErrInvalid) {
				return fmt.Errorf("insert past the bound: %v, want ErrInvalid", err)
			}
		}
		if err := tx.Put(coll, company, store.Record{ID: "x", Data: []byte(`{}`), Keys: []string{long(room + 1)}}); !errors.Is(err, store.ErrInvalid) {
			return fmt.Errorf("put past the bound: %v, want ErrInvalid", err)
		}
		return tx.Insert(coll, company, rec("after")) // the transaction goes on
	})
	is.NoErr(err)
	for _, id := range []string{"k", "i"} {
		_, err = get(s, company, id)
		is.True(errors.Is(err, store.ErrNotFound)) // nothing of a refused record
	}
	ids, total := list(t, s, company, store.Query{Index: "all", Limit: 10})
	is.Equal(ids, []string{"after"}) // nor an index entry
	is.Equal(total, 1)

	key, sort := long(room), long(room-len("all")-len("at"))
	insert(t, s, company, store.Record{ID: "at", Data: []byte(`{}`), Keys: []string{key}, Indexes: []store.Index{{Name: "all", Sort: sort}}})
	err = s.View(ctx, func(tx store.Tx) error {
		r, err := tx.GetByKey(coll, company, key)
		if err != nil {
			return err
		}
		if r.ID != "at" {
			return fmt.Errorf("found %q by its key", r.ID)
		}
		return nil
	})
	is.NoErr(err) // at the bound: stored and found by its key
	ids, _ = list(t, s, company, store.Query{Index: "all", Limit: 10})
	is.True(slices.Contains(ids, "at") && len(ids) == 2) // and listed
}

func testTimeRoundTrip(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	sp := time.FixedZone("BRT", -3*3600)
	in := time.Date(2026, 11, 22, 9, 30, 0, 123_000_000, sp)
	data, err := json.Marshal(struct{ At time.Time }{in.UTC()})
	is.NoErr(err)
	insert(t, s, company, store.Record{ID: "t", Data: data, Indexes: []store.Index{{Name: "all", Sort: in.UTC().Format(time.RFC3339Nano)}}})
	r, err := get(s, company, "t")
	is.NoErr(err)
	var out struct{ At time.Time }
	is.NoErr(json.Unmarshal(r.Data, &out))
	is.True(out.At.Equal(in))                // same instant
	is.Equal(out.At.Location(), time.UTC)    // in UTC
	is.Equal(out.At.Nanosecond(), 123000000) // milliseconds kept
}

func testConcurrentRMW(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, company, store.Record{ID: "n", Data: []byte("0")})
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := s.Update(ctx, func(tx store.Tx) error {
					r, err := tx.Get(coll, company, "n")
					if err != nil {
						return err
					}
					n, err := strconv.Atoi(string(r.Data))
					if err != nil {
						return err
					}
					r.Data = []byte(strconv.Itoa(n + 1))
					return tx.Put(coll, company, r)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // no transaction failed
	}
	r, err := get(s, company, "n")
	is.NoErr(err)
	is.Equal(string(r.Data), strconv.Itoa(workers*each)) // no update was lost
}

func testReopen(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("driver is not persistent")
	}
	is := is.New(t)
	s := h.Open(t)
	insert(t, s, company, rec("a", "k:a"), rec("b"))
	err := s.Update(ctx, func(tx store.Tx) error { _, err := tx.Next(coll, company, "seq"); return err })
	is.NoErr(err)
	s = h.Reopen(t, s)
	t.Cleanup(func() { s.Close() })
	r, err := get(s, company, "a")
	is.NoErr(err)
	is.Equal(string(r.Data), `{"id":"a"}`) // data survives close and reopen
	err = s.View(ctx, func(tx store.Tx) error { _, err := tx.GetByKey(coll, company, "k:a"); return err })
	is.NoErr(err) // keys survive
	ids, total := list(t, s, company, store.Query{Index: "all", Limit: 10})
	is.Equal(ids, []string{"a", "b"}) // indexes survive
	is.Equal(total, 2)                // counts survive
	err = s.Update(ctx, func(tx store.Tx) error {
		n, err := tx.Next(coll, company, "seq")
		is.Equal(n, uint64(2)) // counters survive
		return err
	})
	is.NoErr(err)
}

// testConcurrentFailures runs many concurrent transactions, some of which write and then
// fail: a driver that commits several calls together must discard only the failed ones.
func testConcurrentFailures(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	const n = 64
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Update(ctx, func(tx store.Tx) error {
				if err := tx.Insert(coll, company, rec(fmt.Sprintf("r%02d", i), fmt.Sprintf("k:%d", i%(n/2)))); err != nil {
					return err
				}
				if i%4 == 0 {
					return errBoom // wrote, then failed
				}
				return nil
			})
		}()
	}
	wg.Wait()
	committed := map[string]bool{}
	for i, err := range results {
		id := fmt.Sprintf("r%02d", i)
		_, gerr := get(s, company, id)
		switch {
		case i%4 == 0:
			is.True(errors.Is(err, errBoom))            // the failure reaches its caller
			is.True(errors.Is(gerr, store.ErrNotFound)) // and its writes are gone
		case err == nil:
			is.NoErr(gerr) // a success is committed
			committed[fmt.Sprintf("k:%d", i%(n/2))] = true
		default:
			is.True(errors.Is(err, store.ErrConflict)) // the only other outcome: the shared key was taken
			is.True(errors.Is(gerr, store.ErrNotFound))
		}
	}
	_, total := list(t, s, company, store.Query{Index: "all"})
	is.Equal(total, len(committed)) // exactly one winner per unique key that a success took
}

// Names holding a NUL byte are kept apart or refused as invalid, never joined into
// another company's records, index or counter.
func testNULInNames(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.Insert(coll, "co\x00x", rec("a")); err != nil && !errors.Is(err, store.ErrInvalid) {
			return err
		}
		if _, err := tx.Next(coll, "co\x00seq", "x"); err != nil && !errors.Is(err, store.ErrInvalid) {
			return err
		}
		return nil
	})
	is.NoErr(err)
	err = s.Update(ctx, func(tx store.Tx) error {
		page, err := tx.List(coll, "co", store.Query{Index: "x\x00all", Limit: 10})
		if err == nil && (page.Total != 0 || len(page.Records) != 0) {
			return fmt.Errorf("company co's index x\\x00all lists %d records of company co\\x00x", page.Total)
		}
		if err != nil && !errors.Is(err, store.ErrInvalid) {
			return err
		}
		n, err := tx.Next(coll, "co", "seq\x00x")
		if err == nil && n != 1 {
			return fmt.Errorf("counter seq\\x00x of company co starts at %d, shared with company co\\x00seq's x", n)
		}
		if err != nil && !errors.Is(err, store.ErrInvalid) {
			return err
		}
		if _, err := tx.Get(coll+"\x00co", "x", "a"); err == nil {
			return errors.New("collection things\\x00co, company x finds collection things, company co\\x00x's record")
		}
		return nil
	})
	is.NoErr(err)
}

// Transactions after Close fail, even one whose function makes no call.
func testAfterClose(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	is.NoErr(s.Close())
	is.True(s.Update(ctx, func(store.Tx) error { return nil }) != nil) // Update after Close
	is.True(s.View(ctx, func(store.Tx) error { return nil }) != nil)   // View after Close
}

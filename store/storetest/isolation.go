package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// The cases in this file pin the isolation the payments Service relies on (see the
// package doc of store): a failed write leaves its transaction usable, a View is one
// snapshot, Next values become visible in commit order, and reads in an Update protect
// what they did not find as well as what they found.

// failures collects what goroutines found wrong; the test reports it from its own
// goroutine.
type failures struct {
	mu   sync.Mutex
	msgs []string
}

func (f *failures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func (f *failures) check(t *testing.T) {
	t.Helper()
	for _, m := range f.msgs {
		t.Error(m)
	}
}

// testConflictKeepsTransaction: an Insert or Put that fails with ErrConflict (or
// ErrNotFound, ErrInvalid) writes nothing, not even the part of the record that did not
// conflict, and the transaction carries on and commits.
func testConflictKeepsTransaction(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	insert(t, s, company, rec("a", "k:a"), rec("b", "k:b"))
	err := s.Update(ctx, func(tx store.Tx) error {
		err := tx.Insert(coll, company, rec("a"))
		is.True(errors.Is(err, store.ErrConflict)) // a taken id
		err = tx.Insert(coll, company, rec("c", "k:c", "k:a"))
		is.True(errors.Is(err, store.ErrConflict)) // a free key, then a taken one
		changed := rec("b", "k:b2", "k:a")
		changed.Data = []byte(`{"changed":true}`)
		changed.Indexes = []store.Index{{Name: "all", Sort: "z"}, {Name: "extra", Sort: "x"}}
		err = tx.Put(coll, company, changed)
		is.True(errors.Is(err, store.ErrConflict)) // Put taking another record's key
		err = tx.Put(coll, company, rec("nope"))
		is.True(errors.Is(err, store.ErrNotFound)) // Put of a missing record
		err = tx.Insert(coll, company, rec("e", "k:e", ""))
		is.True(errors.Is(err, store.ErrInvalid))        // a record no store can hold
		return tx.Insert(coll, company, rec("d", "k:d")) // the transaction goes on
	})
	is.NoErr(err) // and commits

	_, err = get(s, company, "d")
	is.NoErr(err) // the write after the failures is committed
	_, err = get(s, company, "c")
	is.True(errors.Is(err, store.ErrNotFound)) // the failed insert left no record
	r, err := get(s, company, "b")
	is.NoErr(err)
	is.Equal(string(r.Data), `{"id":"b"}`) // the failed put left the record as it was
	is.Equal(r.Keys, []string{"k:b"})
	err = s.View(ctx, func(tx store.Tx) error {
		for key, want := range map[string]string{"k:a": "a", "k:b": "b", "k:d": "d"} {
			r, err := tx.GetByKey(coll, company, key)
			is.NoErr(err)
			is.Equal(r.ID, want) // every key still resolves to its owner
		}
		for _, key := range []string{"k:c", "k:b2", "k:e"} {
			_, err := tx.GetByKey(coll, company, key)
			is.True(errors.Is(err, store.ErrNotFound)) // no key of a failed write was taken
		}
		return nil
	})
	is.NoErr(err)
	ids, total := list(t, s, company, store.Query{Index: "all", Limit: 10})
	is.Equal(ids, []string{"a", "b", "d"}) // the failed put did not move b
	is.Equal(total, 3)
	_, total = list(t, s, company, store.Query{Index: "extra", Limit: 10})
	is.Equal(total, 0)                     // nor add it to an index
	insert(t, s, company, rec("c", "k:c")) // the id and key of the failed insert are free
}

// testViewSnapshot: a View reads one committed state. A writer moves two records and an
// index together, one step per Update, while readers read them in separate calls of long
// Views: every reader sees the three agree.
func testViewSnapshot(t *testing.T, h Harness) {
	s := open(t, h)
	insert(t, s, company, store.Record{ID: "x", Data: []byte("0")}, store.Record{ID: "y", Data: []byte("0")})
	const steps, readers = 60, 3
	done := make(chan struct{})
	var f failures
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 1; i <= steps; i++ {
			err := s.Update(ctx, func(tx store.Tx) error {
				v := []byte(strconv.Itoa(i))
				if err := tx.Put(coll, company, store.Record{ID: "x", Data: v}); err != nil {
					return err
				}
				step := store.Record{ID: fmt.Sprintf("step%03d", i), Indexes: []store.Index{{Name: "steps", Sort: string(v)}}}
				if err := tx.Insert(coll, company, step); err != nil {
					return err
				}
				return tx.Put(coll, company, store.Record{ID: "y", Data: v})
			})
			if err != nil {
				f.add("step %d: %v", i, err)
				return
			}
		}
	}()
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for finished := false; !finished; {
				select {
				case <-done:
					finished = true // one more read, of the final state
				default:
				}
				var x, y string
				var total int
				err := s.View(ctx, func(tx store.Tx) error {
					r, err := tx.Get(coll, company, "x")
					if err != nil {
						return err
					}
					x = string(r.Data)
					runtime.Gosched() // let the writer commit, if the driver allows it, mid-View
					page, err := tx.List(coll, company, store.Query{Index: "steps"})
					if err != nil {
						return err
					}
					total = page.Total
					runtime.Gosched()
					if r, err = tx.Get(coll, company, "y"); err != nil {
						return err
					}
					y = string(r.Data)
					return nil
				})
				switch {
				case err != nil:
					f.add("view: %v", err)
					return
				case x != y || x != strconv.Itoa(total):
					f.add("one View saw x=%s, %d steps, y=%s: parts of different commits", x, total, y)
					return
				case finished && total != steps:
					f.add("a View after the last commit saw %d steps, want %d", total, steps)
				}
			}
		}()
	}
	wg.Wait()
	f.check(t)
}

// testNextCommitOrder: values from Next become visible in commit order. Writers each take
// the next value of a counter and insert a record indexed by it (some then fail, so their
// value is taken again); readers follow a cursor over that index, as outbox readers do,
// and must see every committed value, in order, with no gap to skip.
func testNextCommitOrder(t *testing.T, h Harness) {
	is := is.New(t)
	s := open(t, h)
	const writers, each, readers = 8, 20, 2
	seqID := func(n uint64) string { return fmt.Sprintf("%020d", n) }
	var f failures
	committed := make([]int, writers)
	var wwg sync.WaitGroup
	for w := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for j := range each {
				err := s.Update(ctx, func(tx store.Tx) error {
					n, err := tx.Next(coll, company, "log")
					if err != nil {
						return err
					}
					id := seqID(n)
					if err := tx.Insert(coll, company, store.Record{ID: id, Data: []byte(id), Indexes: []store.Index{{Name: "log", Sort: id}}}); err != nil {
						return err
					}
					if (w+j)%5 == 0 {
						return errBoom // took a value and wrote, then failed
					}
					return nil
				})
				switch {
				case err == nil:
					committed[w]++
				case !errors.Is(err, errBoom):
					f.add("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	seen := make([]uint64, readers)
	var rwg sync.WaitGroup
	for g := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			var cursor uint64
			for {
				finished := false
				select {
				case <-done:
					finished = true // a read that finds nothing now has reached the end
				default:
				}
				var page store.Page
				err := s.View(ctx, func(tx store.Tx) error {
					var err error
					page, err = tx.List(coll, company, store.Query{Index: "log", From: seqID(cursor + 1), Limit: 10})
					return err
				})
				if err != nil {
					f.add("reader %d: %v", g, err)
					return
				}
				for _, r := range page.Records {
					if r.ID != seqID(cursor+1) {
						f.add("reader %d after %d read %s: a value committed before a smaller one", g, cursor, r.ID)
						return
					}
					cursor++
				}
				if len(page.Records) == 0 {
					if finished {
						seen[g] = cursor
						return
					}
					runtime.Gosched()
				}
			}
		}()
	}
	wwg.Wait()
	close(done)
	rwg.Wait()
	f.check(t)
	total := 0
	for _, n := range committed {
		total += n
	}
	is.Equal(total, writers*each*4/5) // every fifth write failed
	for _, n := range seen {
		is.Equal(n, uint64(total)) // every reader followed the cursor to the end
	}
}

// testNoPhantoms: what an Update read stays as it read it until it commits, misses and
// List ranges included. Concurrent Updates that each insert only after reading that the
// record is missing, or that a range holds fewer than a limit, never insert twice or
// beyond the limit, and never meet a conflict on what they found missing.
func testNoPhantoms(t *testing.T, h Harness) {
	t.Run("Miss", func(t *testing.T) {
		is := is.New(t)
		s := open(t, h)
		const workers = 32
		var f failures
		inserted := make([]bool, workers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := s.Update(ctx, func(tx store.Tx) error {
					inserted[i] = false // afresh: the function may run again
					var err error
					var r store.Record
					if i%2 == 0 {
						_, err = tx.Get(coll, company, "once")
						r = rec("once", "k:id")
					} else {
						_, err = tx.GetByKey(coll, company, "k:once")
						r = rec(fmt.Sprintf("w%02d", i), "k:once")
					}
					if !errors.Is(err, store.ErrNotFound) {
						return err // found (nil), or a failure
					}
					runtime.Gosched() // let the others read, if the driver allows it, before this writes
					inserted[i] = true
					return tx.Insert(coll, company, r)
				})
				if err != nil {
					f.add("worker %d: %v (a miss it read was filled before it committed)", i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		f.check(t)
		byID, byKey := 0, 0
		for i, ok := range inserted {
			if ok && i%2 == 0 {
				byID++
			} else if ok {
				byKey++
			}
		}
		is.Equal(byID, 1)  // one insert after a missing id
		is.Equal(byKey, 1) // one insert after a missing key
		_, total := list(t, s, company, store.Query{Index: "all"})
		is.Equal(total, 2)
	})
	t.Run("Range", func(t *testing.T) {
		is := is.New(t)
		s := open(t, h)
		const workers, limit = 32, 5
		var f failures
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := s.Update(ctx, func(tx store.Tx) error {
					if i%4 == 0 { // outside the range: must not count
						return tx.Insert(coll, company, store.Record{ID: fmt.Sprintf("o%02d", i), Indexes: []store.Index{{Name: "slots", Sort: fmt.Sprintf("c%02d", i)}}})
					}
					page, err := tx.List(coll, company, store.Query{Index: "slots", From: "b", To: "c"})
					if err != nil || page.Total >= limit {
						return err
					}
					runtime.Gosched() // let the others count, if the driver allows it, before this writes
					return tx.Insert(coll, company, store.Record{ID: fmt.Sprintf("s%02d", i), Indexes: []store.Index{{Name: "slots", Sort: fmt.Sprintf("b%02d", i)}}})
				})
				if err != nil {
					f.add("worker %d: %v", i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		f.check(t)
		_, total := list(t, s, company, store.Query{Index: "slots", From: "b", To: "c"})
		is.Equal(total, limit) // filled to the limit, never beyond
		_, total = list(t, s, company, store.Query{Index: "slots", From: "c"})
		is.Equal(total, workers/4) // the inserts outside the range all went in
	})
}

package bolt_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// Calls that share a group commit read what the calls before them wrote, though a read
// of the same record earlier in the batch is cached: concurrent read-increment-writes of
// one record lose no increment, a record replaced under a new unique key is found by the
// new key and not the old, and a deleted one is gone.
func TestGroupCommit_ReadsSeeEarlierWrites(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "test.db"))
	is.NoErr(err)
	defer s.Close()
	put := func(tx store.Tx, n int, insert bool) error {
		r := store.Record{ID: "x", Data: []byte(strconv.Itoa(n)), Keys: []string{"n:" + strconv.Itoa(n)}}
		if insert {
			return tx.Insert("c", "co", r)
		}
		return tx.Put("c", "co", r)
	}
	is.NoErr(s.Update(ctx, func(tx store.Tx) error { return put(tx, 0, true) }))

	const calls = 300
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			err := s.Update(ctx, func(tx store.Tx) error {
				r, err := tx.Get("c", "co", "x")
				if err != nil {
					return err
				}
				n, _ := strconv.Atoi(string(r.Data))
				if _, err := tx.GetByKey("c", "co", "n:"+strconv.Itoa(n)); err != nil {
					return err // the current key finds it
				}
				if err := put(tx, n+1, false); err != nil {
					return err
				}
				if _, err := tx.GetByKey("c", "co", "n:"+strconv.Itoa(n)); !errors.Is(err, store.ErrNotFound) {
					return errors.New("the old key still finds the record")
				}
				r, err = tx.Get("c", "co", "x")
				if err != nil || string(r.Data) != strconv.Itoa(n+1) {
					return errors.New("a read after the write does not see it")
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	is.NoErr(s.View(ctx, func(tx store.Tx) error {
		r, err := tx.Get("c", "co", "x")
		is.Equal(string(r.Data), strconv.Itoa(calls)) // every increment
		return err
	}))

	is.NoErr(s.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Get("c", "co", "x"); err != nil {
			return err
		}
		if err := tx.Delete("c", "co", "x"); err != nil {
			return err
		}
		_, err := tx.Get("c", "co", "x")
		is.True(errors.Is(err, store.ErrNotFound)) // deleted: gone, though read before
		return nil
	}))
}

// openWithRecord is a new store holding record "x" of collection "c" and company "co", with
// the unique key "k"; it is closed when the test ends.
func openWithRecord(t *testing.T) (*bolt.Store, store.Record) {
	t.Helper()
	is := is.New(t)
	s, err := bolt.Open(filepath.Join(t.TempDir(), "test.db"))
	is.NoErr(err)
	t.Cleanup(func() { s.Close() })
	r := store.Record{ID: "x", Data: []byte(`{"n":1}`), Keys: []string{"k"}, Indexes: []store.Index{{Name: "all", Sort: "1"}}}
	is.NoErr(s.Update(context.Background(), func(tx store.Tx) error { return tx.Insert("c", "co", r) }))
	return s, r
}

// Unchanged (store.DataComparer) tells a record stored with the data it was read with
// from one changed or deleted since, by id or by unique key, in the transaction's own
// writes too, and a record that is still missing from one that appeared.
func TestTx_Unchanged(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, r := openWithRecord(t)
	var got []bool
	is.NoErr(s.Update(ctx, func(tx store.Tx) error { // is stays out: the function runs on the writer's goroutine
		dc := tx.(store.DataComparer)
		got = append(got,
			dc.Unchanged("c", "co", "x", false, true, []byte(`{"n":1}`)), // as read
			dc.Unchanged("c", "co", "k", true, true, []byte(`{"n":1}`)),  // by its key
			dc.Unchanged("c", "co", "x", false, true, []byte(`{"n":2}`)), // other data
			dc.Unchanged("c", "co", "x", false, false, nil),              // read as missing
			dc.Unchanged("c", "co", "y", false, false, nil),              // missing still
			dc.Unchanged("c", "co", "other", true, false, nil),           // no such key still
			dc.Unchanged("c", "co", "y", false, true, []byte(`{"n":1}`))) // read, since gone
		r.Data = []byte(`{"n":2}`)
		if err := tx.Put("c", "co", r); err != nil {
			return err
		}
		got = append(got,
			dc.Unchanged("c", "co", "x", false, true, []byte(`{"n":1}`)), // changed by this transaction
			dc.Unchanged("c", "co", "k", true, true, []byte(`{"n":2}`)))  // as now
		if err := tx.Delete("c", "co", "x"); err != nil {
			return err
		}
		got = append(got,
			dc.Unchanged("c", "co", "x", false, true, []byte(`{"n":2}`)), // deleted
			dc.Unchanged("c", "co", "k", true, false, nil))               // its key gone with it
		return nil
	}))
	is.Equal(got, []bool{true, true, false, false, true, true, false, false, true, false, true})
}

// IDByKey (store.KeyResolver) names the record holding a unique key, in the transaction's
// own writes too, and says ErrNotFound for a key no record holds, in a read-only
// transaction as in a writing one.
func TestTx_IDByKey(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, _ := openWithRecord(t)
	type answer struct {
		id    string
		found bool
	}
	ask := func(tx store.Tx, key string) answer {
		id, err := tx.(store.KeyResolver).IDByKey("c", "co", key)
		return answer{id, !errors.Is(err, store.ErrNotFound)}
	}
	var got []answer
	is.NoErr(s.View(ctx, func(tx store.Tx) error {
		got = append(got, ask(tx, "k"), ask(tx, "other"))
		return nil
	}))
	is.NoErr(s.Update(ctx, func(tx store.Tx) error { // is stays out: the function runs on the writer's goroutine
		y := store.Record{ID: "y", Data: []byte(`{"n":2}`), Keys: []string{"k2"}}
		if err := tx.Insert("c", "co", y); err != nil {
			return err
		}
		got = append(got, ask(tx, "k2")) // written by this transaction
		if err := tx.Delete("c", "co", "x"); err != nil {
			return err
		}
		got = append(got, ask(tx, "k")) // deleted by it
		return nil
	}))
	is.NoErr(s.View(ctx, func(tx store.Tx) error {
		_, err := tx.(store.KeyResolver).IDByKey("c", "other company", "k2")
		got = append(got, answer{"", !errors.Is(err, store.ErrNotFound)}) // another company's key is not seen
		return nil
	}))
	is.Equal(got, []answer{{"x", true}, {"", false}, {"y", true}, {"", false}, {"", false}})
}

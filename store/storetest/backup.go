package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// Backup is the conformance test of store.Backuper for a driver that offers it: open
// returns a new, empty store; restore opens a snapshot written by its Backup. The suite
// closes both.
//
// A snapshot taken while writers commit holds whole transactions only (each writes a pair
// of records, and a restored store has both or neither), and everything committed before
// the backup began: records with their keys, index entries and counts, and counters,
// per company.
func Backup(t *testing.T, open func(t *testing.T) store.Store, restore func(t *testing.T, snapshot io.Reader) store.Store) {
	is := is.New(t)
	ctx := context.Background()
	s := open(t)
	defer s.Close()
	b, ok := s.(store.Backuper)
	is.True(ok) // the driver offers Backup

	// Committed before the backup.
	for _, co := range []string{"a", "b"} {
		err := s.Update(ctx, func(tx store.Tx) error {
			for i := range 5 {
				id := co + strconv.Itoa(i)
				if err := tx.Insert("things", co, store.Record{ID: id, Data: []byte("data-" + id), Keys: []string{"key:" + id},
					Indexes: []store.Index{{Name: "all", Sort: fmt.Sprintf("%03d", i)}}}); err != nil {
					return err
				}
			}
			_, err := tx.Next("things", co, "seq")
			return err
		})
		is.NoErr(err)
	}

	// Writers commit pairs while the backup runs.
	var n, committed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := n.Add(1)
				err := s.Update(ctx, func(tx store.Tx) error {
					for _, half := range []string{"x", "y"} {
						id := fmt.Sprintf("w%d-%d-%s", w, i, half)
						if err := tx.Insert("pairs", "a", store.Record{ID: id, Data: []byte(id), Indexes: []store.Index{{Name: "all", Sort: id}}}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				committed.Add(1)
			}
		})
	}
	for committed.Load() < 20 && !t.Failed() { // some pairs committed before the backup starts
		if err := s.View(ctx, func(store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	before := committed.Load()
	var snap bytes.Buffer
	err := b.Backup(ctx, &snap)
	close(stop)
	wg.Wait()
	is.NoErr(err)

	r := restore(t, &snap)
	defer r.Close()
	err = r.View(ctx, func(tx store.Tx) error {
		for _, co := range []string{"a", "b"} {
			rec, err := tx.GetByKey("things", co, "key:"+co+"3")
			is.NoErr(err)                              // unique keys restored
			is.Equal(string(rec.Data), "data-"+co+"3") // record bytes restored
			p, err := tx.List("things", co, store.Query{Index: "all", Desc: true, Limit: 2})
			is.NoErr(err)
			is.Equal(p.Total, 5)              // counts restored, per company
			is.Equal(p.Records[0].ID, co+"4") // index order restored
		}
		p, err := tx.List("pairs", "a", store.Query{Index: "all", Limit: 1 << 20})
		is.NoErr(err)
		is.True(p.Total >= int(2*before)) // the pairs committed before the backup are in it
		ids := map[string]bool{}
		for _, rec := range p.Records {
			ids[rec.ID] = true
		}
		for id := range ids {
			other := id[:len(id)-1] + map[byte]string{'x': "y", 'y': "x"}[id[len(id)-1]]
			if !ids[other] {
				t.Errorf("the snapshot has %s without %s: not one committed state", id, other)
			}
		}
		_, err = tx.Get("pairs", "b", "w0-1-x")
		is.Equal(err, store.ErrNotFound) // nothing crosses companies
		return nil
	})
	is.NoErr(err)
	err = r.Update(ctx, func(tx store.Tx) error {
		v, err := tx.Next("things", "b", "seq")
		is.NoErr(err)
		is.Equal(v, uint64(2)) // counters go on from the snapshot
		return nil
	})
	is.NoErr(err)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	is.True(b.Backup(canceled, io.Discard) != nil) // a canceled backup fails
}

package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/storetest"
)

func TestBackup(t *testing.T) {
	storetest.Backup(t,
		func(t *testing.T) store.Store {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "live.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		func(t *testing.T, snap io.Reader) store.Store {
			path := filepath.Join(t.TempDir(), "restored.db")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, snap); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := bolt.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
}

// TestBackup_WritesGoOn: a backup holds a read transaction for as long as its writer
// takes, and bbolt cannot grow its memory map while one is open: a commit that needs a
// larger map waits for the backup, and every reader and writer waits behind that commit.
// The store maps ahead of the file (mapSize), so the writes a busy database makes during
// a backup do not need a larger map. Here the backup's writer blocks until the test has
// written 4 MB, then the copy is read back whole, as it was.
func TestBackup_WritesGoOn(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "live.db"))
	is.NoErr(err)
	defer s.Close()
	put := func(id string, size int) error {
		return s.Update(ctx, func(tx store.Tx) error {
			return tx.Insert("blobs", "co", store.Record{ID: id, Data: bytes.Repeat([]byte{'x'}, size)})
		})
	}
	is.NoErr(put("before", 1000))

	pr, pw := io.Pipe()
	defer pr.Close() // before s.Close, when the test fails early: ends the backup
	backup := make(chan error, 1)
	go func() { backup <- s.Backup(ctx, pw); pw.Close() }()
	is.NoErr(put("first", 10)) // the backup's read transaction may start before or after this

	written := make(chan error, 1)
	go func() {
		// 4 MB: bbolt's own map of a new file is 32 KB, and grows to a power of two
		// above the file's size when a commit needs more.
		for i := range 100 {
			if err := put(fmt.Sprint("during-", i), 40_000); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	select {
	case err := <-written:
		is.NoErr(err)
	case <-time.After(time.Minute): // a deadline for a failure, not a wait for time to pass
		pr.CloseWithError(errors.New("stalled")) // ends the backup, and so the stall
		<-written
		t.Fatal("writes stalled behind the backup's read transaction")
	}
	snap, err := io.ReadAll(pr)
	is.NoErr(err)
	is.NoErr(<-backup)
	path := filepath.Join(t.TempDir(), "copy.db")
	is.NoErr(os.WriteFile(path, snap, 0o600))
	cp, err := bolt.Open(path)
	is.NoErr(err)
	defer cp.Close()
	is.NoErr(cp.View(ctx, func(tx store.Tx) error {
		_, err := tx.Get("blobs", "co", "before")
		is.NoErr(err) // in the copy
		_, err = tx.Get("blobs", "co", "during-0")
		is.True(errors.Is(err, store.ErrNotFound)) // written after the copy's commit
		return nil
	}))
}

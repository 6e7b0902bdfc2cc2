package bolt

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// TestOpen_InUse: a file another store holds open (bbolt's flock conflicts even within one
// process) is an error that says the file is in use, not a bare "timeout".
func TestOpen_InUse(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "payments.db")
	first, err := Open(path)
	is.NoErr(err)

	_, err = open(path, time.Millisecond, Options{})                             // a short wait: the lock will not be released
	is.True(err != nil)                                                          // refused
	is.True(strings.Contains(err.Error(), path+" is in use by another process")) // saying why
	is.True(!strings.HasSuffix(err.Error(), "timeout"))                          // not bbolt's bare word

	is.NoErr(first.Close())
	again, err := open(path, time.Millisecond, Options{})
	is.NoErr(err) // free again once the holder closes it
	is.NoErr(again.Close())
}

// TestClose_SavesFreelist: commits leave bbolt's freelist out of the file, so that an open
// after a crash rebuilds it by a scan; a clean Close writes it, so that the next open reads
// it. Read off the file's current meta page (bbolt's format: two meta pages, the one with
// the larger txid current; in each, after the 16-byte page header, the freelist's page id
// at 48 and the txid at 64).
func TestClose_SavesFreelist(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "payments.db")
	freelist := func() uint64 {
		t.Helper()
		b, err := os.ReadFile(path)
		is.NoErr(err)
		var best, fl uint64
		for page := range 2 {
			m := b[page*os.Getpagesize():]
			if txid := binary.LittleEndian.Uint64(m[64:]); txid >= best {
				best, fl = txid, binary.LittleEndian.Uint64(m[48:])
			}
		}
		return fl
	}
	const none = ^uint64(0) // bbolt's PgidNoFreelist
	s, err := Open(path)
	is.NoErr(err)
	for i := range 3 {
		is.NoErr(s.Update(context.Background(), func(tx store.Tx) error {
			return tx.Insert("c", "co", store.Record{ID: strconv.Itoa(i), Data: []byte("x")})
		}))
	}
	is.Equal(freelist(), none) // while open: not written
	is.NoErr(s.Close())
	is.True(freelist() != none) // a clean stop wrote it
	is.NoErr(s.Close())         // closing again is harmless

	s, err = Open(path)
	is.NoErr(err)
	is.NoErr(s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.Get("c", "co", "2")
		return err // what was there before, read back
	}))
	is.NoErr(s.Update(context.Background(), func(tx store.Tx) error {
		return tx.Insert("c", "co", store.Record{ID: "3", Data: []byte("y")})
	}))
	is.Equal(freelist(), none) // commits after the open leave it out again
	is.NoErr(s.Close())
}

// TestOpen_CutShort: a copy of a store cut short (a download or copy that stopped) is
// refused with an error saying so; bbolt alone maps it and dies of SIGBUS reading the
// missing pages. The whole copy opens, as does a file that is not a database at all, which
// bbolt refuses itself.
func TestOpen_CutShort(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "payments.db")
	st, err := Open(path)
	is.NoErr(err)
	err = st.Update(context.Background(), func(tx store.Tx) error {
		for i := range 400 {
			r := store.Record{ID: strconv.Itoa(i), Data: []byte(strings.Repeat("x", 500)), Indexes: []store.Index{{Name: "all", Sort: strconv.Itoa(i)}}}
			if err := tx.Insert("things", "co", r); err != nil {
				return err
			}
		}
		return nil
	})
	is.NoErr(err)
	is.NoErr(st.Close())
	whole, err := os.ReadFile(path)
	is.NoErr(err)
	is.True(len(whole) > 100_000)

	cut := filepath.Join(dir, "cut.db")
	is.NoErr(os.WriteFile(cut, whole[:40_000], 0o600))
	_, err = Open(cut)
	is.True(err != nil)                                 // refused, not a crash
	is.True(strings.Contains(err.Error(), "cut short")) // saying why

	copied := filepath.Join(dir, "copy.db")
	is.NoErr(os.WriteFile(copied, whole, 0o600))
	again, err := Open(copied)
	is.NoErr(err) // the whole copy is fine
	is.NoErr(again.Close())

	text := filepath.Join(dir, "text.db")
	is.NoErr(os.WriteFile(text, []byte(strings.Repeat("not a database\n", 1000)), 0o600))
	_, err = Open(text)
	is.True(err != nil) // bbolt's own refusal
	is.True(!strings.Contains(err.Error(), "cut short"))
}

package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

func TestBackup(t *testing.T) {
	storetest.Backup(t,
		func(t *testing.T) store.Store { return memory.New() },
		func(t *testing.T, snap io.Reader) store.Store {
			s, err := memory.Restore(snap)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
}

func TestRestore_NotASnapshot(t *testing.T) {
	is := is.New(t)
	_, err := memory.Restore(strings.NewReader("SQLite format 3\x00"))
	is.True(err != nil) // not a snapshot

	s := memory.New()
	is.NoErr(s.Update(context.Background(), func(tx store.Tx) error {
		return tx.Insert("c", "co", store.Record{ID: "1", Data: []byte("x")})
	}))
	var buf bytes.Buffer
	is.NoErr(s.Backup(context.Background(), &buf))
	_, err = memory.Restore(bytes.NewReader(buf.Bytes()[:buf.Len()-1]))
	is.True(err != nil) // a snapshot cut short is an error
}

// TestRestore_Damaged: a snapshot with any one byte flipped either is refused or restores
// the very same records: gob decoded many a damaged stream into other values without an
// error, and the store restored from them held records nobody wrote (a charge whose
// identifier was cut short made its readers panic).
func TestRestore_Damaged(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := memory.New()
	is.NoErr(s.Update(ctx, func(tx store.Tx) error {
		for _, id := range []string{"a", "b"} {
			r := store.Record{ID: id, Data: []byte(`{"identifier":"6b02d94000018b51d87cab94763d799d"}`),
				Keys: []string{"k:" + id}, Indexes: []store.Index{{Name: "all", Sort: "2026-" + id}}}
			if err := tx.Insert("charges", "co", r); err != nil {
				return err
			}
		}
		_, err := tx.Next("events", "co", "seq")
		return err
	}))
	var buf bytes.Buffer
	is.NoErr(s.Backup(ctx, &buf))
	want := dump(t, s)
	restored := 0
	for i := range buf.Len() {
		b := bytes.Clone(buf.Bytes())
		b[i] ^= 0xff
		got, err := memory.Restore(bytes.NewReader(b))
		if err != nil {
			continue
		}
		restored++
		if d := dump(t, got); d != want {
			t.Fatalf("byte %d flipped: restored other records:\n%s\nwant:\n%s", i, d, want)
		}
	}
	t.Logf("%d of %d damaged snapshots restored, each to the same records", restored, buf.Len())
}

// dump is every record of s in the collection "charges" of company "co", in index order,
// and the counter, as text.
func dump(t *testing.T, s store.Store) string {
	t.Helper()
	var out strings.Builder
	err := s.View(context.Background(), func(tx store.Tx) error {
		p, err := tx.List("charges", "co", store.Query{Index: "all", Limit: 10})
		if err != nil {
			return err
		}
		for _, r := range p.Records {
			fmt.Fprintf(&out, "%s %s %v %v\n", r.ID, r.Data, r.Keys, r.Indexes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

package memory_test

import (
	"bytes"
	"context"
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

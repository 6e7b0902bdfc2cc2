package memory

import (
	"bytes"
	"context"
	"encoding/gob"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// TestRestore_Version1: a snapshot of the first version, without the checksum, still
// restores.
func TestRestore_Version1(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	is.NoErr(enc.Encode(snapshotHeader{Format: snapshotFormat, Version: 1, Records: 1, Counters: 1}))
	is.NoErr(enc.Encode(snapshotRecord{Collection: "c", Company: "co", Record: store.Record{ID: "1", Data: []byte("x"), Keys: []string{"k:1"}}}))
	is.NoErr(enc.Encode(snapshotCounter{Name: "c\x00co\x00seq", Value: 7}))
	s, err := Restore(&buf)
	is.NoErr(err)
	is.NoErr(s.View(context.Background(), func(tx store.Tx) error {
		r, err := tx.GetByKey("c", "co", "k:1")
		is.NoErr(err)
		is.Equal(string(r.Data), "x")
		return nil
	}))
}

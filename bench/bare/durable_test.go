package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"go.etcd.io/bbolt"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/bolt"
)

// written is what one create changed in a bbolt file: each key added or given a new value,
// as "bucket key-shape" (shape: hex runs and digits replaced, so that ids and times of the
// same form compare equal), with the new value's size.
type written map[string]int

// value is what snapshot keeps of a key's value: a digest and the size.
type value struct {
	sum  [sha256.Size]byte
	size int
}

// snapshot is every key of the file at path, as "bucket\x00key", with its value.
func snapshot(t *testing.T, path string) map[string]value {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]value{}
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				out[string(name)+"\x00"+string(k)] = value{sha256.Sum256(v), len(v)}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var hexRun, digit = regexp.MustCompile(`[0-9a-f]{4,}`), regexp.MustCompile(`[0-9]`)

// diff is what changed from before to after (see written).
func diff(before, after map[string]value) written {
	w := written{}
	for k, v := range after {
		if old, ok := before[k]; ok && old == v {
			continue
		}
		bucket, key, _ := strings.Cut(k, "\x00")
		shape := digit.ReplaceAllString(hexRun.ReplaceAllString(strings.ReplaceAll(key, "\x00\x01", " "), "<hex>"), "9")
		w[bucket+" "+shape] = v.size
	}
	return w
}

// The -keys floor writes, for a create of the load script's, the keys the server writes
// for the same create, of the same shapes, with values of about the same sizes: the floor
// stays the floor of what the server keeps as the server changes.
func TestKeysFloorWritesWhatTheServerWrites(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	create := func(i int) chargeRequest {
		return chargeRequest{CorrelationID: fmt.Sprintf("load-1-1-%d", i), Value: 1990, Comment: "Pedido"}
	}

	// The server's writes, through the library on a bolt file, set up as the server is by
	// default (the sandbox bank, the adapter's links): a first create (which also sets
	// the company up), then the one measured.
	srvPath := filepath.Join(t.TempDir(), "server.db")
	serverCreate := func(i int) {
		st, err := bolt.Open(srvPath)
		is.NoErr(err)
		svc, err := payments.New(st, payments.Options{Rail: payments.NewSandboxRail(nil, 0)})
		is.NoErr(err)
		httpadapter.New(svc, httpadapter.Options{BaseURL: "http://127.0.0.1:8080"}) // its links, as the server's

		req := create(i)
		_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: req.CorrelationID, Value: req.Value, Comment: req.Comment})
		is.NoErr(err)
		is.NoErr(svc.Close())
		is.NoErr(st.Close())
	}
	serverCreate(1)
	before := snapshot(t, srvPath)
	serverCreate(2)
	server := diff(before, snapshot(t, srvPath))

	floorPath := filepath.Join(t.TempDir(), "floor.db")
	floorCreate := func(i int) {
		d, err := openDurable(floorPath, true)
		is.NoErr(err)
		rec := httptest.NewRecorder()
		d.create(rec, create(i))
		is.Equal(rec.Code, 200)
		is.NoErr(d.close())
	}
	floorCreate(1)
	before = snapshot(t, floorPath)
	floorCreate(2)
	floor := diff(before, snapshot(t, floorPath))

	is.Equal(slices.Sorted(maps.Keys(floor)), slices.Sorted(maps.Keys(server))) // the same keys, of the same shapes
	for k, n := range server {
		m := floor[k]
		if d := m - n; d*10 > n || -d*10 > n {
			t.Errorf("%q: the floor writes %d bytes, the server %d", k, m, n)
		}
	}
}

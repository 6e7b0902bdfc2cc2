package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/storetest"
)

func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		opts bolt.Options
	}{
		{"group", bolt.Options{}},
		{"unbatched", bolt.Options{Unbatched: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, storetest.Harness{
				Open: func(t *testing.T) store.Store {
					s, err := bolt.OpenWith(filepath.Join(t.TempDir(), "test.db"), c.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				Reopen: func(t *testing.T, s store.Store) store.Store {
					path := s.(*bolt.Store).Path()
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s2, err := bolt.OpenWith(path, c.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s2
				},
			})
		})
	}
}

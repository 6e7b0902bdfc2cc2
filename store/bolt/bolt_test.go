package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) store.Store {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "test.db"))
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
			s2, err := bolt.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}

package bolt_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

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

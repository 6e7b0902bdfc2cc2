package bolt_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// OnCommit sees every committed call once, in batches, and no failed one, with what each
// commit wrote and the time writing it took.
func TestOpenWith_OnCommit(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var commits, calls int
	s, err := bolt.OpenWith(filepath.Join(t.TempDir(), "obs.db"), bolt.Options{OnCommit: func(c bolt.CommitInfo) {
		mu.Lock()
		defer mu.Unlock()
		commits++
		calls += c.Calls
		if c.Calls < 1 || c.Duration <= 0 {
			t.Errorf("commit of %d calls in %v", c.Calls, c.Duration)
		}
		if c.Written < 4096 || c.Write <= 0 || c.Write > c.Duration { // a page at least, written within the commit
			t.Errorf("commit wrote %d bytes in %v of its %v", c.Written, c.Write, c.Duration)
		}
	}})
	is.NoErr(err)
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			err := s.Update(context.Background(), func(tx store.Tx) error {
				return tx.Insert("c", "co", store.Record{ID: strconv.Itoa(i), Data: []byte("x")})
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	err = s.Update(context.Background(), func(tx store.Tx) error {
		return tx.Insert("c", "co", store.Record{ID: "1", Data: []byte("again")}) // taken: rolls back
	})
	is.True(err != nil) // a conflict
	mu.Lock()
	defer mu.Unlock()
	is.Equal(calls, 50)                    // each committed call counted once; the failed one not
	is.True(commits >= 1 && commits <= 50) // grouped into at most one commit per call
}

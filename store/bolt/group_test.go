package bolt_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// A call that fails having written nothing (a refusal, a taken id) does not roll back the
// batch it is in: every call runs exactly once, the others commit, and each failure gets
// its own error. Before, each such failure rolled the batch back and ran the rest again,
// and ran itself again alone. A call that writes nothing commits nothing.
func TestGroupCommit_FailureWithoutWrites(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	commits, committed := 0, 0
	s, err := bolt.OpenWith(filepath.Join(t.TempDir(), "g.db"), bolt.Options{OnCommit: func(c bolt.CommitInfo) {
		mu.Lock()
		defer mu.Unlock()
		commits++
		committed += c.Calls
	}})
	is.NoErr(err)
	defer s.Close()
	is.NoErr(s.Update(ctx, func(tx store.Tx) error { return tx.Insert("c", "co", store.Record{ID: "taken", Data: []byte("x")}) }))

	errRefused := errors.New("refused")
	hold := make(chan struct{})
	var held sync.WaitGroup
	held.Go(func() { // keeps the writer busy while the others queue behind it
		is.NoErr(s.Update(ctx, func(tx store.Tx) error {
			<-hold
			return tx.Insert("c", "co", store.Record{ID: "first", Data: []byte("x")})
		}))
	})
	const n = 30
	runs := make([]atomic.Int32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Update(ctx, func(tx store.Tx) error {
				runs[i].Add(1)
				switch i % 3 {
				case 0:
					return errRefused // refused before writing
				case 1:
					return tx.Insert("c", "co", store.Record{ID: "taken", Data: []byte("y")}) // a conflict, found before writing
				default:
					return tx.Insert("c", "co", store.Record{ID: strconv.Itoa(i), Data: []byte("x")})
				}
			})
		})
	}
	close(hold)
	held.Wait()
	wg.Wait()
	for i := range n {
		is.Equal(runs[i].Load(), int32(1)) // every call ran once, in whatever batch
		switch i % 3 {
		case 0:
			is.True(errors.Is(errs[i], errRefused)) // its own error
		case 1:
			is.True(errors.Is(errs[i], store.ErrConflict))
		default:
			is.NoErr(errs[i]) // committed alongside the failures
			_, err := getRecord(s, strconv.Itoa(i))
			is.NoErr(err)
		}
	}
	mu.Lock()
	is.Equal(committed, 2+n/3) // "taken", "first" and the inserts; no failure counted
	before := commits
	mu.Unlock()

	var read []byte
	is.NoErr(s.Update(ctx, func(tx store.Tx) error { // reads only
		r, err := tx.Get("c", "co", "taken")
		read = r.Data
		return err
	}))
	is.Equal(string(read), "x")
	mu.Lock()
	is.Equal(commits, before) // nothing written, nothing committed
	mu.Unlock()
}

func getRecord(s store.Store, id string) (store.Record, error) {
	var r store.Record
	err := s.View(context.Background(), func(tx store.Tx) error {
		var err error
		r, err = tx.Get("c", "co", id)
		return err
	})
	return r, err
}

// A function's panic reaches its caller, whose goroutine is not the writer's where the
// function ran: the value re-raised says where it panicked (the writer's stack of that
// moment), and a runtime error stays one for errors.As. The crash harness once met a nil
// pointer in a transaction function whose stack showed only the caller waiting.
func TestGroupCommit_PanicSaysWhere(t *testing.T) {
	is := is.New(t)
	s, err := bolt.Open(filepath.Join(t.TempDir(), "p.db"))
	is.NoErr(err)
	defer s.Close()
	var p any
	func() {
		defer func() { p = recover() }()
		_ = s.Update(context.Background(), panicsOnNil)
	}()
	err, ok := p.(error)
	is.True(ok) // the panic is an error
	var re runtime.Error
	is.True(errors.As(err, &re))                                      // the runtime error panicked with
	is.True(strings.Contains(err.Error(), "nil pointer"))             // its message
	is.True(strings.Contains(err.Error(), "bolt_test.panicsOnNil"))   // the function where it happened
	is.NoErr(s.Update(context.Background(), func(tx store.Tx) error { // the writer goes on
		return tx.Insert("c", "co", store.Record{ID: "after", Data: []byte("x")})
	}))
}

// panicsOnNil is a transaction function that dereferences a nil pointer.
func panicsOnNil(store.Tx) error {
	var r *store.Record
	return r.Check("c", "co")
}

package bolt

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/pixfoundry/payments/store"
)

// Group commit. bbolt has one writer and syncs the file twice per commit, which caps plain
// Update at about two thousand commits a second here. Concurrent Update calls are therefore
// queued to one writer goroutine that runs every call waiting, up to MaxBatch, in one bbolt
// transaction and one commit. There is no timer: a lone call commits at once, and a batch
// forms only from calls that arrived while the previous commit was on disk.
//
// Calls in a batch run one after another and each sees the writes of those before it, so
// the batch is equivalent to running them serially. When one returns an error (or panics),
// the whole bbolt transaction rolls back; that call is then run alone, so that only its own
// writes are discarded, and the others run again as a new batch. A function may therefore
// run more than once, which the store contract allows.

// MaxBatch is the most calls one commit carries.
const MaxBatch = 1000

var errClosed = errors.New("bolt store: closed")

type call struct {
	fn   func(store.Tx) error
	done chan result
}

type result struct {
	err      error
	panicked any // the value a function panicked with, re-raised in its caller
}

type writer struct {
	db    *bbolt.DB
	calls chan *call
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	onCommit func(CommitInfo) // Options.OnCommit; nil when not observed
}

func newWriter(db *bbolt.DB, onCommit func(CommitInfo)) *writer {
	w := &writer{db: db, onCommit: onCommit, calls: make(chan *call), quit: make(chan struct{})}
	w.wg.Add(1)
	go w.loop()
	return w
}

// do runs fn in the next batch and returns its result, re-raising its panic.
func (w *writer) do(fn func(store.Tx) error) error {
	c := &call{fn: fn, done: make(chan result, 1)}
	select {
	case w.calls <- c:
	case <-w.quit:
		return errClosed
	}
	r := <-c.done
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

// stop ends the writer once the batch in progress has finished.
func (w *writer) stop() {
	w.once.Do(func() { close(w.quit) })
	w.wg.Wait()
}

func (w *writer) loop() {
	defer w.wg.Done()
	for {
		var first *call
		select {
		case first = <-w.calls:
		case <-w.quit:
			return
		}
		batch := []*call{first}
	drain:
		for len(batch) < MaxBatch {
			select {
			case c := <-w.calls:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		w.run(batch)
	}
}

// run commits batch, isolating the call that fails, if any.
func (w *writer) run(batch []*call) {
	for len(batch) > 0 {
		failed := -1
		var res result
		start := time.Now()
		err := w.db.Update(func(btx *bbolt.Tx) error {
			tx := wrap(btx)
			for i, c := range batch {
				if res = runCall(c, tx); res.err != nil || res.panicked != nil {
					failed = i
					return errRollback
				}
			}
			return tx.flush() // the one place a batch's writes are completed before commit
		})
		switch {
		case failed >= 0:
			alone := batch[failed]
			if len(batch) == 1 {
				alone.done <- res // it ran alone already: its result stands
				return
			}
			w.run([]*call{alone})
			batch = append(batch[:failed:failed], batch[failed+1:]...)
		case err != nil: // the commit itself failed: every call learns it
			for _, c := range batch {
				c.done <- result{err: err}
			}
			return
		default:
			if w.onCommit != nil {
				w.onCommit(CommitInfo{Calls: len(batch), Duration: time.Since(start)})
			}
			for _, c := range batch {
				c.done <- result{}
			}
			return
		}
	}
}

var errRollback = errors.New("bolt store: batch rollback")

func runCall(c *call, tx *tx) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{panicked: p, err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return result{err: c.fn(tx)}
}

package bolt

import (
	"errors"
	"fmt"
	"runtime/debug"
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
// the batch is equivalent to running them serially. When one returns an error having
// written nothing, the batch goes on without it (see run). When one returns an error after
// writing (or panics), the whole bbolt transaction rolls back; that call is then run alone,
// so that only its own writes are discarded, and the others run again as a new batch. A
// function may therefore run more than once, which the store contract allows.

// MaxBatch is the most calls one commit carries.
const MaxBatch = 1000

var errClosed = errors.New("bolt store: closed")

type call struct {
	fn   func(store.Tx) error
	done chan result
}

type result struct {
	err      error
	panicked any // what a function panicked with (a *callPanic), re-raised in its caller
}

// callPanic is a function's panic, re-raised in its caller's goroutine (writer.do). There
// the stack shows the caller waiting, not where the function failed, so the value carries
// the writer's stack of the moment it panicked, and prints it.
type callPanic struct {
	value any
	stack []byte
}

func (p *callPanic) Error() string {
	return fmt.Sprintf("%v [in the bolt store's writer: %s]", p.value, p.stack)
}

// Unwrap is the value panicked with, when it is an error (a runtime.Error, say).
func (p *callPanic) Unwrap() error {
	err, _ := p.value.(error)
	return err
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
//
// A call that returns an error having changed nothing through the transaction (tx.writes
// did not move: a validation error, a taken correlationID, a record not found) leaves the
// transaction as the calls before it left it: the batch goes on without it, and the call
// gets its error once the batch is done. Only a call that fails after a change, or panics,
// makes the batch roll back. Before, every failure rolled back the whole batch and ran
// the rest again, so a client sending a stream of duplicate correlationIDs made the
// writer run each batch once per duplicate in it. A batch that changes nothing at all is
// not committed: there is nothing to sync.
func (w *writer) run(batch []*call) {
	results := make([]result, len(batch))
	for len(batch) > 0 {
		failed := -1
		var res result
		start := time.Now()
		ok, wrote := 0, false
		var stats bbolt.TxStats // what the commit wrote, read once it is on disk
		err := w.db.Update(func(btx *bbolt.Tx) error {
			tx := wrap(btx)
			ok = 0
			if w.onCommit != nil {
				btx.OnCommit(func() { stats = btx.Stats() })
			}
			for i, c := range batch {
				before := tx.writes
				res = runCall(c, tx)
				switch {
				case res.panicked != nil || res.err != nil && tx.writes != before:
					failed = i
					return errRollback
				case res.err != nil: // nothing changed: the batch goes on
					results[i] = res
				default:
					results[i] = result{}
					ok++
				}
			}
			if wrote = tx.writes > 0; !wrote {
				return errNothing
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
			results = append(results[:failed:failed], results[failed+1:]...)
		case err != nil && err != errNothing: // the commit itself failed: every call learns it
			for i, c := range batch {
				if results[i].err == nil {
					results[i] = result{err: err}
				}
				c.done <- results[i]
			}
			return
		default:
			if w.onCommit != nil && wrote {
				w.onCommit(CommitInfo{Calls: ok, Duration: time.Since(start), Written: stats.GetPageAlloc(), Write: stats.GetWriteTime()})
			}
			for i, c := range batch {
				c.done <- results[i]
			}
			return
		}
	}
}

// errNothing rolls back a batch that changed nothing: there is nothing to commit.
var errNothing = errors.New("bolt store: nothing to commit")

var errRollback = errors.New("bolt store: batch rollback")

func runCall(c *call, tx *tx) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{panicked: &callPanic{value: p, stack: debug.Stack()}, err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return result{err: c.fn(tx)}
}

package main

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// lineWriter is where the request log writes: one line per request would otherwise be one
// write system call per request, about a tenth of the server's CPU under load. Lines are
// appended to a buffer in memory and a goroutine writes what has gathered, in order: at
// most gatherFor after the first line of a batch, or as soon as flushAt bytes have
// gathered, so that under load thousands of requests' lines go out in one write, as
// calls share a commit in the group-committing store.
//
// What a crash of the process loses is the lines gathered and not yet written: at most
// the last gatherFor's requests. A line is never reordered or split. When the output falls
// behind by maxBuffered bytes, a writing request waits for it instead of the buffer
// growing. Close writes what is left.
type lineWriter struct {
	out    io.Writer
	gather time.Duration // how long the first line of a batch waits for others

	mu   sync.Mutex // guards buf and free
	buf  []byte     // lines gathered, not yet written
	free []byte     // the buffer last written, kept for reuse

	outMu sync.Mutex    // one write to out at a time, in order
	poke  chan struct{} // a batch has begun
	full  chan struct{} // a batch has reached flushAt bytes
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once

	closed atomic.Bool
}

const (
	// gatherFor is the longest a line waits in memory before it is written.
	gatherFor = 20 * time.Millisecond
	// flushAt is how much gathers before it is written without waiting for gatherFor.
	flushAt = 64 << 10
	// maxBuffered is how far the output may fall behind before writers wait for it.
	maxBuffered = 1 << 20
)

// newLineWriter starts a lineWriter on out whose lines wait at most gather (gatherFor in
// the server).
func newLineWriter(out io.Writer, gather time.Duration) *lineWriter {
	w := &lineWriter{out: out, gather: gather, poke: make(chan struct{}, 1), full: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// Write gathers p, one whole line as slog handlers write it.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n := len(w.buf)
	w.buf = append(w.buf, p...)
	m := len(w.buf)
	w.mu.Unlock()
	switch {
	case m >= maxBuffered || w.closed.Load():
		w.flush()
	case n == 0:
		wake(w.poke)
	case n < flushAt && m >= flushAt:
		wake(w.full)
	}
	return len(p), nil
}

// wake wakes the loop on c unless a wake is pending on it already.
func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (w *lineWriter) loop() {
	defer close(w.done)
	gather := time.NewTimer(w.gather)
	gather.Stop()
	for {
		select {
		case <-w.poke:
		case <-w.quit:
			return
		}
		gather.Reset(w.gather)
		select {
		case <-gather.C:
		case <-w.full:
			gather.Stop()
		case <-w.quit:
			return
		}
		w.flush()
		select { // a full signal the flush has already served
		case <-w.full:
		default:
		}
	}
}

// flush writes every line gathered so far. A write error is not reported: a log that
// cannot be written must not fail the requests it describes.
func (w *lineWriter) flush() {
	w.outMu.Lock()
	defer w.outMu.Unlock()
	w.mu.Lock()
	b := w.buf
	w.buf, w.free = w.free[:0], nil
	w.mu.Unlock()
	if len(b) == 0 {
		return
	}
	_, _ = w.out.Write(b)
	w.mu.Lock()
	if cap(b) <= maxBuffered { // a buffer grown past the bound is let go
		w.free = b
	}
	w.mu.Unlock()
}

// Close stops the writing goroutine and writes what is left. Lines written after Close
// are written by their own call.
func (w *lineWriter) Close() error {
	w.closed.Store(true)
	w.once.Do(func() { close(w.quit) })
	<-w.done
	w.flush()
	return nil
}

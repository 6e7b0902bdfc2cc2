package main

import (
	"io"
	"sync"
	"sync/atomic"
)

// lineWriter is where the request log writes: one line per request would otherwise be one
// write system call per request, about a tenth of the server's CPU under load. Lines are
// appended to a buffer in memory and a goroutine writes what has gathered, in order, as
// soon as it can: a lone request's line goes out at once, and under load many lines go out
// in one write, as calls share a commit in the group-committing store. Nothing waits on a
// timer.
//
// What a crash of the process loses is the lines gathered and not yet written: at most
// the last moments' requests. A line is never reordered or split. When the output falls
// behind by maxBuffered bytes, a writing request waits for it instead of the buffer
// growing. Close writes what is left.
type lineWriter struct {
	out io.Writer

	mu   sync.Mutex // guards buf and free
	buf  []byte     // lines gathered, not yet written
	free []byte     // the buffer last written, kept for reuse

	outMu sync.Mutex // one write to out at a time, in order
	poke  chan struct{}
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once

	closed atomic.Bool
}

// maxBuffered is how far the output may fall behind before writers wait for it.
const maxBuffered = 1 << 20

func newLineWriter(out io.Writer) *lineWriter {
	w := &lineWriter{out: out, poke: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// Write gathers p, one whole line as slog handlers write it.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	wasEmpty := len(w.buf) == 0
	w.buf = append(w.buf, p...)
	behind := len(w.buf) >= maxBuffered
	w.mu.Unlock()
	switch {
	case behind || w.closed.Load():
		w.flush()
	case wasEmpty:
		select {
		case w.poke <- struct{}{}:
		default: // a poke is pending already
		}
	}
	return len(p), nil
}

func (w *lineWriter) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.poke:
			w.flush()
		case <-w.quit:
			return
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

package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// Lines written from many goroutines all come out, whole, each once; Close writes the
// rest, and a line after Close is written by its own call.
func TestLineWriter(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var out lockedBuffer
	w := newLineWriter(&out, gatherFor)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(w, "g=%d i=%d %s\n", g, i, strings.Repeat("x", i%300))
			}
		})
	}
	wg.Wait()
	is.NoErr(w.Close())
	fmt.Fprintf(w, "after close\n")

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	is.Equal(len(lines), 8*500+1)
	seen := map[string]bool{}
	next := map[int]int{} // each goroutine's lines in the order it wrote them
	for _, l := range lines[:len(lines)-1] {
		var g, i int
		_, err := fmt.Sscanf(l, "g=%d i=%d", &g, &i)
		is.NoErr(err)
		is.Equal(l, fmt.Sprintf("g=%d i=%d %s", g, i, strings.Repeat("x", i%300))) // whole
		is.True(!seen[l])                                                          // once
		seen[l] = true
		is.Equal(i, next[g]) // in order
		next[g]++
	}
	is.Equal(lines[len(lines)-1], "after close")
}

// An output that falls behind makes writers wait rather than the buffer grow past
// maxBuffered.
func TestLineWriter_Behind(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var out lockedBuffer
	w := newLineWriter(&out, gatherFor)
	w.outMu.Lock() // the output is stuck
	line := bytes.Repeat([]byte("y"), 4096)
	line[len(line)-1] = '\n'
	wrote := make(chan struct{})
	go func() {
		for range maxBuffered/len(line) + 1 {
			_, _ = w.Write(line)
		}
		close(wrote)
	}()
	for {
		w.mu.Lock()
		n := len(w.buf)
		w.mu.Unlock()
		if n >= maxBuffered {
			break
		}
		select {
		case <-wrote:
			t.Fatal("the writes went through while the output was stuck")
		default:
		}
	}
	w.outMu.Unlock() // the output moves again
	<-wrote
	is.NoErr(w.Close())
	is.Equal(len(out.String()), (maxBuffered/len(line)+1)*len(line)) // every line, once
}

// A batch is written once flushAt bytes have gathered, however long its lines may wait,
// and a lone line once its wait is over (none here), each without Close.
func TestLineWriter_Gathers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	out := &notifyWriter{wrote: make(chan string, 16)}
	w := newLineWriter(out, time.Hour)
	line := strings.Repeat("z", 1023) + "\n"
	for range flushAt / len(line) {
		_, _ = w.Write([]byte(line))
	}
	is.Equal(len(<-out.wrote), flushAt) // the whole batch, in one write, within the hour
	is.NoErr(w.Close())

	w = newLineWriter(out, 0)
	_, _ = w.Write([]byte("lone\n"))
	is.Equal(<-out.wrote, "lone\n")
	is.NoErr(w.Close())
}

// notifyWriter hands each write to a channel.
type notifyWriter struct{ wrote chan string }

func (n *notifyWriter) Write(p []byte) (int, error) {
	n.wrote <- string(p)
	return len(p), nil
}

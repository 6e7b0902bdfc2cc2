package qrpng

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/matryer/is"
)

// TestRenderer_Bounded: renders run at most len(slots) at once, at most maxWaiting more
// callers wait, the next is refused with ErrBusy at once, a waiter whose context ends
// leaves, and callers of an image already being rendered or cached take no turn.
func TestRenderer_Bounded(t *testing.T) {
	is := is.New(t)
	r := New(0)
	r.slots = make(chan struct{}, 1)
	r.maxWaiting = 2
	var mu sync.Mutex
	running, most, calls := 0, 0, 0
	release := make(chan struct{})
	r.render = func(content string, size int) ([]byte, error) {
		mu.Lock()
		calls++
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return render(content, size)
	}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Go(func() { _, errs[0] = r.PNG(payloads[0], MinSize) }) // renders
	waitFor(func() bool { return r.Stats().Misses == 1 })
	wg.Go(func() { _, errs[1] = r.PNG(payloads[0], MinSize) }) // the same image: shares the render
	waitFor(func() bool { return r.Stats().Shared == 1 })
	wg.Go(func() { _, errs[2] = r.PNG(payloads[0], MinSize+1) }) // waits for a turn
	wg.Go(func() { _, errs[3] = r.PNG(payloads[0], MinSize+2) }) // waits for a turn
	waitFor(func() bool { return r.Stats().Waiting == 2 })

	_, err := r.PNG(payloads[0], MinSize+3)
	is.True(errors.Is(err, ErrBusy))    // a third waiter is refused at once
	is.Equal(r.Stats().Busy, uint64(1)) // and counted
	is.Equal(r.Stats().Waiting, 2)      // the two still wait
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.PNGContext(ctx, payloads[0], MinSize+4)
	is.True(errors.Is(err, ErrBusy)) // full: refused before the context matters

	close(release)
	wg.Wait()
	for i, err := range errs {
		is.NoErr(err) // every admitted caller gets its image
		_ = i
	}
	is.Equal(most, 1)  // one render at a time
	is.Equal(calls, 3) // three images, each rendered once
	is.Equal(r.Stats().Waiting, 0)

	// A cached image needs no turn, even with every slot taken and no room to wait.
	r.slots <- struct{}{}
	r.maxWaiting = 0
	_, err = r.PNG(payloads[0], MinSize)
	is.NoErr(err) // from the cache

	// A waiter whose context ends leaves the queue.
	r.maxWaiting = 1
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.PNGContext(ctx, payloads[1], MinSize); done <- err }()
	waitFor(func() bool { return r.Stats().Waiting == 1 })
	cancel()
	is.True(errors.Is(<-done, context.Canceled)) // the context's error
	is.Equal(r.Stats().Waiting, 0)               // no longer waiting
	<-r.slots
	_, err = r.PNG(payloads[1], MinSize)
	is.NoErr(err) // a free slot renders
}

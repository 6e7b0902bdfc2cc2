// Package qrpng renders Pix BR Code strings as PNG QR images and keeps the
// results in a byte-bounded LRU cache, so a repeat request for the same code
// and size costs a map lookup.
//
// Images use error correction level Medium and keep the 4-module quiet zone.
// Every module is the same whole number of pixels (the largest that fits),
// and the symbol is centred on a white size x size canvas; some decoders
// misread QR images whose modules differ by a pixel.
package qrpng

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Image size limits, in pixels per side.
const (
	MinSize     = 600
	MaxSize     = 4096
	DefaultSize = 1024
)

// DefaultMaxBytes is the cache budget New uses when given maxBytes <= 0.
const DefaultMaxBytes = 64 << 20

// ErrSize is returned, possibly wrapped, when the requested size is outside
// [MinSize, MaxSize].
var ErrSize = errors.New("qrpng: size must be between 600 and 4096")

// ErrBusy is returned when an image is not cached and so many callers are already waiting
// to render one that this caller would wait too long: try again later.
var ErrBusy = errors.New("qrpng: too many images are being rendered; try again")

// ErrContent is returned, wrapped, when content cannot be encoded as a QR
// code (empty, or too long for a version 40 symbol at level Medium).
var ErrContent = errors.New("qrpng: content cannot be encoded as a QR code")

// Renderer renders and caches QR PNGs. It is safe for concurrent use.
// Concurrent requests for the same uncached content and size render once.
//
// Renders are bounded: at most half the processors (at least one) render at once, and at
// most MaxWaiting more callers wait for a turn; a caller beyond those gets ErrBusy
// at once. A render takes milliseconds of CPU and, at the largest size, about a megabyte
// of memory, and the public image URL needs no credentials: without the bound, requests
// for one link at a thousand different sizes (each a cache miss) took a server's memory
// from 19 MB to 729 MB and its health check to 4.5 s. A cached image costs no turn.
type Renderer struct {
	render func(content string, size int) ([]byte, error) // swapped by tests

	slots      chan struct{} // one per render running
	maxWaiting int

	mu       sync.Mutex
	waiting  int // callers waiting for a slot
	maxBytes int64
	bytes    int64
	lru      *list.List // of *entry, most recently used at the front
	entries  map[key]*list.Element
	inflight map[key]*call
	stats    Stats
}

// Stats is a snapshot of a Renderer's counters.
type Stats struct {
	Hits      uint64 // PNG calls answered from the cache
	Misses    uint64 // PNG calls that started a render
	Shared    uint64 // PNG calls that waited for another caller's render of the same key
	Renders   uint64 // renders completed, successful or not
	Evictions uint64 // entries dropped to stay within MaxBytes
	Busy      uint64 // PNG calls refused with ErrBusy
	Waiting   int    // callers waiting for a turn to render now
	Entries   int    // entries in the cache now
	Bytes     int64  // bytes charged to the cache now (see New)
	MaxBytes  int64  // cache budget
}

type key struct {
	content string
	size    int
}

type entry struct {
	key  key
	png  []byte
	cost int64
}

// call is one in-flight render; waiters block on done, then read png/err.
type call struct {
	done chan struct{}
	png  []byte
	err  error
}

// New returns a Renderer whose cache holds at most maxBytes, counting each
// entry as its PNG length plus its content length. Least recently used
// entries are evicted first; an image larger than maxBytes is returned but
// not cached. maxBytes <= 0 means DefaultMaxBytes.
func New(maxBytes int64) *Renderer {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Renderer{
		render:     render,
		slots:      make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		maxWaiting: MaxWaiting,
		maxBytes:   maxBytes,
		lru:        list.New(),
		entries:    make(map[key]*list.Element),
		inflight:   make(map[key]*call),
	}
}

// MaxWaiting is how many callers may wait for a turn to render (see Renderer).
const MaxWaiting = 256

// PNG is PNGContext without a context: it waits for a turn to render as long as it takes.
func (r *Renderer) PNG(content string, size int) ([]byte, error) {
	return r.PNGContext(context.Background(), content, size)
}

// PNGContext returns a size x size PNG image of content as a QR code (error correction
// Medium, 4-module quiet zone). It returns ErrSize if size is outside [MinSize, MaxSize],
// an error wrapping ErrContent if content cannot be encoded, ErrBusy if the image must be
// rendered and too many callers wait for a turn already (see Renderer), and ctx's error if
// ctx ends while it waits.
//
// The returned slice is shared with the cache and with other callers: it must
// not be modified. Copy it first if you need to change it.
func (r *Renderer) PNGContext(ctx context.Context, content string, size int) ([]byte, error) {
	if size < MinSize || size > MaxSize {
		return nil, fmt.Errorf("%w: got %d", ErrSize, size)
	}
	k := key{content, size}
	turn := false // whether this caller holds a slot
	defer func() {
		if turn {
			<-r.slots
		}
	}()
	for {
		r.mu.Lock()
		if el, ok := r.entries[k]; ok {
			r.lru.MoveToFront(el)
			r.stats.Hits++
			png := el.Value.(*entry).png
			r.mu.Unlock()
			return png, nil
		}
		if c, ok := r.inflight[k]; ok {
			r.stats.Shared++
			r.mu.Unlock()
			if turn { // another caller renders it: the turn is not needed
				<-r.slots
				turn = false
			}
			select {
			case <-c.done:
				return c.png, c.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if turn {
			break // r.mu held: render
		}
		r.mu.Unlock()
		if err := r.wait(ctx); err != nil {
			return nil, err
		}
		turn = true // look again: the image may have been rendered meanwhile
	}
	c := &call{done: make(chan struct{})}
	r.inflight[k] = c
	r.stats.Misses++
	r.mu.Unlock()

	// The deferred finish runs even if render panics, so waiters never hang.
	c.err = errRenderPanicked
	defer r.finish(k, c)
	c.png, c.err = r.render(content, size)
	return c.png, c.err
}

// wait takes a render slot, waiting for one unless MaxWaiting callers wait already.
func (r *Renderer) wait(ctx context.Context) error {
	select {
	case r.slots <- struct{}{}:
		return nil
	default:
	}
	r.mu.Lock()
	if r.waiting >= r.maxWaiting {
		r.stats.Busy++
		r.mu.Unlock()
		return ErrBusy
	}
	r.waiting++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
	}()
	select {
	case r.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errRenderPanicked = errors.New("qrpng: render panicked")

// finish publishes c's result: caches it on success, then wakes waiters.
func (r *Renderer) finish(k key, c *call) {
	r.mu.Lock()
	delete(r.inflight, k)
	r.stats.Renders++
	if c.err == nil {
		r.add(k, c.png)
	}
	r.mu.Unlock()
	close(c.done)
}

// add caches png under k and evicts from the back until within budget.
// r.mu must be held; k must not be cached.
func (r *Renderer) add(k key, png []byte) {
	cost := int64(len(png) + len(k.content))
	if cost > r.maxBytes {
		return
	}
	for r.bytes+cost > r.maxBytes {
		el := r.lru.Back()
		old := r.lru.Remove(el).(*entry)
		delete(r.entries, old.key)
		r.bytes -= old.cost
		r.stats.Evictions++
	}
	r.entries[k] = r.lru.PushFront(&entry{key: k, png: png, cost: cost})
	r.bytes += cost
}

// Stats returns a snapshot of r's counters.
func (r *Renderer) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Entries = r.lru.Len()
	s.Waiting = r.waiting
	s.Bytes = r.bytes
	s.MaxBytes = r.maxBytes
	return s
}

package payments

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time. Every operation takes "now" from it once.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a clock that moves only when told: the sandbox's time machine.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock standing at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

var objectID struct {
	once    sync.Once
	random  [5]byte
	counter atomic.Uint32
}

// NewObjectID returns a 24-hex id shaped like the real API's (a MongoDB ObjectId: seconds,
// 5 random bytes per process, a counter), unique within and across processes.
func NewObjectID() string {
	objectID.once.Do(func() {
		rand.Read(objectID.random[:])
		var c [4]byte
		rand.Read(c[:])
		objectID.counter.Store(binary.BigEndian.Uint32(c[:]))
	})
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(time.Now().Unix()))
	copy(b[4:9], objectID.random[:])
	n := objectID.counter.Add(1)
	b[9], b[10], b[11] = byte(n>>16), byte(n>>8), byte(n)
	return hex.EncodeToString(b[:])
}

package payments

import (
	"sync"
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

// MaxClockOffset is the furthest an OffsetClock moves ahead of its base clock in all: a
// century, far beyond any charge's expiry or subscription's term, and well inside the years
// that RFC 3339 (and so every record's JSON) can write.
const MaxClockOffset = 100 * 365 * 24 * time.Hour

// OffsetClock is a base clock plus an offset that only grows: the sandbox server's clock,
// the system clock moved forward over the wire (examples/server, httpadapter's
// /<vendor>/testing/clock). It is one clock for everything that shares it: moving it
// moves time for every company of the Service. Safe for concurrent use.
type OffsetClock struct {
	base   Clock
	mu     sync.Mutex
	offset time.Duration
}

// NewOffsetClock returns a clock that tells base's time until Advance moves it ahead.
func NewOffsetClock(base Clock) *OffsetClock { return &OffsetClock{base: base} }

// Now returns the base clock's time plus the offset.
func (c *OffsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Now().Add(c.offset)
}

// Advance moves the clock forward by d and returns the new time. The clock never moves
// backwards: a negative d is refused (EINVALID on "advance"), as is one that would take the
// offset beyond MaxClockOffset; then the clock does not move. A zero d moves nothing.
func (c *OffsetClock) Advance(d time.Duration) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case d < 0:
		return time.Time{}, invalid("advance", "advance must not be negative: the clock never moves backwards")
	case d > MaxClockOffset-c.offset:
		return time.Time{}, invalid("advance", "advance would move the clock more than %s ahead in all (%s so far)", MaxClockOffset, c.offset)
	}
	c.offset += d
	return c.base.Now().Add(c.offset), nil
}

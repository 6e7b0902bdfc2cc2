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

// wall is the base clock's time, without the offset: what a receiver's clock reads while
// the sandbox clock has been moved (signWebhook's timestamp).
func (c *OffsetClock) wall() time.Time { return c.base.Now() }

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

// MoveTo moves the clock forward to t; a clock at or past t stays where it is
// (MovableClock).
func (c *ManualClock) MoveTo(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	return nil
}

// A MovableClock is a clock that its owner moves forward: *ManualClock and *OffsetClock.
// Service.AdvanceClock moves the Service's clock through the work that falls due.
type MovableClock interface {
	Clock
	// MoveTo moves the clock forward to t. A clock at or past t stays where it is: it
	// never moves back. An error leaves it where it was.
	MoveTo(t time.Time) error
}

// errBackwards refuses a negative advance.
func errBackwards() error {
	return invalid("advance", "advance must not be negative: the clock never moves backwards")
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

// NewOffsetClock returns a clock that tells base's time (the system clock if base is nil)
// until Advance moves it ahead.
func NewOffsetClock(base Clock) *OffsetClock {
	if base == nil {
		base = SystemClock{}
	}
	return &OffsetClock{base: base}
}

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
	if d < 0 {
		return time.Time{}, errBackwards()
	}
	if err := c.within(d); err != nil {
		return time.Time{}, err
	}
	c.offset += d
	return c.base.Now().Add(c.offset), nil
}

// MoveTo moves the clock forward to t (MovableClock): the offset grows by what t is ahead
// of the clock's time. A clock at or past t stays; t more than MaxClockOffset ahead of
// the base clock is refused (EINVALID on "advance") and the clock does not move.
func (c *OffsetClock) MoveTo(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := t.Sub(c.base.Now().Add(c.offset))
	if d <= 0 {
		return nil
	}
	if err := c.within(d); err != nil {
		return err
	}
	c.offset += d
	return nil
}

// reaches says whether the clock can move to t without going beyond MaxClockOffset (nil),
// or why not: Service.AdvanceClock checks the whole move before its first step.
func (c *OffsetClock) reaches(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.within(t.Sub(c.base.Now().Add(c.offset)))
}

// within says whether the offset can grow by d; c.mu is held.
func (c *OffsetClock) within(d time.Duration) error {
	if d > MaxClockOffset-c.offset {
		return invalid("advance", "advance would move the clock more than %s ahead in all (%s so far)", MaxClockOffset, c.offset)
	}
	return nil
}

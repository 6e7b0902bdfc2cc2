package payments_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

func TestOffsetClock(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	base := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	c := payments.NewOffsetClock(base)
	now, err := c.Advance(2 * time.Hour)
	is.NoErr(err)
	is.Equal(now, time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)) // base plus offset
	base.Advance(time.Minute)
	is.Equal(c.Now(), time.Date(2026, 11, 22, 14, 1, 0, 0, time.UTC)) // the base still runs under the offset
	_, err = c.Advance(-time.Second)
	is.Equal(payments.ErrorCode(err), payments.EINVALID) // never backwards
	is.Equal(payments.ErrorField(err), "advance")
	_, err = c.Advance(payments.MaxClockOffset)
	is.Equal(payments.ErrorField(err), "advance") // beyond the furthest offset in all
	now, err = c.Advance(0)
	is.NoErr(err)
	is.Equal(now, c.Now()) // zero moves nothing
}

// TestNilArguments: nil where a value is needed is an error, or the documented default,
// never a panic.
func TestNilArguments(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := payments.New(nil, payments.Options{})
	is.True(err != nil) // no store
	e := newEnv(t, memory.New())
	_, err = e.svc.AdvanceClock(ctx, nil, time.Hour)
	is.Equal(payments.ErrorField(err), "clock") // no clock: invalid, naming it
	is.Equal(e.clock.Now(), t0)                 // nothing moved
	is.Equal(payments.ErrorField(e.svc.Backup(ctx, nil)), "w")
	is.True(!payments.NewOffsetClock(nil).Now().IsZero()) // the system clock
}

// TestNew_Vendor: the vendor becomes a path segment and an event prefix, so New refuses
// one httpadapter could not route or that would make odd event names.
func TestNew_Vendor(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, v := range []string{"{x}", "a b", "x/y", "OPENPIX", "api", strings.Repeat("a", 33)} {
		_, err := payments.New(memory.New(), payments.Options{Vendor: v})
		is.Equal(payments.ErrorField(err), "vendor")
	}
	svc, err := payments.New(memory.New(), payments.Options{Vendor: "woovi-sandbox"})
	is.NoErr(err)
	is.Equal(svc.Vendor(), "woovi-sandbox")
}

package payments_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

func TestOffsetClock(t *testing.T) {
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

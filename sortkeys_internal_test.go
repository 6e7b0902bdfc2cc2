package payments

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/matryer/is"
)

// sortTime writes what Format(sortTimeLayout) wrote, to the byte: every index entry stored
// holds it. Random times over years -50 to 10050 (outside 0 to 9999 it is Format itself),
// any nanosecond, in UTC and in other zones.
func TestSortTime_AsFormat(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	rng := rand.New(rand.NewPCG(7, 2026))
	lo := time.Date(-50, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10050, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("BRT", -3*3600), time.FixedZone("", 13*3600+45*60+30)}
	for i := range 200_000 {
		at := time.Unix(lo+rng.Int64N(hi-lo), rng.Int64N(int64(time.Second))).In(zones[i%len(zones)])
		if i%3 == 0 {
			at = at.Truncate(time.Millisecond) // as the Service's clock reads
		}
		if got, want := sortTime(at), at.UTC().Format(sortTimeLayout); got != want {
			is.Equal(got, want) // the first one that differs
		}
	}
}

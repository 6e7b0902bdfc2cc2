package payments

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/matryer/is"
)

// seqID and eventTimeSort write what they always wrote (stored event ids and index
// entries depend on it): 20 zero-padded digits, and the sort time, "|" and the seqID.
func TestSeqID_Format(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	at := time.Date(2026, 11, 25, 12, 0, 0, 123, time.FixedZone("BRT", -3*3600))
	for _, n := range []uint64{0, 1, 9, 10, 12345, 1 << 40, math.MaxUint64} {
		is.Equal(seqID(n), fmt.Sprintf("%020d", n))               // zero-padded
		is.Equal(eventTimeSort(at, n), sortTime(at)+"|"+seqID(n)) // time, then number
	}
}

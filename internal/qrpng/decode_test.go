package qrpng

import (
	"fmt"
	"slices"
	"testing"

	"github.com/matryer/is"
	"github.com/pixfoundry/payments/internal/qrtest"
)

// decodeQR decodes b; pure sets gozxing's PURE_BARCODE hint (see qrtest.Decode).
func decodeQR(t *testing.T, b []byte, pure bool) (string, error) {
	t.Helper()
	text, _, err := qrtest.Decode(b, pure)
	return text, err
}

func TestRenderer_PNG_Decode(t *testing.T) {
	r := New(0)
	longest := slices.MaxFunc(payloads, func(a, b string) int { return len(a) - len(b) })
	for _, content := range payloads {
		for _, size := range sizes {
			if size > 1024 && content != longest {
				// The modules are the same at every size (TestRenderer_PNG_UniformModules
				// checks every pixel of every size): scans of the densest code show the
				// large images read. A 4096 px scan costs 2.4 s under -race.
				continue
			}
			t.Run(fmt.Sprintf("len=%d/size=%d", len(content), size), func(t *testing.T) {
				t.Parallel()
				is := is.New(t)
				b, err := r.PNG(content, size)
				is.NoErr(err) // renders
				got, err := decodeQR(t, b, true)
				is.NoErr(err)          // gozxing reads the code
				is.Equal(got, content) // round-trips exactly
				// gozxing's finder search (no PURE_BARCODE hint) is not used: it takes a
				// finder-like pattern in the data of the 258-char payload for a corner,
				// on skip2's own renders too, while zbarimg and phone scanners read it.
			})
		}
	}
}

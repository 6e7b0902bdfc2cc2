package qrpng

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/skip2/go-qrcode"
)

// payloads are realistic BR Codes of different lengths (and QR versions).
var payloads = []string{
	// Manual do BR Code static example (137 chars).
	"00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D",
	// BCB sandbox cobv URL (168 chars); gozxing's finder search misreads skip2's own 600-777 px renders of it.
	"00020126990014br.gov.bcb.pix2577qr-h.sandbox.pix.bcb.gov.br/rest/api/v2/cobv/9b95a87c10a84d65bcbf55a48a2e50c85204000053039865802BR5903Pix6008BRASILIA62070503***63048ECF",
	// Made up: dynamic cobv with amount and a recurrence template 80 (258 chars, CRC valid).
	"00020101021226880014br.gov.bcb.pix2566pix.pixfoundry.example/qr/v2/cobv/6f1c2d3e4b5a69788796a5b4c3d2e1f052040000530398654071250.005802BR5925PIXFOUNDRY PAGAMENTOS LTD6009SAO PAULO62070503***80570014br.gov.bcb.pix2535pix.pixfoundry.example/rec/0a1b2c3d63048791",
	// EMV-style vector with extra templates (359 chars).
	"00020104141234567890123426660014BR.GOV.BCB.PIX014466756C616E6F32303139406578616D706C652E636F6D27300012BR.COM.OUTRO011001234567895204000053039865406123.455802BR5915NOMEDORECEBEDOR6008BRASILIA61087007490062530515RP12345678-201950300017BR.GOV.BCB.BRCODE01051.0.080450014BR.GOV.BCB.PIX0123PADRAO.URL.PIX/0123ABCD81390012BR.COM.OUTRO01190123.ABCD.3456.WXYZ6304EB76",
	// UTF-8 name and city (138 chars, 140 bytes).
	"00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913João da Silva6009São Paulo62070503***6304F05D",
}

var sizes = []int{600, 601, 777, 1024, 2048, 4096}

func TestRenderer_PNG(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		r := New(0)
		for _, content := range payloads {
			for _, size := range sizes {
				t.Run(fmt.Sprintf("len=%d/size=%d", len(content), size), func(t *testing.T) {
					t.Parallel()
					is := is.New(t)
					b, err := r.PNG(content, size)
					is.NoErr(err) // valid content and size render
					cfg, err := png.DecodeConfig(bytes.NewReader(b))
					is.NoErr(err)              // output is a PNG
					is.Equal(cfg.Width, size)  // exact width
					is.Equal(cfg.Height, size) // exact height
					pal, ok := cfg.ColorModel.(color.Palette)
					is.True(ok)           // paletted PNG
					is.Equal(len(pal), 2) // two colours, so 1 bit per pixel
					if size > 1024 {
						return // decoded whole, pixel by pixel, by TestRenderer_PNG_UniformModules
					}
					img, err := png.Decode(bytes.NewReader(b))
					is.NoErr(err)                                        // the whole image decodes
					is.Equal(img.Bounds(), image.Rect(0, 0, size, size)) // exact bounds
				})
			}
		}
	})

	t.Run("ErrSize", func(t *testing.T) {
		is := is.New(t)
		r := New(0)
		for _, size := range []int{599, 4097, 0, -1024} {
			b, err := r.PNG(payloads[0], size)
			is.True(errors.Is(err, ErrSize))                                            // out of range
			is.True(strings.Contains(err.Error(), "size must be between 600 and 4096")) // message names the range
			is.Equal(b, nil)                                                            // no image on error
		}
		is.Equal(r.Stats().Renders, uint64(0)) // rejected before rendering
	})

	t.Run("Bounds", func(t *testing.T) {
		is := is.New(t)
		r := New(0)
		for _, size := range []int{MinSize, MaxSize, DefaultSize} {
			_, err := r.PNG(payloads[0], size)
			is.NoErr(err) // limits are inclusive
		}
	})

	t.Run("ErrContent", func(t *testing.T) {
		is := is.New(t)
		r := New(0)
		for _, content := range []string{"", strings.Repeat("x", 3000)} {
			_, err := r.PNG(content, DefaultSize)
			is.True(errors.Is(err, ErrContent)) // empty or too long for version 40-M
		}
		is.Equal(r.Stats().Entries, 0) // errors are not cached
	})
}

func TestRenderer_PNG_UniformModules(t *testing.T) {
	for _, size := range sizes {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			is := is.New(t)
			q, err := qrcode.New(payloads[2], qrcode.Medium)
			is.NoErr(err) // payload encodes
			bitmap := q.Bitmap()
			n := len(bitmap)
			ppm := size / n
			off := (size - n*ppm) / 2

			b, err := New(0).PNG(payloads[2], size)
			is.NoErr(err) // renders
			img, err := png.Decode(bytes.NewReader(b))
			is.NoErr(err) // valid PNG
			p, ok := img.(*image.Paletted)
			is.True(ok)                 // decoded as paletted
			is.Equal(len(p.Palette), 2) // black and white only
			dark := uint8(1)            // index of black in the decoded palette
			if r, _, _, _ := p.Palette[0].RGBA(); r == 0 {
				dark = 0
			}
			bad := 0
			for y := range size {
				row := p.Pix[y*p.Stride : y*p.Stride+size]
				my := (y - off) / ppm
				for x, v := range row {
					want := false
					if mx := (x - off) / ppm; x >= off && y >= off && mx < n && my < n {
						want = bitmap[my][mx]
					}
					if (v == dark) != want {
						bad++
					}
				}
			}
			is.Equal(bad, 0)                         // every pixel matches the module grid at ppm px per module, centred
			is.True(n*ppm <= size && size-n*ppm < n) // largest whole ppm that fits
		})
	}
}

func TestRenderer_Cache(t *testing.T) {
	t.Run("Hit", func(t *testing.T) {
		is := is.New(t)
		r := New(0)
		a, err := r.PNG(payloads[0], DefaultSize)
		is.NoErr(err) // first render
		b, err := r.PNG(payloads[0], DefaultSize)
		is.NoErr(err)          // cached
		is.Equal(&a[0], &b[0]) // same backing array, not a copy
		s := r.Stats()
		is.Equal(s.Renders, uint64(1)) // rendered once
		is.Equal(s.Hits, uint64(1))    // second call hit
		is.Equal(s.Misses, uint64(1))  // first call missed
		is.Equal(s.Entries, 1)         // one entry

		c, err := r.PNG(payloads[0], DefaultSize+1)
		is.NoErr(err)                          // other size
		is.True(!bytes.Equal(a, c))            // size is part of the key
		is.Equal(r.Stats().Renders, uint64(2)) // new key, new render
	})

	t.Run("Eviction", func(t *testing.T) {
		is := is.New(t)
		probe, err := render(payloads[0], MinSize)
		is.NoErr(err) // measure one entry
		cost := int64(len(probe) + len(payloads[0]))
		budget := cost*5/2 + 100 // room for two entries of about this size, not three
		r := New(budget)

		content := func(i int) string { return fmt.Sprintf("%s#%03d", payloads[0], i) }
		for i := range 10 {
			_, err := r.PNG(content(i), MinSize)
			is.NoErr(err) // renders
			s := r.Stats()
			is.True(s.Bytes <= budget) // never over budget
			is.True(s.Entries <= 2)    // budget fits two
		}
		s := r.Stats()
		is.Equal(s.Entries, 2)           // the two most recent stay
		is.Equal(s.Evictions, uint64(8)) // the rest were evicted
		is.Equal(s.MaxBytes, budget)     // budget as configured

		// LRU, not FIFO: touch 8, add 10; 9 is evicted and 8 stays.
		_, _ = r.PNG(content(8), MinSize)
		_, _ = r.PNG(content(10), MinSize)
		before := r.Stats().Renders
		_, _ = r.PNG(content(8), MinSize)
		is.Equal(r.Stats().Renders, before) // 8 still cached
		_, _ = r.PNG(content(9), MinSize)
		is.Equal(r.Stats().Renders, before+1) // 9 was evicted
	})

	t.Run("TooBigForCache", func(t *testing.T) {
		is := is.New(t)
		r := New(100)
		b, err := r.PNG(payloads[0], MinSize)
		is.NoErr(err)         // still returned
		is.True(len(b) > 100) // bigger than the budget
		s := r.Stats()
		is.Equal(s.Entries, 0)      // not cached
		is.Equal(s.Bytes, int64(0)) // nothing charged
	})

	t.Run("DefaultBudget", func(t *testing.T) {
		is := is.New(t)
		is.Equal(New(0).Stats().MaxBytes, int64(DefaultMaxBytes))  // zero means default
		is.Equal(New(-1).Stats().MaxBytes, int64(DefaultMaxBytes)) // negative means default
	})
}

// blockingRender returns a render func that counts calls and waits for
// release before rendering for real.
func blockingRender(calls *int, mu *sync.Mutex, release <-chan struct{}) func(string, int) ([]byte, error) {
	return func(content string, size int) ([]byte, error) {
		mu.Lock()
		*calls++
		mu.Unlock()
		<-release
		return render(content, size)
	}
}

// waitFor yields until cond holds; the test's own timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
	}
}

func TestRenderer_Singleflight(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		const n = 16
		r := New(0)
		var mu sync.Mutex
		calls := 0
		release := make(chan struct{})
		r.render = blockingRender(&calls, &mu, release)

		results := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], errs[i] = r.PNG(payloads[1], DefaultSize) })
		}
		// All but one caller must be waiting on the one in-flight render.
		waitFor(func() bool { return r.Stats().Shared == n-1 })
		close(release)
		wg.Wait()

		is.Equal(calls, 1) // rendered once
		for i := range n {
			is.NoErr(errs[i])                        // every caller succeeds
			is.Equal(&results[i][0], &results[0][0]) // all share one slice
		}
		s := r.Stats()
		is.Equal(s.Renders, uint64(1))  // one render recorded
		is.Equal(s.Misses, uint64(1))   // one miss
		is.Equal(s.Shared, uint64(n-1)) // the rest joined it
	})

	t.Run("DistinctKeys", func(t *testing.T) {
		is := is.New(t)
		r := New(0)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := r.PNG(payloads[i%len(payloads)], MinSize+i)
				is.NoErr(err) // concurrent distinct renders succeed
			})
		}
		wg.Wait()
		is.Equal(r.Stats().Renders, uint64(8)) // one render per key
		is.Equal(r.Stats().Entries, 8)         // all cached
	})

	t.Run("Panic", func(t *testing.T) {
		is := is.New(t)
		r := New(0)
		release := make(chan struct{})
		r.render = func(string, int) ([]byte, error) {
			<-release
			panic("boom")
		}
		leaderPanic := make(chan any, 1)
		go func() {
			defer func() { leaderPanic <- recover() }()
			_, _ = r.PNG(payloads[0], DefaultSize)
		}()
		waitFor(func() bool { return r.Stats().Misses == 1 })
		waitErr := make(chan error, 1)
		go func() {
			_, err := r.PNG(payloads[0], DefaultSize)
			waitErr <- err
		}()
		waitFor(func() bool { return r.Stats().Shared == 1 })
		close(release)
		is.Equal(<-leaderPanic, "boom")                  // the panic reaches the rendering caller
		is.True(errors.Is(<-waitErr, errRenderPanicked)) // waiters get an error, not a hang

		r.render = render
		_, err := r.PNG(payloads[0], DefaultSize)
		is.NoErr(err) // the key is not stuck in flight
	})
}

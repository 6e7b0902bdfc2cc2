package qrpng

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"

	"github.com/skip2/go-qrcode"
)

// palette puts white first so that index 0 (the zero value) is background.
var palette = color.Palette{color.White, color.Black}

// encoder is shared by all renders. DefaultCompression, not BestSpeed: on
// these images BestSpeed saves only 10-15% of the time (most of it goes to
// image/png packing pixels into bits, not to zlib) and its output is 1.5-1.8x
// larger, which also means fewer images per cache byte (BenchmarkEncodeLevel).
var encoder = &png.Encoder{
	CompressionLevel: png.DefaultCompression,
	BufferPool:       &bufferPool{},
}

// bufferPool lets concurrent renders reuse the PNG encoder's zlib state.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() *png.EncoderBuffer {
	v, _ := b.p.Get().(*png.EncoderBuffer)
	return v
}

func (b *bufferPool) Put(e *png.EncoderBuffer) { b.p.Put(e) }

// render draws content as a size x size PNG QR code with uniform modules:
// every module is the same integer number of pixels, and the symbol (with
// its 4-module quiet zone) is centred on a white canvas.
func render(content string, size int) ([]byte, error) {
	return renderWith(encoder, content, size)
}

// renderWith is render with a chosen encoder, for benchmarks.
func renderWith(enc *png.Encoder, content string, size int) ([]byte, error) {
	q, err := qrcode.New(content, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrContent, err)
	}
	bitmap := q.Bitmap() // includes the 4-module quiet zone (DisableBorder is false)
	m := newModuleImage(bitmap, size)
	if m == nil {
		return nil, fmt.Errorf("%w: %d modules do not fit in %d px", ErrContent, len(bitmap), size)
	}
	var buf bytes.Buffer
	buf.Grow(1024 + size*size/512) // a little above the usual output, so one allocation
	if err := enc.Encode(&buf, m); err != nil {
		return nil, fmt.Errorf("qrpng: encode png: %w", err)
	}
	// Clone so the cached slice has no spare capacity: the cache charges len.
	return bytes.Clone(buf.Bytes()), nil
}

// moduleImage is an image.PalettedImage that computes pixels from the QR
// bitmap instead of holding size*size bytes. image/png writes it as a 1-bit
// paletted PNG because its palette has two colours.
type moduleImage struct {
	size int
	rows [][]uint8 // rows[y] is pixel row y; rows within one module share storage.
}

// newModuleImage lays out bitmap (n x n modules, quiet zone included) at the
// largest integer pixels-per-module that fits in size, centred. It returns
// nil if not even one pixel per module fits.
func newModuleImage(bitmap [][]bool, size int) *moduleImage {
	n := len(bitmap)
	ppm := size / max(n, 1)
	if n == 0 || ppm < 1 {
		return nil
	}
	off := (size - n*ppm) / 2
	blank := make([]uint8, size)
	rowData := make([]uint8, n*size) // one pixel row per module row
	rows := make([][]uint8, size)
	for y := range rows {
		rows[y] = blank
	}
	for my, line := range bitmap {
		row := rowData[my*size : (my+1)*size : (my+1)*size]
		for mx, dark := range line {
			if dark {
				px := row[off+mx*ppm : off+(mx+1)*ppm]
				for i := range px {
					px[i] = 1
				}
			}
		}
		y0 := off + my*ppm
		for y := y0; y < y0+ppm; y++ {
			rows[y] = row
		}
	}
	return &moduleImage{size: size, rows: rows}
}

// ColorModel implements image.Image.
func (m *moduleImage) ColorModel() color.Model { return palette }

// Bounds implements image.Image.
func (m *moduleImage) Bounds() image.Rectangle { return image.Rect(0, 0, m.size, m.size) }

// At implements image.Image.
func (m *moduleImage) At(x, y int) color.Color { return palette[m.ColorIndexAt(x, y)] }

// ColorIndexAt implements image.PalettedImage.
func (m *moduleImage) ColorIndexAt(x, y int) uint8 {
	if uint(y) >= uint(m.size) || uint(x) >= uint(m.size) {
		return 0
	}
	return m.rows[y][x]
}

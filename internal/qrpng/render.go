package qrpng

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/skip2/go-qrcode"
)

// The PNG is written here directly rather than through image/png: a QR code is a 1-bit
// image whose pixel rows repeat once per module, and image/png asks for every pixel
// through an interface call, which cost about 80% of a render (60 ms at 4096 px). Here
// each module row is packed to bits once and its bytes are written ppm times; what is
// left is zlib. The output is a standard 1-bit paletted PNG (white = index 0, black = 1),
// which the tests decode with image/png and a QR decoder.
//
// Compression is zlib's default level: BestSpeed gains little here and makes files
// 1.5-1.8x larger, which also means fewer images per cache byte (BenchmarkEncodeLevel).

// render draws content as a size x size PNG QR code with uniform modules: every module is
// the same integer number of pixels, and the symbol (with its 4-module quiet zone) is
// centred on a white canvas.
func render(content string, size int) ([]byte, error) {
	return renderLevel(content, size, zlib.DefaultCompression)
}

func renderLevel(content string, size, level int) ([]byte, error) {
	q, err := qrcode.New(content, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrContent, err)
	}
	bitmap := q.Bitmap() // includes the 4-module quiet zone (DisableBorder is false)
	n := len(bitmap)
	ppm := size / max(n, 1)
	if n == 0 || ppm < 1 {
		return nil, fmt.Errorf("%w: %d modules do not fit in %d px", ErrContent, n, size)
	}
	off := (size - n*ppm) / 2

	// Scanlines: a filter byte (0, none) and the pixels packed 8 to a byte, most
	// significant bit first.
	stride := 1 + (size+7)/8
	blank := make([]byte, stride)
	line := make([]byte, stride)
	var idat bytes.Buffer
	idat.Grow(1024 + size*size/512)
	zw := zlibWriter(&idat, level)
	defer putZlibWriter(zw, level)
	writeRows := func(row []byte, count int) error {
		for range count {
			if _, err := zw.Write(row); err != nil {
				return err
			}
		}
		return nil
	}
	if err := writeRows(blank, off); err != nil {
		return nil, err
	}
	for _, modules := range bitmap {
		clear(line)
		for mx, dark := range modules {
			if !dark {
				continue
			}
			for x := off + mx*ppm; x < off+(mx+1)*ppm; x++ {
				line[1+x/8] |= 0x80 >> (x % 8)
			}
		}
		if err := writeRows(line, ppm); err != nil {
			return nil, err
		}
	}
	if err := writeRows(blank, size-off-n*ppm); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("qrpng: compress: %w", err)
	}

	out := make([]byte, 0, len(pngSignature)+3*12+13+6+idat.Len())
	out = append(out, pngSignature...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(size))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(size))
	ihdr[8], ihdr[9] = 1, 3 // bit depth 1, colour type 3 (palette); compression, filter, interlace 0
	out = appendChunk(out, "IHDR", ihdr[:])
	out = appendChunk(out, "PLTE", []byte{0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00}) // white, black
	out = appendChunk(out, "IDAT", idat.Bytes())
	return appendChunk(out, "IEND", nil), nil
}

var pngSignature = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}

// appendChunk appends a PNG chunk: length, type, data, and the CRC-32 of type and data.
func appendChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// zlib writers are pooled per level: each holds about a megabyte of deflate state.
var zlibPools sync.Map // level -> *sync.Pool

func zlibWriter(w *bytes.Buffer, level int) *zlib.Writer {
	p, _ := zlibPools.LoadOrStore(level, &sync.Pool{})
	if zw, ok := p.(*sync.Pool).Get().(*zlib.Writer); ok {
		zw.Reset(w)
		return zw
	}
	zw, err := zlib.NewWriterLevel(w, level)
	if err != nil {
		panic(err) // only for an invalid level, which callers never pass
	}
	return zw
}

func putZlibWriter(zw *zlib.Writer, level int) {
	p, _ := zlibPools.Load(level)
	p.(*sync.Pool).Put(zw)
}

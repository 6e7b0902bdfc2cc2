package qrpng

import (
	"compress/zlib"
	"fmt"
	"testing"

	"github.com/skip2/go-qrcode"
)

var benchSizes = []int{1024, 4096}

// BenchmarkPNG measures Renderer.PNG. cold renders a new content every
// iteration; cached asks for the same content and size every time.
func BenchmarkPNG(b *testing.B) {
	content := payloads[0]
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("size=%d/cold", size), func(b *testing.B) {
			r := New(0)
			var n int
			for i := 0; b.Loop(); i++ {
				png, err := r.PNG(fmt.Sprintf("%s%08d", content, i), size)
				if err != nil {
					b.Fatal(err)
				}
				n = len(png)
			}
			b.ReportMetric(float64(n), "png-bytes")
		})
		b.Run(fmt.Sprintf("size=%d/cached", size), func(b *testing.B) {
			r := New(0)
			if _, err := r.PNG(content, size); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.PNG(content, size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeLevel compares zlib levels for the uniform-module render,
// the numbers behind the choice of level.
func BenchmarkEncodeLevel(b *testing.B) {
	levels := []struct {
		name  string
		level int
	}{
		{"BestSpeed", zlib.BestSpeed},
		{"Default", zlib.DefaultCompression},
		{"BestCompression", zlib.BestCompression},
	}
	for _, l := range levels {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("level=%s/size=%d", l.name, size), func(b *testing.B) {
				var n int
				for b.Loop() {
					png, err := renderLevel(payloads[2], size, l.level)
					if err != nil {
						b.Fatal(err)
					}
					n = len(png)
				}
				b.ReportMetric(float64(n), "png-bytes")
			})
		}
	}
}

// BenchmarkSkip2PNG is the baseline: skip2's own PNG (uneven modules,
// BestCompression).
func BenchmarkSkip2PNG(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			var n int
			for b.Loop() {
				q, err := qrcode.New(payloads[2], qrcode.Medium)
				if err != nil {
					b.Fatal(err)
				}
				png, err := q.PNG(size)
				if err != nil {
					b.Fatal(err)
				}
				n = len(png)
			}
			b.ReportMetric(float64(n), "png-bytes")
		})
	}
}

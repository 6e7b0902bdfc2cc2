// Package qrtest reads QR code PNGs back to their text, for tests only: it is the one
// place the project uses a QR decoder (gozxing), so the product never depends on it.
package qrtest

import (
	"bytes"
	"fmt"
	"image/png"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"
)

// Decode reads b as a PNG and returns the text of its QR code and the image width. With
// pure, gozxing is told the image is an unrotated code with a quiet zone (PURE_BARCODE),
// which is what the project renders; without it, gozxing searches for finder patterns.
func Decode(b []byte, pure bool) (text string, width int, err error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return "", 0, fmt.Errorf("png: %w", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", 0, fmt.Errorf("bitmap: %w", err)
	}
	hints := map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_CHARACTER_SET: "UTF-8"}
	if pure {
		hints[gozxing.DecodeHintType_PURE_BARCODE] = true
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, hints)
	if err != nil {
		return "", 0, fmt.Errorf("qr: %w", err)
	}
	return res.GetText(), img.Bounds().Dx(), nil
}

package payments

import (
	"context"
	"errors"

	"github.com/pixfoundry/payments/internal/qrpng"
)

// QR image sizes, in pixels per side: the renderer's limits (TestConstants keeps them so).
const (
	MinQRSize     = 600
	MaxQRSize     = 4096
	DefaultQRSize = 1024
)

// QRCodeImage returns a size x size PNG of the BR Code of the charge or static QR code
// with the id (a paymentLinkID, or any id GetCharge or GetPixQRCode accept). Size 0 means
// DefaultQRSize; sizes outside MinQRSize..MaxQRSize are invalid. Images are rendered on
// demand and cached, so a repeat request costs almost nothing. The returned bytes are
// shared with the cache and must not be modified.
func (s *Service) QRCodeImage(ctx context.Context, id string, size int) ([]byte, error) {
	size, err := qrSize(size)
	if err != nil {
		return nil, err
	}
	code, err := s.brCodeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.render(ctx, code, size)
}

// qrSize checks an image size; 0 means DefaultQRSize.
func qrSize(size int) (int, error) {
	if size == 0 {
		size = DefaultQRSize
	}
	if size < MinQRSize || size > MaxQRSize {
		return 0, invalid("size", "size must be between %d and %d", MinQRSize, MaxQRSize)
	}
	return size, nil
}

// render returns the PNG of a BR Code from the shared cache, rendering it on a miss. Renders
// are bounded (qrpng.Renderer): a miss while too many wait for their turn is EUNAVAILABLE,
// to be tried again, and one whose ctx ends while it waits is ECANCELED.
func (s *Service) render(ctx context.Context, code string, size int) ([]byte, error) {
	png, err := s.core.qr.PNGContext(ctx, code, size)
	switch {
	case errors.Is(err, qrpng.ErrSize):
		return nil, invalid("size", "size must be between %d and %d", MinQRSize, MaxQRSize)
	case errors.Is(err, qrpng.ErrBusy):
		return nil, unavailable("", err, "too many QR images are being drawn at once; try again")
	}
	return png, internal(err)
}

// brCodeOf finds the BR Code of a charge or, failing that, of a static QR code.
func (s *Service) brCodeOf(ctx context.Context, id string) (string, error) {
	var code string
	err := s.view(ctx, func(t *txn) error {
		c, err := t.findCharge(id)
		if ok, err := found(err); err != nil || ok {
			code = c.BRCode
			return err
		}
		q, err := t.findPixQRCode(id)
		code = q.BRCode
		return err
	})
	return code, err
}

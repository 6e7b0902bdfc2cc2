package qrpng_test

import (
	"bytes"
	"fmt"
	"image/png"

	"github.com/pixfoundry/payments/internal/qrpng"
)

func ExampleRenderer_PNG() {
	r := qrpng.New(0) // 64 MiB cache
	code := "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"

	b, err := r.PNG(code, qrpng.DefaultSize)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Width, cfg.Height)

	_, err = r.PNG(code, 300)
	fmt.Println(err)
	// Output:
	// 1024 1024
	// qrpng: size must be between 600 and 4096: got 300
}

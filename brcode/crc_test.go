package brcode

import (
	"testing"

	"github.com/matryer/is"
)

func TestCRC16(t *testing.T) {
	is := is.New(t)
	is.Equal(CRC16([]byte("123456789")), uint16(0x29B1)) // CRC-16/CCITT-FALSE check value
	is.Equal(CRC16(nil), uint16(0xFFFF))                 // init value, no xorout
	p01 := "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304"
	is.Equal(CRC16([]byte(p01)), uint16(0x1D3D))     // the manual's static example, "6304" included
	is.Equal(crcString(p01), CRC16([]byte(p01)))     // both implementations agree
	is.Equal(string(appendCRC(nil, 0x0C64)), "0C64") // zero-padded, upper-case
	is.Equal(string(appendCRC(nil, 0x01f3)), "01F3") // idem
}

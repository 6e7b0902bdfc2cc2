package brcode

import (
	"math/rand/v2"
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

// The table-driven CRC16 is the bit-by-bit definition, on inputs of every length and
// every byte value.
func TestCRC16_Table(t *testing.T) {
	is := is.New(t)
	bits := func(data []byte) uint16 {
		crc := uint16(0xFFFF)
		for _, b := range data {
			crc ^= uint16(b) << 8
			for range 8 {
				if crc&0x8000 != 0 {
					crc = crc<<1 ^ 0x1021
				} else {
					crc <<= 1
				}
			}
		}
		return crc
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.UintN(256))
		}
		is.Equal(CRC16(data), bits(data))
		is.Equal(crcString(string(data)), bits(data))
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	is.Equal(CRC16(all), bits(all))
}

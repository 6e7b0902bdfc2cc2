package brcode

// CRC16 returns the CRC-16/CCITT-FALSE of data (polynomial 0x1021, initial value
// 0xFFFF, no reflection, no final XOR), the checksum of BR Code field 63.
// The BR Code CRC covers the UTF-8 bytes of the payload up to and including "6304".
// CRC16([]byte("123456789")) == 0x29B1.
func CRC16(data []byte) uint16 {
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

// crcString is CRC16 over the bytes of s, without copying.
func crcString(s string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
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

const upperHex = "0123456789ABCDEF"

// appendCRC appends crc as 4 upper-case hex digits.
func appendCRC(b []byte, crc uint16) []byte {
	return append(b, upperHex[crc>>12], upperHex[crc>>8&0xF], upperHex[crc>>4&0xF], upperHex[crc&0xF])
}

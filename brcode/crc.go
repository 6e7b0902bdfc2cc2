package brcode

// CRC16 returns the CRC-16/CCITT-FALSE of data (polynomial 0x1021, initial value
// 0xFFFF, no reflection, no final XOR), the checksum of BR Code field 63.
// The BR Code CRC covers the UTF-8 bytes of the payload up to and including "6304".
// CRC16([]byte("123456789")) == 0x29B1.
//
// It works a byte at a time from a table of the 256 byte remainders: every charge's BR
// Code is checksummed when it is made and when it is parsed, and the table does in one
// step what the bit loop does in eight.
func CRC16(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^b]
	}
	return crc
}

// crcString is CRC16 over the bytes of s, without copying.
func crcString(s string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

// crcTable[i] is the CRC register after shifting the byte i through it from zero, bit by
// bit: polynomial division, the definition.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendCRC appends crc as 4 upper-case hex digits.
func appendCRC(b []byte, crc uint16) []byte {
	return append(b, upperHex[crc>>12], upperHex[crc>>8&0xF], upperHex[crc>>4&0xF], upperHex[crc&0xF])
}

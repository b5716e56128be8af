package redis

import "strings"

// KeySlot is Redis Cluster's slot of a key: CRC-16/XMODEM of its hash tag (the text between
// the first '{' and the first '}' after it, if not empty) or of the whole key, modulo 16384.
// go-redis does not export its own.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := range len(key) {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % 16384)
}

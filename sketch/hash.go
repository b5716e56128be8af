package sketch

import "math/bits"

// Hash returns the 64-bit hash of item that Add uses; AddHash must be given
// exactly this value for the item.
//
// It is the wyhash-derived function of the Go runtime's portable memhash
// (runtime/hash64.go) with fixed keys (wyhash's default secrets), so it is
// the same in every process and on every platform: the encoding of a Window
// depends on it, and it never changes within an encoding version.
func Hash(item string) uint64 {
	var a, b uint64
	seed := uint64(hashKey0)
	n := len(item)
	switch {
	case n == 0:
		return mix(hashM5, mix(hashKey1, seed))
	case n < 4:
		a = uint64(item[0]) | uint64(item[n>>1])<<8 | uint64(item[n-1])<<16
	case n < 8:
		a = load32(item, 0)
		b = load32(item, n-4)
	case n <= 16:
		a = load64(item, 0)
		b = load64(item, n-8)
	default:
		p, l := 0, n
		if l > 48 {
			s1, s2 := seed, seed
			for ; l > 48; l -= 48 {
				seed = mix(load64(item, p)^hashKey1, load64(item, p+8)^seed)
				s1 = mix(load64(item, p+16)^hashKey2, load64(item, p+24)^s1)
				s2 = mix(load64(item, p+32)^hashKey3, load64(item, p+40)^s2)
				p += 48
			}
			seed ^= s1 ^ s2
		}
		for ; l > 16; l -= 16 {
			seed = mix(load64(item, p)^hashKey1, load64(item, p+8)^seed)
			p += 16
		}
		a = load64(item, p+l-16)
		b = load64(item, p+l-8)
	}
	return mix(hashM5^uint64(n), mix(a^hashKey1, b^seed))
}

const (
	hashKey0 = 0xa0761d6478bd642f
	hashKey1 = 0xe7037ed1a0b428db
	hashKey2 = 0x8ebc6af09c88c6e3
	hashKey3 = 0x589965cc75374cc3
	hashM5   = 0x1d8e4e27c47d124f
)

// mix folds the 128-bit product of a and b into 64 bits.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// load64 reads 8 bytes of s at i, little-endian; the compiler merges the
// byte loads into one.
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// load32 reads 4 bytes of s at i, little-endian.
func load32(s string, i int) uint64 {
	_ = s[i+3]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24
}

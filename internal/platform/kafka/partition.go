package kafka

import (
	"hash"
)

// Every producer of a keyed topic must put a key in the same partition, or a user's state
// splits across partitions (and a goka table's changelog stops matching its input). Kafka's
// own clients (Java, franz-go's default, librdkafka's murmur2_random) use murmur2 with
// partition = (hash & 0x7fffffff) % n; goka's default is FNV-1a with another sign rule. So
// goka is configured to partition like the Kafka clients, and any producer with default
// settings agrees with it.

// murmur2 is Kafka's key hash as a hash.Hash32. It hashes the whole input at Sum32, which is
// how partitioners use it (Reset, Write the key, Sum32).
type murmur2 struct{ buf []byte }

// NewMurmur2 returns Kafka's default key hash.
func NewMurmur2() hash.Hash32 { return &murmur2{} }

func (m *murmur2) Write(p []byte) (int, error) { m.buf = append(m.buf, p...); return len(p), nil }
func (m *murmur2) Sum(b []byte) []byte {
	s := m.Sum32()
	return append(b, byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
}
func (m *murmur2) Reset()         { m.buf = m.buf[:0] }
func (m *murmur2) Size() int      { return 4 }
func (m *murmur2) BlockSize() int { return 4 }

// Sum32 is murmur2 as in Kafka's Utils.murmur2 (seed 0x9747b28c).
func (m *murmur2) Sum32() uint32 { return murmur2Sum(m.buf) }

// murmur2Sum is murmur2 of b, without allocating.
func murmur2Sum[T string | []byte](b T) uint32 {
	const (
		seed uint32 = 0x9747b28c
		mul  uint32 = 0x5bd1e995
		r           = 24
	)
	h := seed ^ uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= mul
		k ^= k >> r
		k *= mul
		h *= mul
		h ^= k
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= mul
	}
	h ^= h >> 13
	h *= mul
	h ^= h >> 15
	return h
}

// PartitionOf is the partition that Kafka's default partitioner, and goka as configured here,
// give key among n partitions.
func PartitionOf(key string, n int) int32 {
	return int32(murmur2Sum(key)&0x7fffffff) % int32(n)
}

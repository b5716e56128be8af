package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/lovoo/goka/storage"
)

// memStore is a goka table storage in memory, one per partition. goka's own
// storage.MemoryBuilder keeps its keys sorted on every Set (a sort per record: 77% of the
// steps processor's CPU in a profile), so it is unusable past a few thousand keys. This one
// holds no Go pointer per key, so that the collector neither scans nor frees anything per
// record and a key costs no map entry, string or slice header of its own:
//
//   - chunks hold the records one after the other, each its key's length times two plus one
//     if the record is dead and its value's length (uvarints), the key and the value. A
//     record lies in one chunk; a chunk is never reallocated (records go to a new chunk once
//     the last one is full), so the table allocates what it stores once instead of copying
//     one growing slab, and only a record's dead bit changes once it is written: a Set of a
//     key appends a new record and marks the old one dead, so a value Get returned never
//     changes (goka decodes it after the lock is released, and a view reads it from another
//     goroutine).
//   - index is an open-addressing hash table (linear probing, at most 3/4 full) of slots:
//     0 is empty, else the record's place plus one (low 40 bits: its chunk, then its offset
//     in the chunk) and the top 24 bits of the key's hash, which rule out most other keys
//     without reading a chunk. A key belongs in the slot the top bits of its hash name, so
//     that up to 2^24 slots a slot tells where it belongs, and growing the index reads no key.
//
// Once the dead records make up a quarter of the records' bytes, compact copies the live ones,
// in order, into new chunks (values handed out keep their old chunks alive until they are
// dropped), so the table holds at most a third more than its live records, and a Set pays for
// about four records copied in return.
type memStore struct {
	mu     sync.RWMutex
	seed   maphash.Seed
	chunks [][]byte
	index  []uint64
	shift  int // 64 minus the bits of an index position: a hash's top bits name its slot
	keys   int // live records
	size   int // bytes of records in chunks, live and dead
	dead   int // bytes of dead records
	offset int64
	hasOff bool
}

const (
	slotRefBits = 40
	slotRefMask = 1<<slotRefBits - 1
	// chunkBits are the bits of a record's offset in its chunk in a slot's place: a chunk
	// takes up to 2^chunkBits bytes of records (64 KiB; a larger record takes a chunk of its
	// own, at offset 0), and a partition up to 2^(40-chunkBits) chunks.
	chunkBits = 16
	chunkSize = 1 << chunkBits
	maxChunks = 1 << (slotRefBits - chunkBits)
	// minChunk is the size of a table's first chunk; each new chunk is as large as the
	// records so far, up to chunkSize, so that a small table stays small.
	minChunk = 512
	// minIndex is the slots of an empty table's index.
	minIndex = 64
	// minCompact is the dead bytes below which the records are never compacted: a small
	// table would copy itself over and over for little.
	minCompact = 64 << 10
)

// errSlabFull: a partition's records do not fit the 40 bits of a slot's place (about 1 TiB).
var errSlabFull = errors.New("kafka: in-memory table: a partition holds 1 TiB of records")

func memoryBuilder() storage.Builder {
	return func(string, int32) (storage.Storage, error) { return newMemStore(), nil }
}

func newMemStore() *memStore {
	m := &memStore{seed: maphash.MakeSeed()}
	m.setIndex(make([]uint64, minIndex))
	return m
}

func (m *memStore) Open() error          { return nil }
func (m *memStore) Close() error         { return nil }
func (m *memStore) MarkRecovered() error { return nil }

// record returns the key and the value of the record at off in chunk, and where it ends. The
// value's capacity ends with it, so that appending to it cannot write into the chunk.
func record(chunk []byte, off int) (key, value []byte, end int) {
	kl, n1 := binary.Uvarint(chunk[off:])
	kl >>= 1 // the dead bit
	vl, n2 := binary.Uvarint(chunk[off+n1:])
	k := off + n1 + n2
	v := k + int(kl)
	end = v + int(vl)
	return chunk[k:v], chunk[v:end:end], end
}

// place returns the chunk and the offset of the record of slot s.
func (m *memStore) place(s uint64) (chunk []byte, off int) {
	p := s&slotRefMask - 1
	return m.chunks[p>>chunkBits], int(p & (chunkSize - 1))
}

// slotRecord returns the key and the value of the record of slot s.
func (m *memStore) slotRecord(s uint64) (key, value []byte) {
	k, v, _ := record(m.place(s))
	return k, v
}

// find returns the slot of key (hash h) in the index, and whether it holds key; if not, the
// slot is the empty one where key belongs.
func (m *memStore) find(key string, h uint64) (int, bool) {
	mask := len(m.index) - 1
	tag := h >> slotRefBits
	for i := int(h >> m.shift); ; i = (i + 1) & mask {
		s := m.index[i]
		if s == 0 {
			return i, false
		}
		if s>>slotRefBits == tag {
			if k, _ := m.slotRecord(s); string(k) == key {
				return i, true
			}
		}
	}
}

// home is the slot where the record of slot s belongs: the top bits of its tag while the
// index has at most 2^24 slots, else of its key's hash.
func (m *memStore) home(s uint64) int {
	if m.shift >= slotRefBits {
		return int(s >> m.shift)
	}
	k, _ := m.slotRecord(s)
	return int(maphash.Bytes(m.seed, k) >> m.shift)
}

// setIndex makes index (of a power of two slots) the store's.
func (m *memStore) setIndex(index []uint64) {
	m.index, m.shift = index, 64-bits.TrailingZeros(uint(len(index)))
}

func (m *memStore) Has(key string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.find(key, maphash.String(m.seed, key))
	return ok, nil
}

// Get returns the key's value, nil if there is none. The value is never modified afterwards.
func (m *memStore) Get(key string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i, ok := m.find(key, maphash.String(m.seed, key))
	if !ok {
		return nil, nil
	}
	_, v := m.slotRecord(m.index[i])
	return v, nil
}

// Set stores a copy of value.
func (m *memStore) Set(key string, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := maphash.String(m.seed, key)
	i, ok := m.find(key, h)
	if ok {
		chunk, off := m.place(m.index[i])
		if _, v, _ := record(chunk, off); bytes.Equal(v, value) {
			return nil
		}
	}
	n := varintLen(uint64(len(key))<<1) + varintLen(uint64(len(value))) + len(key) + len(value)
	place, err := m.reserve(n, min(chunkSize, max(minChunk, m.size))) // a small table stays small
	if err != nil {
		return err
	}
	last := &m.chunks[len(m.chunks)-1]
	*last = binary.AppendUvarint(*last, uint64(len(key))<<1)
	*last = binary.AppendUvarint(*last, uint64(len(value)))
	*last = append(append(*last, key...), value...)
	if ok {
		m.kill(m.index[i])
	} else {
		if (m.keys+1)*4 > len(m.index)*3 {
			m.resize(len(m.index) * 2)
			i, _ = m.find(key, h)
		}
		m.keys++
	}
	m.index[i] = h>>slotRefBits<<slotRefBits | place
	m.compactIfWasteful()
	return nil
}

// reserve makes room for a record of n bytes at the end of the last chunk, in a new chunk of
// size bytes (n if more) if it does not fit there, and returns the record's place plus one (a
// slot's low bits); the caller appends the record to the last chunk.
func (m *memStore) reserve(n, size int) (uint64, error) {
	last := len(m.chunks) - 1
	if last < 0 || cap(m.chunks[last])-len(m.chunks[last]) < n {
		if len(m.chunks) == maxChunks {
			return 0, errSlabFull
		}
		m.chunks = append(m.chunks, make([]byte, 0, max(n, size)))
		last++
	}
	m.size += n
	return uint64(last)<<chunkBits | uint64(len(m.chunks[last])) + 1, nil
}

// varintLen is the length of x as a uvarint.
func varintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// kill marks the record of slot s dead.
func (m *memStore) kill(s uint64) {
	chunk, off := m.place(s)
	_, _, end := record(chunk, off)
	chunk[off] |= 1
	m.dead += end - off
}

func (m *memStore) Delete(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.find(key, maphash.String(m.seed, key))
	if !ok {
		return nil
	}
	m.kill(m.index[i])
	m.keys--
	// Backward-shift deletion: move up every following record of the run that may sit in
	// the freed slot, so that no probe stops early at a hole.
	mask := len(m.index) - 1
	for j := (i + 1) & mask; m.index[j] != 0; j = (j + 1) & mask {
		if (j-m.home(m.index[j]))&mask >= (j-i)&mask {
			m.index[i] = m.index[j]
			i = j
		}
	}
	m.index[i] = 0
	if m.keys == 0 { // nothing live: start over, the dead records with the old chunks
		m.chunks, m.size, m.dead = nil, 0, 0
		clear(m.index)
		return nil
	}
	m.compactIfWasteful()
	return nil
}

// resize rebuilds the index with n slots (a power of two).
func (m *memStore) resize(n int) {
	old := m.index
	m.setIndex(make([]uint64, n))
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := m.home(s)
		for m.index[i] != 0 {
			i = (i + 1) & (n - 1)
		}
		m.index[i] = s
	}
}

// compactIfWasteful copies the live records into new chunks once the dead ones make up a
// quarter of the records' bytes. It reads the chunks in order, which costs a look-up in the
// index per live record but no random read of a chunk. The look-up finds the slot naming the
// record's old place among slots of which some name new places already; none of those is the
// place of a record still to be moved, because no record's new place passes its old one: the
// live records are packed in order into chunks of chunkSize, at least as large as any old
// chunk (but a record's own), so each lands in a chunk no later than its old one, and in the
// same chunk only after records of that chunk that came before it.
func (m *memStore) compactIfWasteful() {
	if m.dead < minCompact || m.dead*4 < m.size {
		return
	}
	old := m.chunks
	m.chunks, m.size, m.dead = make([][]byte, 0, len(old)), 0, 0
	mask := len(m.index) - 1
	for c, chunk := range old {
		for off := 0; off < len(chunk); {
			k, _, end := record(chunk, off)
			if chunk[off]&1 == 0 {
				i := int(maphash.Bytes(m.seed, k) >> m.shift)
				for at := uint64(c)<<chunkBits | uint64(off) + 1; m.index[i]&slotRefMask != at; {
					i = (i + 1) & mask
				}
				place, _ := m.reserve(end-off, chunkSize) // never full: it holds less than before
				last := &m.chunks[len(m.chunks)-1]
				*last = append(*last, chunk[off:end]...)
				m.index[i] = m.index[i]&^slotRefMask | place
			}
			off = end
		}
	}
}

func (m *memStore) GetOffset(def int64) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.hasOff {
		return def, nil
	}
	return m.offset, nil
}

func (m *memStore) SetOffset(offset int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offset, m.hasOff = offset, true
	return nil
}

func (m *memStore) Iterator() (storage.Iterator, error) { return m.IteratorWithRange(nil, nil) }

// IteratorWithRange iterates over a sorted snapshot of the keys in [start, limit).
func (m *memStore) IteratorWithRange(start, limit []byte) (storage.Iterator, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	type kv struct {
		key   string
		value []byte
	}
	var recs []kv
	for _, s := range m.index {
		if s == 0 {
			continue
		}
		k, v := m.slotRecord(s)
		if (start == nil || string(k) >= string(start)) && (limit == nil || string(k) < string(limit)) {
			recs = append(recs, kv{string(k), v})
		}
	}
	slices.SortFunc(recs, func(a, b kv) int { return strings.Compare(a.key, b.key) })
	it := &memIter{keys: make([]string, len(recs)), vals: make([][]byte, len(recs)), pos: -1}
	for i, r := range recs {
		it.keys[i], it.vals[i] = r.key, r.value
	}
	return it, nil
}

type memIter struct {
	keys []string
	vals [][]byte
	pos  int
}

func (it *memIter) Next() bool { it.pos++; return it.pos < len(it.keys) }
func (it *memIter) Err() error { return nil }
func (it *memIter) Release()   { it.pos = len(it.keys) }

func (it *memIter) Key() []byte {
	if it.pos < 0 || it.pos >= len(it.keys) {
		return nil
	}
	return []byte(it.keys[it.pos])
}

func (it *memIter) Value() ([]byte, error) {
	if it.pos < 0 || it.pos >= len(it.vals) {
		return nil, nil
	}
	return it.vals[it.pos], nil
}

// Seek positions the iterator so that the next Next lands on the first key >= key.
func (it *memIter) Seek(key []byte) bool {
	i, _ := slices.BinarySearch(it.keys, string(key))
	it.pos = i - 1
	return i < len(it.keys)
}

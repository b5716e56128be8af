package kafka

import (
	"slices"
	"sync"

	"github.com/lovoo/goka/storage"
)

// memStore is a goka table storage in a map. goka's own storage.MemoryBuilder keeps its keys
// sorted on every Set (a sort per record: 77% of the steps processor's CPU in a profile), so
// it is unusable past a few thousand keys. This one costs a map write per Set and sorts only
// when somebody iterates, which the processors never do on their hot path.
type memStore struct {
	mu     sync.RWMutex
	data   map[string][]byte
	offset int64
	hasOff bool
}

func memoryBuilder() storage.Builder {
	return func(string, int32) (storage.Storage, error) {
		return &memStore{data: make(map[string][]byte)}, nil
	}
}

func (m *memStore) Open() error          { return nil }
func (m *memStore) Close() error         { return nil }
func (m *memStore) MarkRecovered() error { return nil }

func (m *memStore) Has(key string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.data[key]
	return ok, nil
}

func (m *memStore) Get(key string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.data[key], nil
}

func (m *memStore) Set(key string, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[key] = value
	return nil
}

func (m *memStore) Delete(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, key)
	return nil
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
	var keys []string
	for k := range m.data {
		if (start == nil || k >= string(start)) && (limit == nil || k < string(limit)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		vals[i] = m.data[k]
	}
	return &memIter{keys: keys, vals: vals, pos: -1}, nil
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

package kafka

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestMemStore(t *testing.T) {
	s, err := memoryBuilder()("topic", 0)
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := s.GetOffset(-2); off != -2 {
		t.Fatalf("fresh offset = %d, want the default", off)
	}
	for i := range 100 {
		k := strconv.Itoa(1000 + i)
		if err := s.Set(k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Delete("1050")
	_ = s.SetOffset(42)
	if off, _ := s.GetOffset(-2); off != 42 {
		t.Fatalf("offset = %d", off)
	}
	if v, _ := s.Get("1007"); string(v) != "1007" {
		t.Fatalf("Get = %q", v)
	}
	if ok, _ := s.Has("1050"); ok {
		t.Fatal("deleted key still there")
	}
	it, _ := s.IteratorWithRange([]byte("1010"), []byte("1060"))
	var keys []string
	for it.Next() {
		v, _ := it.Value()
		if string(v) != string(it.Key()) {
			t.Fatalf("value %q for key %q", v, it.Key())
		}
		keys = append(keys, string(it.Key()))
	}
	if len(keys) != 49 || keys[0] != "1010" || keys[48] != "1059" {
		t.Fatalf("range iteration: %d keys %v", len(keys), keys)
	}
	it, _ = s.Iterator()
	if !it.Seek([]byte("1095")) || !it.Next() || string(it.Key()) != "1095" {
		t.Fatal("seek")
	}
}

// memOp is one step of a memStore script: set key to value, or delete key (del).
type memOp struct {
	key   string
	value []byte
	del   bool
}

// TestMemStoreScripts runs scripts of Sets and Deletes, each checked against a map after
// every step: extreme keys and values, overwrites with bigger and smaller values, deletes of
// keys in a probe run, and enough overwrites to compact the records many times.
func TestMemStoreScripts(t *testing.T) {
	huge := bytes.Repeat([]byte("h"), 3<<20)
	set := func(k, v string) memOp { return memOp{key: k, value: []byte(v)} }
	del := func(k string) memOp { return memOp{key: k, del: true} }
	var churn, grow, drain []memOp
	for i := range 60_000 { // 200 keys overwritten 300 times with values of 0 to 2 KiB
		churn = append(churn, memOp{key: fmt.Sprint("k", i%200), value: bytes.Repeat([]byte{byte(i)}, i*7%2048)})
	}
	for i := range 5_000 { // an index growing from 64 slots to 8,192
		grow = append(grow, set(strconv.Itoa(i), strconv.Itoa(i*i)))
	}
	drain = append(drain, grow...)
	for i := range 5_000 { // then empty again, in another order
		drain = append(drain, del(strconv.Itoa(i*7919%5000)))
	}
	for _, tc := range []struct {
		name string
		ops  []memOp
	}{
		{"empty value", []memOp{set("a", ""), set("b", "x"), set("a", "")}},
		{"empty key", []memOp{set("", "v"), set("a", "w"), set("", ""), del(""), set("", "z")}},
		{"bigger then smaller", []memOp{set("a", "1"), set("a", strings.Repeat("2", 300)), set("a", "3"), set("b", "4")}},
		{"huge value", []memOp{set("a", "x"), {key: "h", value: huge}, set("a", "y"), {key: "h", value: huge[1:]}, del("h")}},
		{"huge key", []memOp{set(strings.Repeat("k", 100_000), "v"), set("k", "w"), del(strings.Repeat("k", 100_000))}},
		{"delete missing", []memOp{del("a"), set("a", "1"), del("b"), del("a"), del("a")}},
		{"delete all then set", []memOp{set("a", "1"), set("b", "2"), del("a"), del("b"), set("c", "3")}},
		{"same value again", []memOp{set("a", "1"), set("a", "1"), set("a", "2")}},
		{"churn", churn},
		{"grow", grow},
		{"drain", drain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemStore()
			want := map[string][]byte{}
			for n, op := range tc.ops {
				var err error
				if op.del {
					err = m.Delete(op.key)
					delete(want, op.key)
				} else {
					err = m.Set(op.key, op.value)
					want[op.key] = op.value
				}
				if err != nil {
					t.Fatalf("op %d: %v", n, err)
				}
				if n%97 == 0 || n == len(tc.ops)-1 {
					checkMemStore(t, m, want)
				}
			}
		})
	}
}

// checkMemStore checks that m holds exactly want, that its dead records make up at most a
// quarter of its records (beyond the bytes it may always leave), and its chunks (checkChunks).
func checkMemStore(t *testing.T, m *memStore, want map[string][]byte) {
	t.Helper()
	if m.keys != len(want) {
		t.Fatalf("%d keys, want %d", m.keys, len(want))
	}
	for k, v := range want {
		got, _ := m.Get(k)
		if ok, _ := m.Has(k); !ok || !bytes.Equal(got, v) || got == nil {
			t.Fatalf("key %.20q: has %v, value %.20q (nil %v), want %.20q", k, ok, got, got == nil, v)
		}
	}
	for _, k := range []string{"missing", "k-1"} {
		if _, there := want[k]; there {
			continue
		}
		if v, _ := m.Get(k); v != nil {
			t.Fatalf("missing key %q has value %q", k, v)
		}
		if ok, _ := m.Has(k); ok {
			t.Fatalf("missing key %q is there", k)
		}
	}
	if m.dead >= minCompact && m.dead*4 > m.size {
		t.Fatalf("%d dead bytes in records of %d", m.dead, m.size)
	}
	checkChunks(t, m)
	it, _ := m.Iterator()
	var keys []string
	for it.Next() {
		v, _ := it.Value()
		if !bytes.Equal(v, want[string(it.Key())]) {
			t.Fatalf("iterator: key %.20q has %.20q", it.Key(), v)
		}
		keys = append(keys, string(it.Key()))
	}
	if !slices.Equal(keys, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("iterator: %d keys, want %d sorted", len(keys), len(want))
	}
}

// checkChunks checks m's chunks against its counts: each chunk is a run of whole records
// within its capacity, of at most chunkSize bytes unless it holds one record; the records'
// bytes, the dead ones' and the live records add up to size, dead and keys, and every live
// record is the one its key's slot names.
func checkChunks(t *testing.T, m *memStore) {
	t.Helper()
	size, dead, live := 0, 0, 0
	for c, chunk := range m.chunks {
		if cap(chunk) > chunkSize {
			if _, _, end := record(chunk, 0); end != len(chunk) || cap(chunk) != len(chunk) {
				t.Fatalf("chunk %d of capacity %d holds more than one record", c, cap(chunk))
			}
		}
		for off := 0; off < len(chunk); {
			k, _, end := record(chunk, off)
			if end > len(chunk) {
				t.Fatalf("chunk %d: the record at %d ends at %d, past the chunk's %d bytes", c, off, end, len(chunk))
			}
			if chunk[off]&1 != 0 {
				dead += end - off
			} else {
				live++
				i, ok := m.find(string(k), maphash.Bytes(m.seed, k))
				if want := uint64(c)<<chunkBits | uint64(off) + 1; !ok || m.index[i]&slotRefMask != want {
					t.Fatalf("chunk %d: the live record of %.20q at %d is not its slot's (%v)", c, k, off, ok)
				}
			}
			size += end - off
			off = end
		}
	}
	if size != m.size || dead != m.dead || live != m.keys {
		t.Fatalf("chunks hold %d bytes, %d dead, %d live records; the store counts %d, %d, %d", size, dead, live, m.size, m.dead, m.keys)
	}
}

// TestMemStoreCompactionFromSmallChunks compacts tables whose first chunks are small, under
// 30 seeds (the hashes decide which slots a compaction's look-ups pass): compact must find
// every live record's slot while the slots of the records moved before it name new places.
func TestMemStoreCompactionFromSmallChunks(t *testing.T) {
	for range 30 {
		m := newMemStore()
		want := map[string][]byte{}
		compactions := 0
		for i := range 3_000 {
			k, v := fmt.Sprint("k", i%150), bytes.Repeat([]byte{byte(i)}, i*7%2048)
			size := m.size
			if err := m.Set(k, v); err != nil {
				t.Fatal(err)
			}
			want[k] = v
			if m.size < size {
				compactions++
				checkMemStore(t, m, want)
			}
		}
		if compactions == 0 {
			t.Fatal("no compaction: the test tests nothing")
		}
	}
}

// TestMemStoreValuesStay checks that a value Get or an iterator returned never changes,
// whatever happens to the store afterwards (overwrites, compactions, deletes), and that
// appending to it does not write into the store.
func TestMemStoreValuesStay(t *testing.T) {
	m := newMemStore()
	for i := range 1000 {
		_ = m.Set(strconv.Itoa(i), []byte("first"+strconv.Itoa(i)))
	}
	kept := map[string][]byte{}
	for i := range 1000 {
		k := strconv.Itoa(i)
		kept[k], _ = m.Get(k)
	}
	it, _ := m.Iterator()
	_ = it.Seek([]byte("500"))
	_ = it.Next()
	iterValue, _ := it.Value()
	v, _ := m.Get("7")
	_ = append(v, "XXXX"...) // must not overwrite the next record
	compactions := 0
	for round := range 200 {
		for i := range 1000 {
			if size := m.size; m.Set(strconv.Itoa(i), bytes.Repeat([]byte{byte(round)}, i%50)) != nil || m.size < size {
				compactions++
			}
		}
	}
	_ = m.Delete("3")
	if compactions == 0 {
		t.Fatal("no compaction: the test tests nothing")
	}
	for k, v := range kept {
		if string(v) != "first"+k {
			t.Fatalf("value of %s changed to %q", k, v)
		}
	}
	if string(iterValue) != "first500" {
		t.Fatalf("iterator value changed to %q", iterValue)
	}
}

// TestMemStoreConcurrent reads values while another goroutine rewrites them (run with -race):
// a view reads a table from other goroutines than its updater.
func TestMemStoreConcurrent(t *testing.T) {
	m := newMemStore()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50_000 {
			_ = m.Set(strconv.Itoa(i%500), []byte(strconv.Itoa(i)))
			if i%1000 == 0 {
				_ = m.Delete(strconv.Itoa(i % 500))
			}
		}
	})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		k := strconv.Itoa(rng.IntN(500))
		v, _ := m.Get(k)
		if len(v) > 0 {
			if n, err := strconv.Atoi(string(v)); err != nil || strconv.Itoa(n%500) != k {
				t.Fatalf("key %s has value %q", k, v)
			}
		}
	}
	wg.Wait()
}

// BenchmarkMemStore sets and gets the values of 200k keys (the steps bench's users, one
// partition holding them all) the way the steps processor does: a Get, then a Set of a
// value a few bytes longer.
func BenchmarkMemStore(b *testing.B) {
	const users = 200_000
	keys := make([]string, users)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%07d", i)
	}
	m, _ := memoryBuilder()("topic", 0)
	value := make([]byte, 64)
	for _, k := range keys {
		_ = m.Set(k, value[:40])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := keys[i*7919%users]
		v, _ := m.Get(k)
		_ = m.Set(k, value[:40+(len(v)-39)%24])
	}
}

// TestMemStoreSlotTellsItsHome: up to 2^24 slots the tag of a slot names the slot where its
// key belongs (growing the index and deleting rely on it), as the key's hash does.
func TestMemStoreSlotTellsItsHome(t *testing.T) {
	m := newMemStore()
	for i := range 20_000 {
		_ = m.Set(fmt.Sprint("user-", i), []byte{byte(i)})
		if i%1000 != 0 {
			continue
		}
		for _, s := range m.index {
			if s == 0 {
				continue
			}
			k, _ := m.slotRecord(s)
			if got, want := m.home(s), int(maphash.Bytes(m.seed, k)>>m.shift); got != want {
				t.Fatalf("%d slots: the slot of %q names slot %d, its hash %d", len(m.index), k, got, want)
			}
		}
	}
}

// BenchmarkMemStoreFill fills an empty store with 25k keys, a partition of the steps slice's
// 200k users (or of a table recovered from its changelog), each set twice with a value a few
// bytes longer the second time: the index grows from 64 slots to 32k and the chunks from
// nothing. An op is one whole fill.
func BenchmarkMemStoreFill(b *testing.B) {
	const users = 25_000
	keys := make([]string, users)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%07d", i*8)
	}
	value := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		m := newMemStore()
		for _, k := range keys {
			_ = m.Set(k, value[:40])
		}
		for _, k := range keys {
			v, _ := m.Get(k)
			_ = m.Set(k, value[:len(v)+8])
		}
	}
}

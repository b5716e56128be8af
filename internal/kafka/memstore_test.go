package kafka

import (
	"strconv"
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

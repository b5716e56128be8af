package hot

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

func TestCheckpointRoundTrip(t *testing.T) {
	win, err := sketch.New(sketch.WithWindow(time.Minute), sketch.WithSlide(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	start := time.UnixMilli(1_700_000_000_000)
	for i := range 5000 {
		win.Add([]string{"a", "b", "c", "d"}[i%4]+string(rune('a'+i%26)), start.Add(time.Duration(i)*10*time.Millisecond))
	}
	raw, err := win.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	in := &checkpoint{loopOffset: 123456, endMs: 1_700_000_030_000, dropped: 17, held: []heldTerm{{1_700_000_900_000, "snow"}, {1_700_000_950_000, ""}}, shape: shape{60_000, 1000, 300_000, 100},
		seen: map[int32]int64{0: 10, 7: 99}, marks: map[int32]int64{0: 5, 3: 6, 7: 8}, first: map[int32]int64{}, window: raw}
	b := in.encode()
	out, err := decodeCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %+v, want %+v", out, in)
	}
	back := new(sketch.Window)
	if err := back.UnmarshalBinary(out.window); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.TopK(), win.TopK()) {
		t.Fatal("window differs after the round trip")
	}
	// Every truncation of the fixed part and a wrong version are refused; none panics.
	for n := range 1 + 7*8 + 3*4 + 4 {
		if _, err := decodeCheckpoint(b[:n]); !errors.Is(err, errBadCheckpoint) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	bad := append([]byte{checkpointVersion + 1}, b[1:]...)
	if _, err := decodeCheckpoint(bad); !errors.Is(err, errBadCheckpoint) {
		t.Fatalf("version %d: %v", bad[0], err)
	}
	// A version 1 checkpoint (no dropped count) reads with dropped 0.
	v1 := (&checkpoint{loopOffset: 5, shape: in.shape, seen: in.seen, marks: in.marks, first: in.first, window: raw}).encode()
	v1 = append(append([]byte{1}, v1[1:1+2*8]...), v1[1+3*8:]...) // no dropped
	heldAt := len(v1) - len(raw) - 4
	v1 = append(v1[:heldAt:heldAt], raw...) // no held
	if old, err := decodeCheckpoint(v1); err != nil || old.dropped != 0 || old.held != nil || old.loopOffset != 5 || !reflect.DeepEqual(old.marks, in.marks) || len(old.window) != len(raw) {
		t.Fatalf("version 1: %+v, %v", old, err)
	}
	huge := append([]byte(nil), b...)
	huge[1+7*8] = 0xff // a map count larger than the bytes left
	if _, err := decodeCheckpoint(huge); !errors.Is(err, errBadCheckpoint) {
		t.Fatalf("oversized count: %v", err)
	}
}

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add((&checkpoint{seen: map[int32]int64{1: 2}, marks: map[int32]int64{}, first: map[int32]int64{3: 4}, held: []heldTerm{{5, "x"}}, window: []byte{9}}).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		again, err := decodeCheckpoint(c.encode())
		if err != nil || !reflect.DeepEqual(c, again) {
			t.Fatalf("re-encoding %x: %v", b, err)
		}
	})
}

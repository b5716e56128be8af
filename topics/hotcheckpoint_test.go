package topics

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
	in := &HotCheckpoint{LoopOffset: 123456, EndMs: 1_700_000_030_000, Dropped: 17, Held: []HotHeldTerm{{1_700_000_900_000, "snow"}, {1_700_000_950_000, ""}}, Shape: HotShape{60_000, 1000, 300_000, 100},
		Seen: map[int32]int64{0: 10, 7: 99}, Marks: map[int32]int64{0: 5, 3: 6, 7: 8}, First: map[int32]int64{}, Idle: []int32{1, 4}, Live: []int32{0, 7}, Window: raw}
	b := in.Encode()
	out, err := DecodeHotCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %+v, want %+v", out, in)
	}
	back := new(sketch.Window)
	if err := back.UnmarshalBinary(out.Window); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.TopK(), win.TopK()) {
		t.Fatal("window differs after the round trip")
	}
	// Every truncation of the fixed part and a wrong version are refused; none panics.
	for n := range 1 + 7*8 + 3*4 + 4 {
		if _, err := DecodeHotCheckpoint(b[:n]); !errors.Is(err, ErrBadHotCheckpoint) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	bad := append([]byte{HotCheckpointVersion + 1}, b[1:]...)
	if _, err := DecodeHotCheckpoint(bad); !errors.Is(err, ErrBadHotCheckpoint) {
		t.Fatalf("version %d: %v", bad[0], err)
	}
	// A version 2 checkpoint (no Idle) reads with Idle nil.
	v2 := (&HotCheckpoint{LoopOffset: 5, Shape: in.Shape, Seen: in.Seen, Marks: in.Marks, First: in.First, Window: raw}).Encode()
	v2[0] = 2
	idleAt := len(v2) - len(raw) - 8
	v2 = append(v2[:idleAt:idleAt], raw...) // no Idle nor Live
	if old, err := DecodeHotCheckpoint(v2); err != nil || old.Idle != nil || old.LoopOffset != 5 || !reflect.DeepEqual(old.Marks, in.Marks) || len(old.Window) != len(raw) {
		t.Fatalf("version 2: %+v, %v", old, err)
	}
	// A version 1 checkpoint (no Dropped count) reads with Dropped 0.
	v1 := append(append([]byte{1}, v2[1:1+2*8]...), v2[1+3*8:]...) // no Dropped
	heldAt := len(v1) - len(raw) - 4
	v1 = append(v1[:heldAt:heldAt], raw...) // no Held
	if old, err := DecodeHotCheckpoint(v1); err != nil || old.Dropped != 0 || old.Held != nil || old.LoopOffset != 5 || !reflect.DeepEqual(old.Marks, in.Marks) || len(old.Window) != len(raw) {
		t.Fatalf("version 1: %+v, %v", old, err)
	}
	huge := append([]byte(nil), b...)
	huge[1+7*8] = 0xff // a map count larger than the bytes left
	if _, err := DecodeHotCheckpoint(huge); !errors.Is(err, ErrBadHotCheckpoint) {
		t.Fatalf("oversized count: %v", err)
	}
}

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add((&HotCheckpoint{Seen: map[int32]int64{1: 2}, Marks: map[int32]int64{}, First: map[int32]int64{3: 4}, Held: []HotHeldTerm{{5, "x"}}, Idle: []int32{6}, Window: []byte{9}}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeHotCheckpoint(b)
		if err != nil {
			return
		}
		again, err := DecodeHotCheckpoint(c.Encode())
		if err != nil || !reflect.DeepEqual(c, again) {
			t.Fatalf("re-encoding %x: %v", b, err)
		}
	})
}

package sketch

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch/exact"
)

// randomWindow builds a small window with a random shape and history.
func randomWindow(seed uint64, ops int) (*Window, *exact.Counter, *stream) {
	rng := rand.New(rand.NewPCG(seed, 11))
	cfg := randomConfig(rng)
	w, o := newWindow(cfg), newExact(cfg)
	st := newStream(seed, 3+rng.IntN(30))
	for range ops {
		st.step(w, o)
	}
	return w, o, st
}

func mustMarshal(t testing.TB, w *Window) []byte {
	t.Helper()
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundTripContinuesIdentically checks that a restored window has the
// same encoding and, fed the same operations as the original, stays
// byte-identical to it: a replay from a checkpoint gives the same results.
func TestRoundTripContinuesIdentically(t *testing.T) {
	for seed := range uint64(40) {
		w, o, st := randomWindow(seed, int(seed*7)%300)
		enc := mustMarshal(t, w)
		var r Window
		if err := r.UnmarshalBinary(enc); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got := mustMarshal(t, &r); !bytes.Equal(got, enc) {
			t.Fatalf("seed %d: re-encoding differs", seed)
		}
		// Continue both with the same operations (same stream state).
		st2 := st.clone()
		o2 := o.Clone()
		for i := range 200 {
			st.step(w, o)
			st2.step(&r, o2)
			if a, b := mustMarshal(t, w), mustMarshal(t, &r); !bytes.Equal(a, b) {
				t.Fatalf("seed %d: diverged after %d operations", seed, i+1)
			}
		}
		verify(t, &r, o, st.items)
	}
}

// TestSameInputSameBytes checks determinism: the same operations from a
// fresh window give byte-identical states and Top-K lists.
func TestSameInputSameBytes(t *testing.T) {
	for seed := range uint64(10) {
		a, _, _ := randomWindow(seed, 400)
		b, _, _ := randomWindow(seed, 400)
		if !bytes.Equal(mustMarshal(t, a), mustMarshal(t, b)) {
			t.Fatalf("seed %d: same input, different states", seed)
		}
	}
}

// TestUnmarshalRejectsGarbage checks the errors for broken encodings and
// that the receiver is left untouched.
func TestUnmarshalRejectsGarbage(t *testing.T) {
	w, _, _ := randomWindow(3, 250)
	enc := mustMarshal(t, w)
	target, _, _ := randomWindow(4, 100)
	before := mustMarshal(t, target)
	try := func(name string, data []byte, want error) {
		t.Helper()
		err := target.UnmarshalBinary(data)
		if !errors.Is(err, want) {
			t.Fatalf("%s: error %v, want %v", name, err, want)
		}
		if !bytes.Equal(mustMarshal(t, target), before) {
			t.Fatalf("%s: receiver changed on error", name)
		}
	}
	try("empty", nil, ErrCorrupt)
	try("version 0", append([]byte{0}, enc[1:]...), ErrVersion)
	try("version 2", append([]byte{2}, enc[1:]...), ErrVersion)
	try("trailing byte", append(bytes.Clone(enc), 0), ErrCorrupt)
	for n := 1; n < len(enc); n++ {
		try("truncated", enc[:n], ErrCorrupt)
	}
	// A width of 1 is invalid; a non-minimal varint is not canonical.
	try("bad width", append([]byte{1, 1}, enc[2:]...), ErrCorrupt)
	try("long varint", append([]byte{1, enc[1] | 0x80, 0}, enc[2:]...), ErrCorrupt)
	rng := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		bad := bytes.Clone(enc)
		bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		var r Window
		if err := r.UnmarshalBinary(bad); err == nil {
			// A flip may give another valid state: then it is canonical.
			if !bytes.Equal(mustMarshal(t, &r), bad) {
				t.Fatal("accepted a flipped encoding that does not re-encode identically")
			}
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("flip: error %v wraps neither ErrCorrupt nor ErrVersion", err)
		}
	}
}

// FuzzUnmarshalBinary feeds arbitrary bytes to UnmarshalBinary: it must
// never panic, must leave the receiver untouched on error, and whatever it
// accepts must be a valid state that re-encodes to the same bytes.
func FuzzUnmarshalBinary(f *testing.F) {
	// Small seeds, so that the fuzzer's minimisation of new inputs is quick.
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 12))
		cfg := randomConfig(rng)
		cfg.width = 16
		w, o := newWindow(cfg), newExact(cfg)
		st := newStream(seed, 6)
		for range 10 + 10*int(seed) {
			st.step(w, o)
		}
		f.Add(mustMarshal(f, w))
	}
	f.Add([]byte{encodingVersion})
	// A window whose counters need 32 bits (counters.go), so that the
	// fuzzer also starts from a wide state.
	big := newWidthsCase(f)
	big.advance(0)
	big.add(big.items[0], 100_000, 0)
	big.add(big.items[1], 70_000, 0)
	if !big.narrow.wide {
		f.Fatal("the wide seed has 16-bit counters")
	}
	f.Add(mustMarshal(f, big.narrow))
	base, _, _ := randomWindow(99, 50)
	before := mustMarshal(f, base)
	f.Fuzz(func(t *testing.T, data []byte) {
		var target Window // a fresh receiver each time, so no input affects another
		if err := target.UnmarshalBinary(before); err != nil {
			t.Fatal(err)
		}
		if err := target.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrVersion", err)
			}
			if !bytes.Equal(mustMarshal(t, &target), before) {
				t.Fatal("receiver changed on error")
			}
			return
		}
		if err := target.check(); err != nil {
			t.Fatalf("accepted an invalid state: %v", err)
		}
		if got := mustMarshal(t, &target); !bytes.Equal(got, data) {
			t.Fatal("accepted an encoding that does not re-encode identically")
		}
		// The restored window works.
		target.Add("x", time.Unix(0, target.end*int64(target.cfg.slide)))
		target.Advance(time.Unix(0, (target.end+1)*int64(target.cfg.slide)))
		_ = target.TopK()
		if err := target.check(); err != nil {
			t.Fatalf("after use: %v", err)
		}
	})
}

// goldenWindow builds the window of testdata/checkpoint-v1.bin, encoded by
// commit 43606e2 (encoding version 1): default options but
// for K and candidates, 30000 skewed events of short and long items over 20
// minutes, the watermark moving every 40 s.
func goldenWindow(t *testing.T) *Window {
	t.Helper()
	w, err := New(WithK(10), WithCandidates(40))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	x := uint64(1)
	for i := range 30000 {
		x = x*6364136223846793005 + 1442695040888963407
		r := int(x>>33) % 1000
		id := r * r / 10000 // skewed towards small ids
		item := fmt.Sprintf("term %d", id)
		if id%7 == 0 {
			item += " with a longer tail than sixteen bytes"
		}
		ts := start.Add(time.Duration(i) * 40 * time.Millisecond)
		if i%1000 == 0 {
			w.Advance(ts)
		}
		w.Add(item, ts)
	}
	return w
}

// TestCheckpointV1Golden checks that a version-1 checkpoint written by an
// earlier commit still decodes, re-encodes to the same bytes, and equals the
// state the same stream gives today: a change to the hot path or the
// encoding that alters either fails here (then bump the encoding version
// and keep this file decodable, or say why not).
func TestCheckpointV1Golden(t *testing.T) {
	old, err := os.ReadFile("testdata/checkpoint-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	var w Window
	if err := w.UnmarshalBinary(old); err != nil {
		t.Fatalf("decoding the old checkpoint: %v", err)
	}
	again, err := w.MarshalBinary()
	if err != nil || !bytes.Equal(again, old) {
		t.Fatalf("the old checkpoint re-encodes to %d other bytes (err %v)", len(again), err)
	}
	now, err := goldenWindow(t).MarshalBinary()
	if err != nil || !bytes.Equal(now, old) {
		t.Fatalf("the same stream encodes to %d other bytes today (err %v)", len(now), err)
	}
}

package hot

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/topics"
)

// TestIdleStreak: an input partition is due for its idle marker only once it has had nothing
// left to read at one position for the idle time; a partition read behind (its end offset
// beyond its position) never is, however long; once sent, not again until it moved.
func TestIdleStreak(t *testing.T) {
	type reading struct {
		sec      int // after t0
		pos, end int64
		due      bool
	}
	for _, c := range []struct {
		name     string
		readings []reading
	}{
		{"caught up for the idle time", []reading{{0, 10, 10, false}, {29, 10, 10, false}, {30, 10, 10, true}}},
		{"read behind: never idle", []reading{{0, 5, 10, false}, {30, 5, 10, false}, {3600, 5, 10, false}}},
		{"an empty partition", []reading{{0, 0, 0, false}, {30, 0, 0, true}}},
		{"data came and was read: the streak starts again", []reading{{0, 10, 10, false}, {20, 10, 12, false}, {25, 12, 12, false}, {50, 12, 12, false}, {55, 12, 12, true}}},
		{"data came, read before the next reading: starts again", []reading{{0, 10, 10, false}, {20, 12, 12, false}, {49, 12, 12, false}, {50, 12, 12, true}}},
		{"a stale end offset behind the position counts as caught up", []reading{{0, 12, 10, false}, {30, 12, 10, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := idleStreak{pos: -1}
			for i, r := range c.readings {
				var due bool
				s, due = s.observe(r.pos, r.end, t0.Add(time.Duration(r.sec)*time.Second), 30*time.Second)
				if due != r.due {
					t.Fatalf("reading %d (%+v): due %v", i, r, due)
				}
				s.sent = s.sent || due
			}
		})
	}
	// Sent once: not due again at the same position; due again after it moved and rested.
	s, due := idleStreak{pos: -1}.observe(10, 10, t0, 0)
	s.sent = due
	if s, due = s.observe(10, 10, t0.Add(time.Hour), 0); !s.sent || due {
		t.Fatalf("due again at the same position: %+v %v", s, due)
	}
	if _, due = s.observe(11, 11, t0.Add(2*time.Hour), 0); !due {
		t.Fatal("not due after the partition moved and rested")
	}
}

// TestLoopBufferIdle: an idle marker goes after the terms buffered before it, only at the
// position the watcher judged; the next term sends a watermark marker before itself (the
// partition holds the windows back again everywhere), a dead letter does not; a session that
// ended sends none.
func TestLoopBufferIdle(t *testing.T) {
	b, s, end := newTestBuffer(t)
	var c committed
	if _, ok := b.position(); ok {
		t.Fatal("a position before any record")
	}
	b.add(1, "snow", 5, 7, c.commit(7))
	if pos, ok := b.position(); !ok || pos != 8 {
		t.Fatalf("position %d %v, want 8", pos, ok)
	}
	if b.idle(7) {
		t.Fatal("idle at a position the buffer moved past")
	}
	if !b.idle(8) {
		t.Fatal("not idle at its position")
	}
	b.add(0, "", 0, 8, c.commit(8)) // a dead letter: no marker
	b.add(3, "rain", 9, 9, c.commit(9))
	b.flush(flushTime)
	var kinds []topics.HotLoopKind
	for _, r := range s.recs {
		lr, err := topics.DecodeHotLoopRecord(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if lr.Kind == topics.HotLoopIdle && (lr.Partition != 2 || lr.Offset != 8) || lr.Kind == topics.HotLoopMarker && lr.Ms != 9 {
			t.Fatalf("record %+v", lr)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != lr.Kind {
			kinds = append(kinds, lr.Kind)
		}
	}
	want := []topics.HotLoopKind{topics.HotLoopTerms, topics.HotLoopIdle, topics.HotLoopMarker, topics.HotLoopTerms}
	if !slices.Equal(kinds, want) || s.len() != 2+2*testLoopPartitions {
		t.Fatalf("sent %d records of kinds %v, want %v", s.len(), kinds, want)
	}
	// A watermark marker of route's ends the idleness too: no second marker.
	if !b.idle(10) {
		t.Fatal("not idle at its position")
	}
	b.flush(flushMarker, b.markers(topics.HotLoopRecord{Kind: topics.HotLoopMarker, Ms: 11, Partition: 2})...)
	n := s.len()
	b.add(0, "hail", 11, 10, c.commit(10))
	b.flush(flushTime)
	if s.len() != n+1 {
		t.Fatalf("sent %d records after route's marker, want the terms only", s.len()-n)
	}
	end()
	testWaitFor(t, func() bool { _, ok := b.position(); return !ok })
	if b.idle(11) {
		t.Fatal("idle after the session ended")
	}
}

func testWaitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// idleStore is a fakeStore with the input's offsets and committed offsets given, which keeps
// what is produced synchronously (the idle markers sent outside a session).
type idleStore struct {
	fakeStore
	starts, ends, commits map[int32]int64
	produced              []*kgo.Record
}

func (s *idleStore) offsets(context.Context, string) (map[int32]int64, map[int32]int64, error) {
	return s.starts, s.ends, nil
}
func (s *idleStore) committed(context.Context, string, string) (map[int32]int64, error) {
	return s.commits, nil
}
func (s *idleStore) produce(_ context.Context, recs ...*kgo.Record) error {
	s.produced = append(s.produced, recs...)
	return nil
}

// TestIdleTickWithoutSession: with no record routed in its session, an owned input partition
// is judged at the offset goka starts from (committed, or the log start): one with everything
// committed, and one that never had a record, get their idle markers (once), one with records
// after its committed offset (not yet read: its consumer lags) or not owned gets none.
func TestIdleTickWithoutSession(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Partitions, cfg.Idle, cfg.Log = 4, time.Nanosecond, slog.New(slog.DiscardHandler)
	store := &idleStore{
		starts:  map[int32]int64{0: 0, 1: 0, 2: 5, 3: 0},
		ends:    map[int32]int64{0: 10, 1: 10, 2: 5, 3: 7},
		commits: map[int32]int64{0: 10, 1: 4},
	}
	p := newProcessor(cfg, store)
	p.owned.set(goka.Assignment{0: -1, 1: -1, 2: -1})
	parts, _ := p.owned.get()
	streaks, ends := map[int32]idleStreak{}, map[int32]int64{}
	for range 3 {
		if err := p.idleTick(t.Context(), parts, streaks, ends); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	// Partitions 0 and 2 read to their ends, 1 lags: only those read at the head of their log.
	for part, want := range []bool{true, false, true} {
		if got := p.inputs[part].live.Load(); got != want {
			t.Errorf("input partition %d live = %v, want %v", part, got, want)
		}
	}
	idle := map[int32]int64{} // input partition → offset, each sent to every loop partition once
	for _, r := range store.produced {
		lr, err := topics.DecodeHotLoopRecord(r.Value)
		if err != nil || lr.Kind != topics.HotLoopIdle {
			t.Fatalf("produced %+v, %v", lr, err)
		}
		idle[lr.Partition] = lr.Offset
	}
	if want := map[int32]int64{0: 10, 2: 5}; !maps.Equal(idle, want) || len(store.produced) != 2*cfg.Partitions {
		t.Fatalf("idle markers of %v (%d records), want %v, each to the %d loop partitions once", idle, len(store.produced), want, cfg.Partitions)
	}
}

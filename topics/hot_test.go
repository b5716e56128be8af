package topics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func testSnapshot() TopKSnapshot {
	end := time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC)
	return TopKSnapshot{
		Stream: SearchStream, WindowStart: end.Add(-time.Hour), WindowEnd: end,
		GeneratedAt: end.Add(2013 * time.Millisecond), Version: end.Add(2013 * time.Millisecond).UnixMilli(),
		Items: []TopKItem{{"black friday", 1200, 0}, {"weather", 1200, 3}, {"snow", 7, 7}},
	}
}

func TestTopKSnapshotJSON(t *testing.T) {
	s := testSnapshot()
	// Other zones and sub-millisecond digits are written as UTC milliseconds.
	s.GeneratedAt = s.GeneratedAt.Add(999 * time.Microsecond).In(time.FixedZone("x", 8*3600))
	s.MissingPartitions = []int32{2, 5}
	s.Dropped = 4
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stream":"search","window_start":"2026-11-30T11:00:05.000Z","window_end":"2026-11-30T12:00:05.000Z",` +
		`"generated_at":"2026-11-30T12:00:07.013Z","version":1796040007013,"items":[{"item":"black friday","count":1200,"error":0},` +
		`{"item":"weather","count":1200,"error":3},{"item":"snow","count":7,"error":7}],"missing_partitions":[2,5],"dropped":4}`
	if string(b) != want {
		t.Fatalf("marshal:\n%s\nwant\n%s", b, want)
	}
	var back TopKSnapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != want || back.WindowEnd.Location() != time.UTC {
		t.Fatalf("round trip:\n%s", again)
	}
}

// TestTopKSnapshotJSONEmpty: "items" and "missing_partitions" are written even when empty, and
// a complete snapshot reads back with nil missing partitions however it was written, so that
// a replayed snapshot compares equal to the first one.
func TestTopKSnapshotJSONEmpty(t *testing.T) {
	s := testSnapshot()
	s.Items = nil
	b, _ := json.Marshal(&s)
	if !strings.Contains(string(b), `"items":[]`) || !strings.Contains(string(b), `"missing_partitions":[]`) {
		t.Fatalf("marshal of an empty snapshot: %s", b)
	}
	for _, in := range []string{string(b), strings.Replace(string(b), `,"missing_partitions":[]`, "", 1)} {
		var back TopKSnapshot
		if err := json.Unmarshal([]byte(in), &back); err != nil || back.MissingPartitions != nil {
			t.Fatalf("%s read back with missing partitions %#v (%v)", in, back.MissingPartitions, err)
		}
	}
}

func TestTopKSnapshotUnmarshal(t *testing.T) {
	var s TopKSnapshot
	in := `{"window_start":"2026-11-30T19:00:05+08:00","window_end":"2026-11-30T12:00:05.5Z","generated_at":"2026-11-30T12:00:07Z","version":3,"items":[]}`
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if !s.WindowStart.Equal(time.Date(2026, 11, 30, 11, 0, 5, 0, time.UTC)) || s.WindowEnd.Nanosecond() != 5e8 || s.Version != 3 || s.Stream != "" {
		t.Fatalf("decoded %+v", s)
	}
	for _, bad := range []string{
		`{"window_start":"","window_end":"2026-11-30T12:00:05Z","generated_at":"2026-11-30T12:00:07Z"}`,
		`{"window_start":"2026-11-30T11:00:05Z","window_end":"yesterday","generated_at":"2026-11-30T12:00:07Z"}`,
		`{"window_start":"2026-11-30T11:00:05Z","window_end":"2026-11-30T12:00:05Z"}`,
		`{"window_start":"2026-11-30T11:00:05Z","window_end":"2026-11-30T12:00:05Z","generated_at":"2026-11-30T12:00:07Z","items":{}}`,
	} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestSnapshotTimeTextOrderIsTimeOrder: the Redis sink compares window ends as text.
func TestSnapshotTimeTextOrderIsTimeOrder(t *testing.T) {
	times := []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 9, 59, 59, 999e6, time.UTC),
		time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 18, 0, 0, 1e6, time.FixedZone("cst", 8*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	}
	for i := 1; i < len(times); i++ {
		a, b := FormatSnapshotTime(times[i-1]), FormatSnapshotTime(times[i])
		if len(a) != len(b) || a >= b {
			t.Errorf("%s does not sort before %s", a, b)
		}
	}
}

func TestTopKSnapshotValidate(t *testing.T) {
	if s := testSnapshot(); s.Validate() != nil {
		t.Fatalf("valid snapshot rejected: %v", s.Validate())
	}
	partial := testSnapshot()
	partial.MissingPartitions = []int32{0, 3, 7}
	if err := partial.Validate(); err != nil {
		t.Fatalf("snapshot with missing partitions rejected: %v", err)
	}
	bad := []struct {
		name   string
		mutate func(*TopKSnapshot)
		says   string
	}{
		{"empty stream", func(s *TopKSnapshot) { s.Stream = "" }, "stream"},
		{"stream with a brace", func(s *TopKSnapshot) { s.Stream = "a}b" }, "stream"},
		{"stream with a colon", func(s *TopKSnapshot) { s.Stream = "a:b" }, "stream"},
		{"upper-case stream", func(s *TopKSnapshot) { s.Stream = "Search" }, "stream"},
		{"window ends at its start", func(s *TopKSnapshot) { s.WindowStart = s.WindowEnd }, "not after its start"},
		{"no generation time", func(s *TopKSnapshot) { s.GeneratedAt = time.Time{} }, "generated_at"},
		{"year 10000", func(s *TopKSnapshot) { s.WindowEnd = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "window_end"},
		{"negative version", func(s *TopKSnapshot) { s.Version = -1 }, "version"},
		{"version of 2^53", func(s *TopKSnapshot) { s.Version = 1 << 53 }, "version"},
		{"count of 2^53", func(s *TopKSnapshot) { s.Items[0].Count = 1 << 53 }, "2^53"},
		{"error above count", func(s *TopKSnapshot) { s.Items[2].Error = 8 }, "larger than its count"},
		{"item twice", func(s *TopKSnapshot) { s.Items[2].Item = "weather" }, "twice"},
		{"empty item", func(s *TopKSnapshot) { s.Items[0].Item = "" }, "empty"},
		{"not by count descending", func(s *TopKSnapshot) { s.Items[2].Count = 1201 }, "descending"},
		{"missing partitions not ascending", func(s *TopKSnapshot) { s.MissingPartitions = []int32{5, 2} }, "missing partitions"},
		{"missing partition twice", func(s *TopKSnapshot) { s.MissingPartitions = []int32{2, 2} }, "missing partitions"},
		{"negative missing partition", func(s *TopKSnapshot) { s.MissingPartitions = []int32{-1} }, "missing partitions"},
	}
	for _, tt := range bad {
		s := testSnapshot()
		tt.mutate(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Validate = %v, want an error saying %q", tt.name, err, tt.says)
		}
	}
}

// FuzzTopKSnapshotJSON: the snapshot decoder (what the query service reads from Redis) never
// panics, and a snapshot that decodes and validates is written in one canonical form.
func FuzzTopKSnapshotJSON(f *testing.F) {
	f.Add([]byte(`{"stream":"search","window_start":"2026-11-30T11:00:05.000Z","window_end":"2026-11-30T12:00:05.000Z","generated_at":"2026-11-30T12:00:07.013Z","version":1796040007013,"items":[{"item":"weather","count":1200,"error":3}],"missing_partitions":[5]}`))
	f.Add([]byte(`{"stream":"s","window_start":"0001-01-01T00:00:00Z","window_end":"9999-12-31T23:59:59.999999999+14:00","items":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s TopKSnapshot
		if err := json.Unmarshal(b, &s); err != nil || s.Validate() != nil {
			return
		}
		first, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("encode %+v: %v", s, err)
		}
		var again TopKSnapshot
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("decode %s: %v", first, err)
		}
		if second, err := json.Marshal(again); err != nil || !bytes.Equal(first, second) {
			t.Fatalf("%s is written again as %s (%v)", first, second, err)
		}
	})
}

// TestSupersedes: the "more complete snapshot wins" rule, case by case.
func TestSupersedes(t *testing.T) {
	base := testSnapshot()
	with := func(endShift time.Duration, version int64, missing ...int32) TopKSnapshot {
		s := base
		s.WindowStart, s.WindowEnd = s.WindowStart.Add(endShift), s.WindowEnd.Add(endShift)
		s.Version, s.MissingPartitions = version, missing
		return s
	}
	for _, c := range []struct {
		name     string
		old, new TopKSnapshot
		want     bool
	}{
		{"the same snapshot again", with(0, 5), with(0, 5), true},
		{"later window", with(0, 5), with(time.Second, 1), true},
		{"later window, more missing", with(0, 5), with(time.Second, 5, 1, 2, 3), true},
		{"earlier window", with(0, 5), with(-time.Second, 9), false},
		{"earlier window, complete over missing", with(0, 5, 1), with(-time.Second, 9), false},
		{"a millisecond later", with(0, 5), with(time.Millisecond, 1), true},
		{"less than a millisecond later: the same window", with(0, 5), with(time.Microsecond, 4), false},
		{"same window, fewer missing, older version", with(0, 5, 1, 2), with(0, 1, 7), true},
		{"same window, complete over missing", with(0, 5, 1), with(0, 0), true},
		{"same window, more missing, newer version", with(0, 5), with(0, 9, 3), false},
		{"same window, as many missing (other ones), newer version", with(0, 5, 1), with(0, 6, 2), true},
		{"same window, as many missing, older version", with(0, 5, 1), with(0, 4, 1), false},
		{"same window, as many missing, equal version", with(0, 5, 1), with(0, 5, 2), true},
	} {
		if got := c.new.Supersedes(c.old); got != c.want {
			t.Errorf("%s: Supersedes = %v, want %v", c.name, got, c.want)
		}
	}
	if c := (TopKSnapshot{}).Completeness(); c != 1<<20-1 {
		t.Errorf("complete: Completeness = %d, want 2^20 - 1", c)
	}
	if c := (TopKSnapshot{MissingPartitions: make([]int32, MaxMissingPartitions)}).Completeness(); c != 1 {
		t.Errorf("MaxMissingPartitions missing: Completeness = %d, want 1", c)
	}
}

package topics

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidSnapshot is wrapped by the errors of a snapshot that a store can never take as it
// is (Validate fails, or a store's own check does): retrying it cannot help. The hot merge skips
// such a snapshot (logged, counted) instead of retrying it.
var ErrInvalidSnapshot = errors.New("invalid snapshot")

// SearchStream is the name of the hot-search Top-K stream: its snapshots live in Redis under
// hot:search:latest and in ClickHouse's topk_history with stream = 'search'.
const SearchStream = "search"

// SnapshotTimeFormat is how a snapshot's times are written: RFC 3339 in UTC with exactly three
// fractional digits, e.g. "2026-11-30T12:00:05.000Z". The fixed width makes the text order the
// time order (for years 0000-9999), which the Redis sink relies on.
const SnapshotTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// maxExactFloat is 2^53: counts and versions below it survive a float64 (a Redis ZSET score,
// a Lua number) exactly.
const maxExactFloat = 1 << 53

// TopKItem is one item of a Top-K snapshot: its true count in the window lies in
// [Count - Error, Count].
type TopKItem struct {
	Item  string `json:"item"`
	Count uint64 `json:"count"`
	Error uint64 `json:"error"`
}

// TopKSnapshot is the Top-K of one sliding window of a stream, as the hot processors publish
// it to Redis (hot:{stream}:latest) and the query service serves it (contract):
//
//	{"stream":"search","window_start":"2026-11-30T11:00:05.000Z","window_end":"2026-11-30T12:00:05.000Z",
//	 "generated_at":"2026-11-30T12:00:07.013Z","version":1796040007013,
//	 "items":[{"item":"weather","count":1200,"error":3}],"missing_partitions":[5],"dropped":0}
//
// Times are written in SnapshotTimeFormat (UTC, milliseconds; finer digits are dropped) and
// read in any RFC 3339 form. "items" and "missing_partitions" are always present, possibly
// empty: a snapshot of every partition has "missing_partitions":[].
type TopKSnapshot struct {
	// Stream names the Top-K stream, e.g. SearchStream.
	Stream string
	// WindowStart and WindowEnd bound the window [WindowStart, WindowEnd) in event time.
	WindowStart, WindowEnd time.Time
	// GeneratedAt is the wall-clock time at which the snapshot was computed.
	GeneratedAt time.Time
	// Version orders snapshots of the same window that miss as many partitions (Supersedes).
	// The hot pipeline sets it to WindowEnd in Unix milliseconds, so a replay publishes
	// identical snapshots; a writer that recomputes a window with other content must use a
	// larger version to replace it. It must be in [0, 2^53).
	Version int64
	// Items are the Top-K items by count descending (item ascending on ties).
	Items []TopKItem
	// MissingPartitions lists, ascending, the partitions whose partial Top-K had not arrived
	// when the merge's wait ran out; nil (written as []) when every partition reported.
	MissingPartitions []int32
	// Dropped is how many events the producer of the snapshot dropped (late, or any other
	// reason) while it built this window, summed over the partitions: non-zero means the
	// counts may lack that many events.
	Dropped uint64
}

// MaxMissingPartitions is the most partitions a snapshot may miss and still rank by
// Completeness in every store: ClickHouse's topk_history keeps a snapshot's completeness in 20
// bits of its rows' version (sinks/clickhouse.TopKVersion).
const MaxMissingPartitions = 1<<20 - 2

// Completeness ranks the snapshots of one window by how many partitions they miss:
// MaxMissingPartitions + 1 less len(MissingPartitions), so 2^20 - 1 for a complete snapshot;
// the higher, the more complete. It is below 1 only for a snapshot missing more than
// MaxMissingPartitions, which ClickHouse cannot store.
func (s TopKSnapshot) Completeness() int64 {
	return MaxMissingPartitions + 1 - int64(len(s.MissingPartitions))
}

// Supersedes is the "more complete snapshot wins" rule: it reports whether s, written after
// old, replaces it as its stream's latest snapshot (hot:{stream}:latest). Snapshots never go
// back in time, and completeness wins:
//   - a snapshot of a later window (WindowEnd, to the millisecond) wins, whatever its
//     completeness or version; one of an earlier window loses;
//   - within a window, the more complete one (Completeness: fewer missing partitions) wins,
//     whatever its version;
//   - as complete, the higher Version wins, and an equal version replaces old: writing a
//     snapshot again is an idempotent overwrite.
//
// The Redis sink's script applies exactly this rule (tested against it on redis-server). In
// ClickHouse, topk_history keeps every window, and within a window its rows' version orders
// snapshots by Completeness, then by GeneratedAt (the rows do not hold Version): the more
// complete one wins there too. Both assume snapshots that pass Validate.
func (s TopKSnapshot) Supersedes(old TopKSnapshot) bool {
	switch end, oldEnd := s.WindowEnd.UnixMilli(), old.WindowEnd.UnixMilli(); {
	case end != oldEnd:
		return end > oldEnd
	case s.Completeness() != old.Completeness():
		return s.Completeness() > old.Completeness()
	default:
		return s.Version >= old.Version
	}
}

// topKWire is the JSON form of TopKSnapshot.
type topKWire struct {
	Stream            string     `json:"stream"`
	WindowStart       string     `json:"window_start"`
	WindowEnd         string     `json:"window_end"`
	GeneratedAt       string     `json:"generated_at"`
	Version           int64      `json:"version"`
	Items             []TopKItem `json:"items"`
	MissingPartitions []int32    `json:"missing_partitions"`
	Dropped           uint64     `json:"dropped"`
}

// MarshalJSON writes the contract's JSON form.
func (s TopKSnapshot) MarshalJSON() ([]byte, error) {
	w := topKWire{
		Stream:            s.Stream,
		WindowStart:       FormatSnapshotTime(s.WindowStart),
		WindowEnd:         FormatSnapshotTime(s.WindowEnd),
		GeneratedAt:       FormatSnapshotTime(s.GeneratedAt),
		Version:           s.Version,
		Items:             s.Items,
		MissingPartitions: s.MissingPartitions,
		Dropped:           s.Dropped,
	}
	if w.Items == nil {
		w.Items = []TopKItem{}
	}
	if w.MissingPartitions == nil {
		w.MissingPartitions = []int32{}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("topk snapshot: encode: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads the contract's JSON form; times may be any RFC 3339 text.
func (s *TopKSnapshot) UnmarshalJSON(b []byte) error {
	var w topKWire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("topk snapshot: decode: %w", err)
	}
	var v TopKSnapshot
	for _, f := range []struct {
		name string
		text string
		dst  *time.Time
	}{
		{"window_start", w.WindowStart, &v.WindowStart},
		{"window_end", w.WindowEnd, &v.WindowEnd},
		{"generated_at", w.GeneratedAt, &v.GeneratedAt},
	} {
		t, err := time.Parse(time.RFC3339Nano, f.text)
		if err != nil {
			return fmt.Errorf("topk snapshot: %s: %w", f.name, err)
		}
		*f.dst = t.UTC()
	}
	v.Stream, v.Version, v.Items, v.Dropped = w.Stream, w.Version, w.Items, w.Dropped
	if len(w.MissingPartitions) > 0 {
		v.MissingPartitions = w.MissingPartitions // empty stays nil: complete is nil however it was written
	}
	*s = v
	return nil
}

// FormatSnapshotTime writes t in SnapshotTimeFormat.
func FormatSnapshotTime(t time.Time) string { return t.UTC().Format(SnapshotTimeFormat) }

// Validate checks what the Redis sink and the readers rely on: a stream name usable in a Redis
// key, a window that ends after it starts, times between the years 1970 and 9999, a version
// and counts below 2^53, items that are distinct, non-empty, by count descending, with an
// error no larger than their count, and missing partitions ascending, distinct and not
// negative.
func (s *TopKSnapshot) Validate() error {
	if err := checkStreamName(s.Stream); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"window_start", s.WindowStart}, {"window_end", s.WindowEnd}, {"generated_at", s.GeneratedAt}} {
		if y := t.t.UTC().Year(); y < 1970 || y > 9999 {
			return fmt.Errorf("topk snapshot: %s %s is outside the years 1970 to 9999", t.name, t.t.Format(time.RFC3339Nano))
		}
	}
	if !s.WindowEnd.After(s.WindowStart) {
		return fmt.Errorf("topk snapshot: window end %s is not after its start %s",
			FormatSnapshotTime(s.WindowEnd), FormatSnapshotTime(s.WindowStart))
	}
	if s.Version < 0 || s.Version >= maxExactFloat {
		return fmt.Errorf("topk snapshot: version %d is outside [0, 2^53)", s.Version)
	}
	seen := make(map[string]struct{}, len(s.Items))
	for i, it := range s.Items {
		switch _, dup := seen[it.Item]; {
		case it.Item == "":
			return fmt.Errorf("topk snapshot: item %d is empty", i)
		case dup:
			return fmt.Errorf("topk snapshot: item %q is listed twice", it.Item)
		case it.Count >= maxExactFloat:
			return fmt.Errorf("topk snapshot: item %q: count %d is not below 2^53", it.Item, it.Count)
		case it.Error > it.Count:
			return fmt.Errorf("topk snapshot: item %q: error %d is larger than its count %d", it.Item, it.Error, it.Count)
		case i > 0 && it.Count > s.Items[i-1].Count:
			return fmt.Errorf("topk snapshot: items not by count descending: %q (%d) after %q (%d)",
				it.Item, it.Count, s.Items[i-1].Item, s.Items[i-1].Count)
		}
		seen[it.Item] = struct{}{}
	}
	for i, p := range s.MissingPartitions {
		if p < 0 || i > 0 && p <= s.MissingPartitions[i-1] {
			return fmt.Errorf("topk snapshot: missing partitions %v: want distinct partitions, ascending, not negative", s.MissingPartitions)
		}
	}
	return nil
}

// checkStreamName accepts names that can sit inside a Redis key and a Redis Cluster hash tag
// unescaped: 1 to 64 characters of a-z, 0-9, '_', '-' and '.' (no ':', braces or spaces).
func checkStreamName(name string) error {
	ok := name != "" && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
	}
	if !ok {
		return fmt.Errorf("topk snapshot: stream %q: want 1 to 64 characters of a-z, 0-9, '_', '-' and '.'", name)
	}
	return nil
}

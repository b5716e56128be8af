package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// publishHot replaces a stream's latest snapshot, KEYS[1] (String, the snapshot's JSON) and
// its mirror KEYS[2] (ZSET item → count), together, when the new snapshot supersedes the
// stored one by topics.TopKSnapshot.Supersedes (the rule's one definition; sinks/snapshot's
// TestRedisScriptFollowsSupersedes checks this script against it): unless Redis holds a
// snapshot of a later window, or of the same window missing fewer partitions, or missing as
// many with a newer version. An equal snapshot is written again (an idempotent overwrite).
// ARGV[1] is the JSON, ARGV[2] its window_end as written in it (topics.SnapshotTimeFormat,
// whose text order is the time order), ARGV[3] its version, ARGV[4] how many partitions it
// misses, ARGV[5...] count/item pairs. A stored value that is
// not such JSON is replaced; one without missing_partitions (written before they existed)
// misses none. Returns 1 when it wrote, 0 when it left everything as it was.
var publishHot = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, old = pcall(cjson.decode, cur)
  if ok and type(old) == 'table' and type(old.window_end) == 'string' then
    if old.window_end > ARGV[2] then return 0 end
    if old.window_end == ARGV[2] then
      local missing = 0
      if type(old.missing_partitions) == 'table' then missing = #old.missing_partitions end
      local want = tonumber(ARGV[4])
      if want > missing then return 0 end
      if want == missing and (tonumber(old.version) or -1) > tonumber(ARGV[3]) then return 0 end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
for i = 5, #ARGV, 512 do
  redis.call('ZADD', KEYS[2], unpack(ARGV, i, math.min(i + 511, #ARGV)))
end
return 1`)

// HotWriter publishes Top-K snapshots to Redis: HotKey(stream) gets the snapshot's JSON
// (topics.TopKSnapshot) and HotZSetKey(stream) its items with their counts as scores, both
// replaced by one script so a reader never sees one without the other. Snapshots never go back
// in time, and completeness wins (topics.TopKSnapshot.Supersedes): one of an earlier window
// than the stored one is ignored, and so is one of the same window that misses more partitions
// (missing_partitions), or as many with an older version. Writing a snapshot again writes the same content, so retries and
// replays are harmless. Neither key expires. A snapshot that replaced the stored one is
// observed in rankstream_hot_snapshot_freshness_seconds (its window's end to Redis) and
// rankstream_hot_snapshot_window_end_timestamp_seconds.
//
// On a ZSET, ZREVRANGE orders equal counts by item descending, while the JSON orders them by
// item ascending; the error bounds are only in the JSON.
type HotWriter struct {
	rdb      goredis.UniversalClient
	writeSec prometheus.Observer
	writeErr prometheus.Counter
}

// NewHotWriter returns a writer on rdb (a single server or a Redis Cluster).
func NewHotWriter(rdb goredis.UniversalClient) *HotWriter {
	return &HotWriter{rdb: rdb, writeSec: obs.SinkWriteSeconds.WithLabelValues("redis-hot"),
		writeErr: obs.SinkWriteErrors.WithLabelValues("redis-hot")}
}

// Write publishes snap under its stream (topics.SearchStream when snap.Stream is empty) and
// reports whether it wrote: whether snap supersedes the stored snapshot
// (topics.TopKSnapshot.Supersedes); false is not an error. Write does not
// retry: the caller retries a failed write (with backoff), except one failing with
// topics.ErrInvalidSnapshot (the snapshot fails topics.TopKSnapshot.Validate).
func (w *HotWriter) Write(ctx context.Context, snap topics.TopKSnapshot) (bool, error) {
	if snap.Stream == "" {
		snap.Stream = topics.SearchStream
	}
	if err := snap.Validate(); err != nil {
		return false, fmt.Errorf("redis hot sink: %w: %w", topics.ErrInvalidSnapshot, err)
	}
	body, err := snap.MarshalJSON()
	if err != nil {
		return false, fmt.Errorf("redis hot sink: %w", err)
	}
	args := make([]any, 0, 4+2*len(snap.Items))
	args = append(args, body, topics.FormatSnapshotTime(snap.WindowEnd), snap.Version, len(snap.MissingPartitions))
	for _, it := range snap.Items {
		args = append(args, strconv.FormatUint(it.Count, 10), it.Item)
	}
	keys := []string{HotKey(snap.Stream), HotZSetKey(snap.Stream)}
	start := time.Now()
	replaced, err := publishHot.Run(ctx, w.rdb, keys, args...).Int()
	if err != nil {
		w.writeErr.Inc()
		return false, fmt.Errorf("redis hot sink: publish %s window ending %s: %w", keys[0], args[1], err)
	}
	w.writeSec.Observe(time.Since(start).Seconds())
	if replaced == 1 {
		obs.HotSnapshotFreshness.Observe(time.Since(snap.WindowEnd).Seconds())
		obs.HotSnapshotWindowEnd.Set(float64(snap.WindowEnd.UnixMilli()) / 1000)
	}
	return replaced == 1, nil
}

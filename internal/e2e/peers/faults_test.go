//go:build peers

package peers

import (
	"cmp"
	"context"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// TestStepsPeerCommitsOnlyAfterRedis: the Kafka Streams peer commits offsets only after Redis
// acknowledged the writes of the records they cover. With its Redis paused (SIGSTOP) it reads
// new records and tries to write them, but commits none; killed (SIGKILL) in that state and
// started again once Redis is back, it ends with exactly the Redis contents `rankstream
// process` makes of the same input. It needs the peer's jar (`make bench-peers` builds it and
// runs this test first); the tests build only with -tags peers.
func TestStepsPeerCommitsOnlyAfterRedis(t *testing.T) {
	t.Parallel() // beside the hot peer's: both mostly wait for a killed member's session to end
	jar := peerJar(t, stepsProject)
	job := newJob(t, topics.StepsReported)
	records := stepReports(30_000)
	first, second := records[:20_000], records[20_000:]
	job.produce(t, first)

	redis := testenv.StartRedisServer(t)
	url := "redis://" + redis.Addr() + "/0"
	peer := job.kstreams(jar, javaOpts(), "kstreams-steps")
	stateDir := t.TempDir()
	// A Redis call that gets no answer fails after 2 s (default 30 s), so that the peer tells
	// within the test that it tried to write.
	argv := append(peer.command(url, stateDir), "--redis-timeout-ms", "2000")
	c := startChild(t, "kstreams", argv)
	waitCommitted(t, c, job, peer.group, int64(len(first)))

	redis.Pause()
	// A commit that follows a flush finished before the pause may still land: let it.
	time.Sleep(time.Second)
	before := testenv.Committed(job.adm, peer.group, job.input)
	job.produce(t, second)
	testenv.WaitFor(t, 2*time.Minute, "the peer's failed attempt to write the new records", func() bool {
		c.checkAlive(t)
		return strings.Contains(c.out.String(), "redis sink: flush of")
	})
	if got := testenv.Committed(job.adm, peer.group, job.input); got != before {
		t.Fatalf("with Redis paused the peer committed %d more records", got-before)
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	redis.Resume()

	// Started again on the same state folder, it joins once the killed member's session ended.
	c = startChild(t, "kstreams (restarted)", argv)
	waitCommitted(t, c, job, peer.group, int64(len(records)))
	got := takeSnapshot(t, redis.Client())
	c.stop(t)

	var want snapshot
	job.rankstream(testenv.Rankstream(t), topics.StepsGroup).run(t, job.adm, job.input, int64(len(records)), nil,
		func(rdb *goredis.Client) { want = takeSnapshot(t, rdb) })
	if diff := want.diff(got); diff != "" {
		t.Fatalf("after the pause and the crash the peer's Redis differs from rankstream's: %s", diff)
	}
	t.Logf("identical: %d step keys, %d boards with %d members", len(got.strings), len(got.boards), got.members())
}

func waitCommitted(t *testing.T, c *child, j *job, group string, n int64) {
	t.Helper()
	testenv.WaitFor(t, 3*time.Minute, "the peer's commits to cover the input", func() bool {
		c.checkAlive(t)
		return testenv.Committed(j.adm, group, j.input) >= n
	})
}

// TestHotPeerCommitsOnlyAfterRedis: the Kafka Streams hot-search peer commits a window's last
// partial only after Redis acknowledged the window's snapshot, and its counts stay exact across
// a crash (exactly_once_v2). With its Redis paused (SIGSTOP) from the start it reads the queries
// and tries to publish the first window, but does not commit the partial that completed it; killed
// (SIGKILL) in that state and started again once Redis is back, it publishes every window from
// the first the rules give to the last the input lets close, each the exact Top-100 of its hour
// (counted here from topics.DecodeSearchQuery's terms). About 100 s, most of it the killed
// member's session timeout (45 s).
func TestHotPeerCommitsOnlyAfterRedis(t *testing.T) {
	t.Parallel()
	jar := peerJar(t, hotProject)
	job := newJob(t, topics.SearchQueries)
	records, lastEnd := hotQueries(t, 4_000, job.kc.Partitions)
	redis := testenv.StartRedisServer(t)
	redis.Pause()
	job.produce(t, records)

	peer := job.kstreamsHot(jar)
	// A Redis call that gets no answer fails after 2 s (default 30 s), so that the peer tells
	// within the test that it tried to write.
	argv := append(peer.command("redis://"+redis.Addr()+"/0", t.TempDir()), "--redis-timeout-ms", "2000")
	c := startChild(t, "kstreams", argv)
	testenv.WaitFor(t, 3*time.Minute, "the peer's failed attempt to publish", func() bool {
		c.checkAlive(t)
		return strings.Contains(c.out.String(), "Redis write failed")
	})
	// The partials before the one that completes the first window only fill the merge's
	// pending store, committed with them; that one must stay uncommitted.
	partials := peer.group + "-partials-repartition"
	completing := completingPartial(t, job.kc.Brokers, partials, job.kc.Partitions)
	if got := testenv.Committed(job.adm, peer.group, partials); got > completing {
		t.Fatalf("with Redis paused the peer committed %d partials, past the one at offset %d that completes the first window", got, completing)
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	redis.Resume()

	c = startChild(t, "kstreams (restarted)", argv)
	testenv.WaitFor(t, 4*time.Minute, "the last window's snapshot", func() bool {
		c.checkAlive(t)
		raw, err := redis.Client().Get(context.Background(), rsredis.HotKey(topics.SearchStream)).Bytes()
		var s topics.TopKSnapshot
		return err == nil && s.UnmarshalJSON(raw) == nil && s.WindowEnd.UnixMilli() >= lastEnd
	})
	got := peerWindows(t, redis.Client())
	c.stop(t)

	// The oracle: every query's term and time, and each input partition's first time.
	type query struct {
		term string
		ms   int64
	}
	var queries []query
	first := map[int32]int64{}
	for _, r := range records {
		q, term, err := topics.DecodeSearchQuery(string(r.Key), r.Value, r.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		queries = append(queries, query{term, q.TS.Millis()})
		if p := kafka.PartitionOf(string(r.Key), job.kc.Partitions); first[p] == 0 {
			first[p] = q.TS.Millis()
		}
	}
	slideMs := slide.Milliseconds()
	firstEnd := (slices.Max(slices.Collect(maps.Values(first))) + slideMs - 1) / slideMs * slideMs
	if want := int((lastEnd-firstEnd)/slideMs) + 1; len(got) != want {
		t.Fatalf("the peer published %d windows (%s), want %d from %s", len(got), spanOf(slices.Sorted(maps.Keys(got))),
			want, time.UnixMilli(firstEnd).UTC())
	}
	for end := firstEnd; end <= lastEnd; end += slideMs {
		counts := map[string]uint64{}
		for _, q := range queries {
			if q.ms >= end-time.Hour.Milliseconds() && q.ms < end {
				counts[q.term]++
			}
		}
		var want []sketch.Item
		for term, n := range counts {
			want = append(want, sketch.Item{Item: term, Count: n})
		}
		slices.SortFunc(want, func(a, b sketch.Item) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Item, b.Item))
		})
		want = want[:min(hotK, len(want))]
		w, ok := got[end]
		if !ok || w.dropped != 0 || !slices.Equal(w.items, want) {
			t.Fatalf("window ending %s: the peer published %v (dropped %d), want %v", time.UnixMilli(end).UTC(), w.items, w.dropped, want)
		}
	}
	t.Logf("%d windows, each the exact Top-%d", len(got), hotK)
}

// completingPartial returns the offset of the first record of the peer's partials topic (one
// partition, key: the window end, value: the partial, its terms partition first) that completes
// a window: the first at which a window has partials of every one of partitions.
func completingPartial(t *testing.T, brokers []string, topic string, partitions int) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := map[string]map[int32]bool{}
	for ctx.Err() == nil {
		for _, r := range cl.PollFetches(ctx).Records() {
			if seen[string(r.Key)] == nil {
				seen[string(r.Key)] = map[int32]bool{}
			}
			seen[string(r.Key)][int32(binary.BigEndian.Uint32(r.Value))] = true
			if len(seen[string(r.Key)]) == partitions {
				return r.Offset
			}
		}
	}
	t.Fatalf("no window of %s has partials of %d partitions", topic, partitions)
	return 0
}

//go:build peers

package peers

import (
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// TestStepsPeerCommitsOnlyAfterRedis: the Kafka Streams peer commits offsets only after Redis
// acknowledged the writes of the records they cover. With its Redis paused (SIGSTOP) it reads
// new records and tries to write them, but commits none; killed (SIGKILL) in that state and
// started again once Redis is back, it ends with exactly the Redis contents `rankstream
// process` makes of the same input. It needs the peer's jar (`make bench-peers` builds it and
// runs this test first); the tests build only with -tags peers.
func TestStepsPeerCommitsOnlyAfterRedis(t *testing.T) {
	jar := peerJar(t, stepsProject)
	job := newJob(t, topics.StepsReported)
	records := stepReports(t, 30_000)
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

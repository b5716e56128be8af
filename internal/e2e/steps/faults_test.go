package stepse2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// This file holds the fault choreographies of daily steps: a kill -9 between the group table's
// write and the coalesced Redis flush, a rebalance, Redis down at shutdown, and the same
// stream in two interleavings through the whole pipeline.

// utcReport is a report of user in zone UTC; region may be "".
func utcReport(user, req string, steps int, region string, ts time.Time) e2e.Record {
	v := fmt.Sprintf(`{"request_id":%q,"user_id":%q,"steps":%d,"ts":%q,"tz":"UTC"`, req, user, steps, ts.Format(time.RFC3339Nano))
	if region != "" {
		v += fmt.Sprintf(`,"region":%q`, region)
	}
	return e2e.Record{Key: user, Value: []byte(v + "}")}
}

func (e *stepsRun) groupAndTopic() (string, string) {
	return string(e.Kafka.Names.Group(steps.Group)), string(e.Kafka.Names.Stream(topics.StepsReported))
}

// onBoard tells whether user is a member of board.
func (e *stepsRun) onBoard(board, user string) bool {
	err := e.Redis.ZScore(context.Background(), board, user).Err()
	if err != nil && !errors.Is(err, goredis.Nil) {
		e.T.Fatal(err)
	}
	return err == nil
}

// TestCrashBetweenTableAndRedis: a user reports 100 steps in
// eu-west; once committed, 200 in us-east, and the processor is killed with SIGKILL 150 ms
// later, before the coalesced flush (default interval, 500 ms), after the table's write. After
// the restart the user must be on the us-east board only (the redelivery finds a duplicate and
// must still remove them from eu-west). A second user's stale report, committed before the
// kill, is retried with another value after the restart: it must change nothing.
func TestCrashBetweenTableAndRedis(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		for i := range 3 {
			t.Run(fmt.Sprint("trial-", i), func(t *testing.T) {
				t.Parallel()
				crashBetweenTableAndRedis(t, brokers)
			})
		}
	})
}

func crashBetweenTableAndRedis(t *testing.T, brokers []string) {
	e := newE2E(t, brokers)
	adm := testenv.KafkaAdmin(t, brokers)
	group, topic := e.groupAndTopic()
	ts := time.Now().Add(-time.Minute)
	day := e2e.DayOf(ts, time.UTC)
	board := func(region string) string { return "rank:steps:region:" + region + ":" + day }
	ctx := context.Background()

	p := e.Start("processor-1")
	e.produce([]e2e.Record{
		utcReport("mover", "a", 100, "eu-west", ts),
		utcReport("retrier", "x", 300, "eu-west", ts),
		utcReport("retrier", "y", 0, "eu-west", ts.Add(time.Second)), // stale
	}, 0)
	testenv.WaitCommitted(t, adm, group, topic, 3, 2*time.Minute)
	if !e.onBoard(board("eu-west"), "mover") {
		t.Fatal("mover is not on the eu-west board after the commit")
	}
	e.produce([]e2e.Record{utcReport("mover", "b", 200, "us-east", ts.Add(2*time.Second))}, 0)
	time.Sleep(150 * time.Millisecond)
	p.Signal(syscall.SIGKILL)
	_ = p.Wait()
	e.Processes = nil
	flushed := e.Redis.Get(ctx, "step:"+day+":mover").Val() == "200"
	t.Logf("killed %s the flush of the move (committed %d of 4)", map[bool]string{true: "after", false: "before"}[flushed], testenv.Committed(adm, group, topic))

	e.Start("processor-2")
	e.produce([]e2e.Record{utcReport("retrier", "y", 36_894, "us-east", ts.Add(3*time.Second))}, 0)
	testenv.WaitCommitted(t, adm, group, topic, 5, 2*time.Minute)

	if got := e.Redis.Get(ctx, "step:"+day+":mover").Val(); got != "200" {
		t.Errorf("mover's steps = %q, want 200", got)
	}
	if e.onBoard(board("eu-west"), "mover") || !e.onBoard(board("us-east"), "mover") {
		t.Errorf("mover on eu-west: %v, on us-east: %v; want us-east only",
			e.onBoard(board("eu-west"), "mover"), e.onBoard(board("us-east"), "mover"))
	}
	if got := e.Redis.Get(ctx, "step:"+day+":retrier").Val(); got != "300" {
		t.Errorf("retrier's steps = %q, want 300: the retry of a stale request id counted", got)
	}
	if e.onBoard(board("us-east"), "retrier") || !e.onBoard(board("eu-west"), "retrier") {
		t.Error("the retry of a stale request id moved retrier to us-east")
	}
}

// TestRequestIDSurvivesARebalance: users' stale reports are committed by
// one instance; a second instance joins and takes half of the partitions over (restoring the
// table from the changelog); retries of the stale request ids with larger values change
// nothing, on either instance.
func TestRequestIDSurvivesARebalance(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		e := newE2E(t, brokers)
		adm := testenv.KafkaAdmin(t, brokers)
		group, topic := e.groupAndTopic()
		ts := time.Now().Add(-time.Minute)
		day := e2e.DayOf(ts, time.UTC)
		const users = 32
		partitioner := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
		var first, retries []e2e.Record
		onPartition := map[int]bool{}
		for i := range users {
			u := fmt.Sprintf("user-%02d", i)
			first = append(first, utcReport(u, "x", 300, "eu", ts), utcReport(u, "y", 50, "eu", ts.Add(time.Second)))
			retries = append(retries, utcReport(u, "y", 36_894, "us", ts.Add(2*time.Second)))
			onPartition[partitioner.Partition(&kgo.Record{Key: []byte(u)}, 8)] = true
		}
		if len(onPartition) != 8 {
			t.Fatalf("the users cover %d of 8 partitions", len(onPartition))
		}
		e.Start("processor-a")
		e.produce(first, 0)
		testenv.WaitCommitted(t, adm, group, topic, 2*users, 2*time.Minute)

		e.Start("processor-b")
		testenv.WaitFor(t, 2*time.Minute, "both instances to own partitions", func() bool {
			gs, err := adm.DescribeGroups(context.Background(), group)
			if err != nil {
				return false
			}
			g := gs[group]
			if g.State != "Stable" || len(g.Members) != 2 {
				return false
			}
			for _, m := range g.Members {
				c, ok := m.Assigned.AsConsumer()
				if !ok {
					return false
				}
				owns := false
				for _, a := range c.Topics {
					owns = owns || a.Topic == topic && len(a.Partitions) > 0
				}
				if !owns {
					return false
				}
			}
			return true
		})
		e.produce(retries, 0)
		testenv.WaitCommitted(t, adm, group, topic, 3*users, 2*time.Minute)
		for i := range users {
			u := fmt.Sprintf("user-%02d", i)
			if got := e.Redis.Get(context.Background(), "step:"+day+":"+u).Val(); got != "300" {
				t.Errorf("%s: steps = %q, want 300: the retry of a stale request id counted", u, got)
			}
		}
		if n := e.Redis.Exists(context.Background(), "rank:steps:region:us:"+day).Val(); n != 0 {
			t.Error("retries of stale request ids created the us board")
		}
	})
}

// TestRedisDownAtShutdown: reports flow into `rankstream process`, its
// Redis (a private redis-server with AOF, fsync always) is killed, the process gets SIGTERM
// 3 s later, and Redis comes back before or after the 10 s shutdown grace ended. The offsets
// committed must never cover a record whose value is not in Redis, a process whose write
// failed must exit non-zero, and a restarted process must complete the exact result. Run
// with the default --max-pending (20,000: the processor is blocked when the grace ends) and
// with 200,000 (more than the whole input: it is not).
func TestRedisDownAtShutdown(t *testing.T) {
	brokers := testenv.KafkaBrokers(t)
	for _, tc := range []struct {
		maxPending string
		back       time.Duration // after the SIGTERM
	}{
		{"", 7 * time.Second}, {"", 10500 * time.Millisecond},
		{"200000", 7 * time.Second}, {"200000", 10500 * time.Millisecond},
	} {
		name, flags := "default", []string(nil)
		if tc.maxPending != "" {
			name, flags = tc.maxPending, []string{"--max-pending", tc.maxPending}
		}
		t.Run(fmt.Sprintf("max-pending-%s/back-after-%s", name, tc.back), func(t *testing.T) {
			t.Parallel()
			redisDownAtShutdown(t, brokers, tc.back, flags...)
		})
	}
}

func redisDownAtShutdown(t *testing.T, brokers []string, back time.Duration, flags ...string) {
	srv := testenv.StartRedisServer(t)
	e := newE2E(t, brokers)
	e.Redis, e.RedisAddr, e.RedisDB = srv.Client(), srv.Addr(), 0 // a private redis-server
	adm := testenv.KafkaAdmin(t, brokers)
	group, topic := e.groupAndTopic()
	const n = 60_000
	records, want := generate(5, n, 6_000, time.Now())

	p := e.Start("processor-1", flags...)
	produced := make(chan []position, 1)
	go func() { produced <- e.produce(records, 8_000) }()
	testenv.WaitFor(t, 2*time.Minute, "some offsets committed before Redis dies", func() bool {
		return testenv.Committed(adm, group, topic) > 5_000
	})
	srv.Kill()
	time.Sleep(3 * time.Second)
	term := time.Now()
	p.Signal(syscall.SIGTERM)
	time.Sleep(time.Until(term.Add(back)))
	srv.Start()
	exit := p.Wait()
	e.Processes = nil
	at := <-produced

	// Every record below the committed offset of its partition must be in Redis.
	offs, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	committed := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			committed[o.Partition] = o.At
		}
	})
	covered := truth{}
	ncommitted := 0
	for i, r := range records {
		if at[i].offset >= committed[at[i].partition] {
			continue
		}
		ncommitted++
		k, steps := userDayOf(t, r)
		if v, ok := covered[k]; !ok || steps > v.steps {
			covered[k] = &dayValue{steps: steps}
		}
	}
	bad, example := e.mismatchesBelow(covered)
	failed := strings.Contains(p.Output(), "redis sink: write failed")
	t.Logf("Redis back %s after the TERM: exit %v, sink write failed: %v, %d of %d records committed, %d committed user-days not in Redis",
		back, exit, failed, ncommitted, n, bad)
	if bad > 0 {
		t.Errorf("committed offsets cover %d user-days whose value is not in Redis, e.g. %s", bad, example)
	}
	if failed && exit == nil {
		t.Error("the process exited 0 after a failed write")
	}
	e.Start("processor-2", flags...)
	e.waitExact(want, 3*time.Minute)
	testenv.WaitCommitted(t, adm, group, topic, n, 2*time.Minute)
}

// TestRedisDownAtStartUp: `rankstream process` started while its Redis is down stays up,
// and once Redis answers it writes the exact result. Before, it exited at once (the client
// pinged Redis at start-up).
func TestRedisDownAtStartUp(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		srv := testenv.StartRedisServer(t)
		srv.Kill()
		e := newE2E(t, brokers)
		e.Redis, e.RedisAddr, e.RedisDB = srv.Client(), srv.Addr(), 0 // a private redis-server
		records, want := generate(7, 6_000, 600, time.Now())
		p := e.Start("processor")
		e.produce(records, 0)
		time.Sleep(5 * time.Second)
		if err := p.Exited(); err != nil {
			t.Fatalf("the process did not wait for Redis: %v", err)
		}
		srv.Start()
		e.waitExact(want, 2*time.Minute)
		if err := p.Exited(); err != nil {
			t.Fatalf("after Redis came back: %v", err)
		}
	})
}

// userDayOf returns the "yyyymmdd/user" and the steps of a generated report.
func userDayOf(t *testing.T, r e2e.Record) (string, int64) {
	var v struct {
		UserID string `json:"user_id"`
		Steps  int64  `json:"steps"`
		TS     string `json:"ts"`
		TZ     string `json:"tz"`
	}
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatal(err)
	}
	ts, err := time.Parse(time.RFC3339Nano, v.TS)
	if err != nil {
		t.Fatal(err)
	}
	return e2e.DayOf(ts, zone(v.TZ)) + "/" + v.UserID, v.Steps
}

// mismatchesBelow counts the step keys whose value in Redis is below the truth (missing
// counts as below), and names one.
func (e *stepsRun) mismatchesBelow(want truth) (int, string) {
	bad, example := 0, ""
	for k, w := range want {
		day, user, _ := strings.Cut(k, "/")
		got, err := e.Redis.Get(context.Background(), "step:"+day+":"+user).Int64()
		if err != nil && !errors.Is(err, goredis.Nil) {
			e.T.Fatal(err)
		}
		if got < w.steps || errors.Is(err, goredis.Nil) {
			bad++
			example = fmt.Sprintf("step:%s:%s = %d, want at least %d", day, user, got, w.steps)
		}
	}
	return bad, example
}

// TestAnyInterleavingGivesTheSameRedisEndToEnd: one random stream (see propertyStream) in two
// orders through the whole pipeline, each into its own topics and Redis database, gives the
// same Redis contents.
func TestAnyInterleavingGivesTheSameRedisEndToEnd(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		rng := rand.New(rand.NewPCG(21, 8))
		records, ids, invalid := e2e.PropertyStream(rng, 40, 25, time.Now().Add(-13*time.Hour))
		orders := [][]int{e2e.ShuffleStream(rng, ids), e2e.ShuffleStream(rng, ids)}
		dumps := make([]map[string]string, len(orders))
		t.Run("orders", func(t *testing.T) {
			for i, order := range orders {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					t.Parallel()
					e := newE2E(t, brokers)
					adm := testenv.KafkaAdmin(t, brokers)
					group, topic := e.groupAndTopic()
					in := make([]e2e.Record, len(order))
					for j, k := range order {
						in[j] = records[k]
					}
					e.Start("processor")
					e.produce(in, 0)
					testenv.WaitCommitted(t, adm, group, topic, int64(len(in)), 2*time.Minute)
					if got := e.dlqEnd(); got != int64(invalid) {
						t.Errorf("%d dead letters, want %d", got, invalid)
					}
					dumps[i] = e.dump()
				})
			}
		})
		if t.Failed() {
			return
		}
		if len(dumps[0]) < 50 {
			t.Fatalf("only %d keys to compare", len(dumps[0]))
		}
		if !reflect.DeepEqual(dumps[0], dumps[1]) {
			for k, v := range dumps[0] {
				if dumps[1][k] != v {
					t.Errorf("%s: %s in one order, %s in the other", k, v, dumps[1][k])
				}
			}
			t.Fatalf("the two orders differ (%d and %d keys)", len(dumps[0]), len(dumps[1]))
		}
		t.Logf("%d records, %d invalid: the same %d keys in both orders", len(records), invalid, len(dumps[0]))
	})
}

// dump returns every key of the run's Redis database with its contents.
func (e *stepsRun) dump() map[string]string { return testenv.RedisDump(e.T, e.Redis) }

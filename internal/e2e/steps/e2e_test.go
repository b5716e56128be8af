package stepse2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// stepsRun is one end-to-end run (e2e.Run) of daily steps, with a producer of its own.
type stepsRun struct {
	*e2e.Run
	producer *kgo.Client
}

func newE2E(t testing.TB, brokers []string) *stepsRun {
	t.Helper()
	e := &stepsRun{Run: e2e.NewRun(t, brokers, "steps")}
	cl, err := e.Kafka.KgoClient(kgo.ProducerBatchMaxBytes(2<<20), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	e.producer = cl
	return e
}

// position is where a produced record landed.
type position struct {
	partition int32
	offset    int64
}

// produce sends records at rate per second (0: as fast as possible), waits for the acks and
// returns where each record landed.
func (e *stepsRun) produce(records []e2e.Record, rate int) []position {
	e.T.Helper()
	topic := string(e.Kafka.Names.Stream(topics.StepsReported))
	start := time.Now()
	errs := make(chan error, 1)
	at := make([]position, len(records))
	for i, r := range records {
		if rate > 0 && i%1000 == 0 {
			if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
				time.Sleep(wait)
			}
		}
		e.producer.Produce(context.Background(), &kgo.Record{Topic: topic, Key: []byte(r.Key), Value: r.Value}, func(r *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
				return
			}
			at[i] = position{r.Partition, r.Offset}
		})
	}
	if err := e.producer.Flush(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	select {
	case err := <-errs:
		e.T.Fatalf("produce: %v", err)
	default:
	}
	return at
}

// mismatches counts the step keys whose value differs from the truth, and names one.
func (e *stepsRun) mismatches(want truth) (int, string) {
	ctx := context.Background()
	keys := make([]string, 0, len(want))
	for k := range want {
		day, user, _ := strings.Cut(k, "/")
		keys = append(keys, "step:"+day+":"+user)
	}
	bad, example := 0, ""
	for i := 0; i < len(keys); i += 5000 {
		chunk := keys[i:min(i+5000, len(keys))]
		vals, err := e.Redis.MGet(ctx, chunk...).Result()
		if err != nil {
			e.T.Fatalf("MGET: %v", err)
		}
		for j, v := range vals {
			parts := strings.SplitN(chunk[j], ":", 3)
			w := want[parts[1]+"/"+parts[2]]
			if s, _ := v.(string); s != strconv.FormatInt(w.steps, 10) {
				bad++
				example = fmt.Sprintf("%s = %v, want %d", chunk[j], v, w.steps)
			}
		}
	}
	return bad, example
}

// waitExact waits until every step key equals the truth and every board's order too (the sink
// writes a batch's step keys before its boards, so the boards may lag the keys briefly).
func (e *stepsRun) waitExact(want truth, timeout time.Duration) {
	e.T.Helper()
	boards := want.boards()
	deadline := time.Now().Add(timeout)
	for {
		// The comparison reads every step key and board (seconds of CPU under -race), so it
		// waits for the group's commits to cover the input: the processor commits a record only
		// once Redis acknowledged its effects, so the comparison cannot be final before, and
		// polling it earlier took a core from the processes under test.
		problem := e.uncommitted()
		if problem == "" {
			problem = e.boardProblem(boards)
		}
		if problem == "" {
			if bad, example := e.mismatches(want); bad > 0 {
				problem = fmt.Sprintf("%d of %d step keys are wrong, e.g. %s", bad, len(want), example)
			}
		}
		if problem == "" {
			break
		}
		for _, p := range e.Processes {
			if err := p.Exited(); err != nil {
				e.T.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output())
			}
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("after %s, %s", timeout, problem)
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.T.Logf("exact: %d user-days, %d boards", len(want), len(boards))
}

// uncommitted says how many input records the steps group has not committed yet ("" when none).
func (e *stepsRun) uncommitted() string {
	group, topic := e.groupAndTopic()
	if c, n := testenv.Committed(e.Admin.Admin(), group, topic), e.Count(topic); c < n {
		return fmt.Sprintf("the group committed %d of %d input records", c, n)
	}
	return ""
}

// boardProblem says how the first board that differs from the truth differs ("" when none).
func (e *stepsRun) boardProblem(boards map[string][]string) string {
	ctx := context.Background()
	for name, members := range boards {
		key := "rank:steps:" + strings.ReplaceAll(name, "/", ":")
		got, err := e.Redis.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: key, Start: 0, Stop: -1, Rev: true}).Result()
		if err != nil {
			e.T.Fatal(err)
		}
		if len(got) != len(members) {
			return fmt.Sprintf("board %s has %d members, want %d", key, len(got), len(members))
		}
		for i := range members {
			if got[i] != members[i] {
				return fmt.Sprintf("board %s rank %d is %s, want %s", key, i+1, got[i], members[i])
			}
		}
		if ttl := e.Redis.TTL(ctx, key).Val(); ttl <= 0 {
			return fmt.Sprintf("board %s has no expiry (TTL %v)", key, ttl)
		}
	}
	return ""
}

// deadLetters returns the reason header of every record in the dead-letter topic.
func (e *stepsRun) deadLetters(want int, timeout time.Duration) []string {
	e.T.Helper()
	cl, err := e.Kafka.KgoClient(kgo.ConsumeTopics(string(e.Kafka.Names.Stream(topics.DLQ))), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		e.T.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var reasons []string
	for len(reasons) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == topics.HeaderReason {
					reasons = append(reasons, string(h.Value))
				}
			}
		})
	}
	return reasons
}

func (e *stepsRun) dlqEnd() int64 { return e.records(topics.DLQ) }

// records counts the records of a stream of the run.
func (e *stepsRun) records(topic goka.Stream) int64 {
	return e.Count(string(e.Kafka.Names.Stream(topic)))
}

const (
	e2eReports = 200_000
	e2eUsers   = 20_000
)

// TestEndToEndExact: 200k reports from 20k users across three local days in six zones, with
// 10% duplicates and 10% stale out-of-order readings, plus poison records → every step value
// and every board order equals the independently computed truth, and each poison record is in
// the dead-letter topic with its reason.
func TestEndToEndExact(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel() // the real broker and kfake at once; the next test waits for both
		e := newE2E(t, brokers)
		records, want := generate(1, e2eReports, e2eUsers, time.Now())
		poison := []e2e.Record{
			{Key: "user-00001", Value: []byte(`{"request_id":`)},
			{Key: "user-00001", Value: []byte(`{"request_id":"p2","user_id":"user-00001","steps":-1,"ts":"` + time.Now().Format(time.RFC3339) + `","tz":"UTC"}`)},
			{Key: "user-00001", Value: []byte(`{"request_id":"p3","user_id":"user-00001","steps":99999999,"ts":"` + time.Now().Format(time.RFC3339) + `","tz":"UTC"}`)},
			{Key: "user-00001", Value: []byte(`{"request_id":"p4","user_id":"user-00001","steps":1,"ts":"` + time.Now().Format(time.RFC3339) + `","tz":"Mars/Base"}`)},
			{Key: "user-00001", Value: []byte(`{"user_id":"user-00001","steps":1,"ts":"` + time.Now().Format(time.RFC3339) + `","tz":"UTC"}`)},
			{Key: "user-00001", Value: []byte(`{"request_id":"` + strings.Repeat("x", 1_000_000) + `"}`)},
		}
		reasons := []string{"json:", "negative", "plausible maximum", "unknown zone", "request_id: missing", "over the limit"}
		mixed := append(append(append([]e2e.Record{}, records[:1000]...), poison...), records[1000:]...)

		e.Start("processor")
		e.produce(mixed, 0)
		e.waitExact(want, 3*time.Minute)
		got := e.deadLetters(len(poison), 30*time.Second)
		if len(got) != len(poison) {
			t.Fatalf("%d dead letters, want %d: %q", len(got), len(poison), got)
		}
		for i, r := range reasons {
			if !strings.Contains(got[i], r) {
				t.Errorf("dead letter %d: reason %q does not say %q", i, got[i], r)
			}
		}
	})
}

// TestCrashRecoveryIsExact: the processor is killed with SIGKILL mid-stream and started
// again: the results are exactly those of an uninterrupted run.
func TestCrashRecoveryIsExact(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel() // the real broker and kfake at once; the next test waits for both
		e := newE2E(t, brokers)
		records, want := generate(2, e2eReports, e2eUsers, time.Now())
		p := e.Start("processor-1")
		done := make(chan struct{})
		go func() { defer close(done); e.produce(records, 25_000) }()
		testenv.WaitFor(t, 2*time.Minute, "some progress before the crash", func() bool {
			return e.Redis.DBSize(context.Background()).Val() > 20_000
		})
		p.Signal(syscall.SIGKILL)
		_ = p.Wait()
		e.Processes = nil
		before := e.Redis.DBSize(context.Background()).Val()
		t.Logf("killed with %d keys in Redis", before)
		e.Start("processor-2")
		<-done
		e.waitExact(want, 3*time.Minute)
		if n := e.dlqEnd(); n != 0 {
			t.Fatalf("%d valid records went to the dead-letter topic", n)
		}
	})
}

// TestRebalanceIsExact: two processor instances share 8 partitions; one stops mid-stream and
// the other takes its partitions over.
func TestRebalanceIsExact(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel() // the real broker and kfake at once; the next test waits for both
		e := newE2E(t, brokers)
		records, want := generate(3, e2eReports, e2eUsers, time.Now())
		e.Start("processor-a")
		b := e.Start("processor-b")
		done := make(chan struct{})
		go func() { defer close(done); e.produce(records, 20_000) }()
		testenv.WaitFor(t, 2*time.Minute, "some progress before the rebalance", func() bool {
			return e.Redis.DBSize(context.Background()).Val() > 20_000
		})
		b.Signal(syscall.SIGTERM)
		if err := b.Wait(); err != nil {
			t.Fatalf("processor-b did not stop cleanly: %v\n%s", err, b.Output())
		}
		e.Processes = e.Processes[:1]
		<-done
		e.waitExact(want, 3*time.Minute)
	})
}

// TestRedisOutageHoldsOffsets: while Redis is unreachable the processor keeps retrying and
// commits no offset past what Redis acknowledged; when Redis is back, everything arrives.
func TestRedisOutageHoldsOffsets(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		e := newE2E(t, brokers)
		proxy := testenv.NewProxy(t, e.RedisAddr)
		e.RedisAddr = proxy.Addr() // the processes write through the proxy
		now := time.Now()
		records, want := generate(4, 40_000, 4_000, now)
		group := string(e.Kafka.Names.Group(steps.Group))
		topic := string(e.Kafka.Names.Stream(topics.StepsReported))
		adm := testenv.KafkaAdmin(t, brokers)
		committed := func() int64 { return testenv.Committed(adm, group, topic) }

		e.Start("processor")
		first := records[:20_000]
		_, wantFirst := generate(4, 20_000, 4_000, now) // the same stream's first half
		e.produce(first, 0)
		e.waitExact(wantFirst, 2*time.Minute)
		testenv.WaitFor(t, time.Minute, "offsets of the first half committed", func() bool { return committed() == 20_000 })

		proxy.SetDown(true)
		e.produce(records[20_000:], 0)
		time.Sleep(5 * time.Second)
		if n := committed(); n != 20_000 {
			t.Fatalf("%d offsets committed while Redis was down, want 20000", n)
		}
		proxy.SetDown(false)
		e.waitExact(want, 2*time.Minute)
		testenv.WaitFor(t, time.Minute, "all offsets committed", func() bool { return committed() == 40_000 })
	})
}

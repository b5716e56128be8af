package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// Partitions is the partition count of a Run's topics, and its processes' --partitions, unless
// WithPartitions says otherwise.
const Partitions = 8

// Option changes a Run NewRun sets up.
type Option func(*Run)

// WithPartitions gives the run's topics n partitions.
func WithPartitions(n int) Option { return func(r *Run) { r.Kafka.Partitions = n } }

// Run is one end-to-end run: topics and groups of its own on a broker (a prefix), a Redis
// database of its own, the rankstream binary started as OS processes on them, and the read API
// on that database. NewRun sets it up and the test's cleanup takes it down.
type Run struct {
	T     testing.TB
	Kafka kafka.Config  // the brokers, Partitions, the run's topic names
	Admin *kafka.Client // the run's client: admin, produce, range reads
	// Redis is the run's database, at RedisAddr, number RedisDB.
	Redis     *goredis.Client
	RedisAddr string
	RedisDB   int
	Bin       string             // the rankstream binary (testenv.Rankstream)
	Processes []*testenv.Process // those Start started, in order
}

// NewRun sets up a run named after the test and name (the topic prefix) on brokers, changed by
// opts: its topics created, its client, its Redis database.
func NewRun(t testing.TB, brokers []string, name string, opts ...Option) *Run {
	t.Helper()
	r := &Run{T: t, Bin: testenv.Rankstream(t),
		Kafka: kafka.Config{Brokers: brokers, Partitions: Partitions, Names: topics.Names{Prefix: testenv.UniqueName(t, name) + "."}}}
	for _, opt := range opts {
		opt(r)
	}
	r.Admin = KafkaClient(t, r.Kafka)
	r.RedisAddr, r.RedisDB = testenv.RedisAddr(t)
	r.Redis = goredis.NewClient(&goredis.Options{Addr: r.RedisAddr, DB: r.RedisDB})
	t.Cleanup(func() { r.Redis.Close() })
	return r
}

// KafkaClient returns a client of kc, as a process has one, after creating kc's topics (30 s
// at most); it is closed when the test ends.
func KafkaClient(t testing.TB, kc kafka.Config) *kafka.Client {
	t.Helper()
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cl.EnsureTopics(ctx, true); err != nil {
		t.Fatal(err)
	}
	return cl
}

// RedisURL is the run's database as --redis takes it.
func (r *Run) RedisURL() string { return fmt.Sprintf("redis://%s/%d", r.RedisAddr, r.RedisDB) }

// KafkaFlags are the flags naming the run's brokers and topics, for any command.
func (r *Run) KafkaFlags() []string {
	return []string{"--brokers", strings.Join(r.Kafka.Brokers, ","), "--topic-prefix", r.Kafka.Names.Prefix}
}

// ProcessArgs is the command line of `rankstream process` on the run's topics and database,
// with its defaults but an HTTP port of its own and warn logs, then extra: a flag given again
// in extra overrides the one before.
func (r *Run) ProcessArgs(extra ...string) []string {
	return slices.Concat([]string{"process"}, r.KafkaFlags(), []string{"--redis", r.RedisURL(),
		"--partitions", strconv.Itoa(r.Kafka.Partitions), "--http", "127.0.0.1:0", "--log-level", "warn"}, extra)
}

// Start starts `rankstream process` (ProcessArgs) as the process name.
func (r *Run) Start(name string, extra ...string) *testenv.Process {
	r.T.Helper()
	p := testenv.StartProcess(r.T, name, r.Bin, r.ProcessArgs(extra...)...)
	r.Processes = append(r.Processes, p)
	return p
}

// Topic is the run's name of stream s.
func (r *Run) Topic(s goka.Stream) string { return string(r.Kafka.Names.Stream(s)) }

// Produce writes recs to topic and waits for their acknowledgements (a minute at most).
func (r *Run) Produce(topic string, recs ...*kgo.Record) {
	r.T.Helper()
	for _, rec := range recs {
		rec.Topic = topic
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Admin.ProduceSync(ctx, recs...); err != nil {
		r.T.Fatal(err)
	}
}

// Ends returns the end offset of each partition of topic.
func (r *Run) Ends(topic string) map[int32]int64 {
	r.T.Helper()
	ends, err := r.Admin.Admin().ListEndOffsets(context.Background(), topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		r.T.Fatalf("end offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// Count is the number of offsets topic holds: the sum of its end offsets.
func (r *Run) Count(topic string) int64 {
	var n int64
	for _, end := range r.Ends(topic) {
		n += end
	}
	return n
}

// DeadLetters counts the records of the run's dead-letter topic.
func (r *Run) DeadLetters() int64 { return r.Count(r.Topic(topics.DLQ)) }

// Records calls fn on every record topic holds now, partition by partition, in offset order.
func (r *Run) Records(topic string, fn func(*kgo.Record) error) {
	r.T.Helper()
	from, to := map[int32]int64{}, r.Ends(topic)
	for part := range to {
		from[part] = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Admin.Read(ctx, topic, from, to, fn); err != nil {
		r.T.Fatalf("reading %s: %v", topic, err)
	}
}

// API serves the read API on the run's database, with opts, until the test ends, and returns
// its base URL.
func (r *Run) API(opts ...api.Option) string {
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = obs.NewServer(api.New(rsredis.NewBatchedReader(r.Redis), slog.New(slog.NewTextHandler(io.Discard, nil)), opts...), obs.DefaultServerLimits)
	srv.Start()
	r.T.Cleanup(srv.Close)
	return srv.URL
}

// Gateway starts `rankstream gateway` on the run's topics with the API keys file keys and extra
// flags, its every other default, waits until it is ready, and returns it with its base URL.
func (r *Run) Gateway(keys string, extra ...string) (*testenv.Process, string) {
	r.T.Helper()
	addr := testenv.FreeAddr(r.T)
	gw := testenv.StartProcess(r.T, "gateway", r.Bin, slices.Concat([]string{"gateway", "--api-keys", keys, "--http", addr, "--log-level", "warn"},
		r.KafkaFlags(), extra)...)
	base := "http://" + addr
	testenv.WaitFor(r.T, time.Minute, "the gateway ready", func() bool {
		if err := gw.Exited(); err != nil {
			r.T.Fatalf("gateway %v\n%s", err, gw.Output())
		}
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return gw, base
}

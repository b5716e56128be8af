package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/testenv"
)

// TestKafkaRoundTrip creates a topic with the broker's default partition
// count, produces keyed records, consumes them in a consumer group and
// commits, on the real broker and on kfake.
func TestKafkaRoundTrip(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		topic := testenv.UniqueName(t, "testenv")
		group := testenv.UniqueName(t, "testenv.group")

		admin := kadm.NewClient(newKafkaClient(t, brokers))
		created, err := admin.CreateTopic(ctx, -1, -1, nil, topic)
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
		if created.NumPartitions != testenv.DefaultPartitions {
			t.Errorf("topic created with %d partitions, want the default %d", created.NumPartitions, testenv.DefaultPartitions)
		}

		const n = 200
		producer := newKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
		records := make([]*kgo.Record, n)
		for i := range records {
			records[i] = &kgo.Record{Key: []byte("user-" + strconv.Itoa(i%17)), Value: []byte(strconv.Itoa(i))}
		}
		if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}

		consumer := newKafkaClient(t, brokers,
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.DisableAutoCommit(),
		)
		seen := make(map[string]bool, n)
		for len(seen) < n {
			fetches := consumer.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("consumed %d of %d records: %v", len(seen), n, err)
			}
			fetches.EachError(func(topic string, p int32, err error) {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			})
			fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
		}
		for i := range n {
			if !seen[strconv.Itoa(i)] {
				t.Fatalf("record %d not consumed", i)
			}
		}
		if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatalf("commit: %v", err)
		}

		offsets, err := admin.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatalf("fetch committed offsets: %v", err)
		}
		var committed int64
		offsets.Each(func(o kadm.OffsetResponse) {
			if o.Err != nil {
				t.Errorf("committed offset %s/%d: %v", o.Topic, o.Partition, o.Err)
			}
			committed += o.At
		})
		if committed != n {
			t.Errorf("committed offsets add up to %d, want %d", committed, n)
		}
	})
}

func newKafkaClient(t *testing.T, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestRedisDatabasesAreIsolated checks that two helpers of one test get two
// different, empty logical databases.
func TestRedisDatabasesAreIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := testenv.Redis(t), testenv.Redis(t)
	dbA, dbB := a.Options().DB, b.Options().DB
	if dbA == dbB || dbA < 1 || dbB < 1 || dbA > 1023 || dbB > 1023 {
		t.Fatalf("got databases %d and %d, want two different ones in 1..1023", dbA, dbB)
	}
	if n := a.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("fresh database %d holds %d keys", dbA, n)
	}
	if err := a.Set(ctx, "k", "in-a", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := a.Get(ctx, "k").Result(); err != nil || got != "in-a" {
		t.Fatalf("GET in database %d = %q, %v; want %q", dbA, got, err, "in-a")
	}
	if n, err := b.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS in database %d = %d, %v; want 0: databases are not isolated", dbB, n, err)
	}

	addr, db := testenv.RedisAddr(t)
	if addr != a.Options().Addr || db == dbA || db == dbB {
		t.Fatalf("RedisAddr = %s, %d; want %s and a third database", addr, db, a.Options().Addr)
	}
}

// TestClickHouseRoundTrip creates a table in the test's database, inserts
// through the native batch API and reads the rows back.
func TestClickHouseRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, database := testenv.ClickHouse(t)
	if !regexp.MustCompile(`^t_[0-9a-f]{16}$`).MatchString(database) {
		t.Fatalf("database name %q, want t_<16 hex digits>", database)
	}

	// LowCardinality needs the allow_experimental_low_cardinality_type
	// profile setting on 18.16: this proves servers.sh set it.
	err := conn.Exec(ctx, `CREATE TABLE steps (
		day Date,
		user_id String,
		region LowCardinality(String),
		steps UInt32,
		updated_at DateTime('UTC')
	) ENGINE = MergeTree() PARTITION BY toYYYYMM(day) ORDER BY (day, user_id)`)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}

	const n = 1000
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO steps (day, user_id, region, steps, updated_at)")
	if err != nil {
		t.Fatalf("prepare batch: %v", err)
	}
	var wantSum uint64
	for i := range n {
		steps := uint32(i * 10)
		wantSum += uint64(steps)
		region := []string{"eu", "us", "ap"}[i%3]
		if err := batch.Append(day, fmt.Sprintf("user-%04d", i), region, steps, day.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("append row %d: %v", i, err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("send batch: %v", err)
	}

	var count, sum uint64
	if err := conn.QueryRow(ctx, "SELECT count(), sum(steps) FROM steps").Scan(&count, &sum); err != nil {
		t.Fatalf("select count: %v", err)
	}
	if count != n || sum != wantSum {
		t.Fatalf("count, sum = %d, %d; want %d, %d", count, sum, n, wantSum)
	}

	var rows []struct {
		UserID string `ch:"user_id"`
		Region string `ch:"region"`
		Steps  uint32 `ch:"steps"`
	}
	if err := conn.Select(ctx, &rows, "SELECT user_id, region, steps FROM steps ORDER BY steps DESC LIMIT 2"); err != nil {
		t.Fatalf("select rows: %v", err)
	}
	if len(rows) != 2 || rows[0].UserID != "user-0999" || rows[0].Region != "eu" || rows[0].Steps != 9990 {
		t.Fatalf("top rows = %+v; want user-0999 (eu, 9990) first", rows)
	}

	var current string
	if err := conn.QueryRow(ctx, "SELECT currentDatabase()").Scan(&current); err != nil || current != database {
		t.Fatalf("currentDatabase() = %q, %v; want %q", current, err, database)
	}
}

func TestUniqueName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)
	a, b := testenv.UniqueName(t, "steps.reported"), testenv.UniqueName(t, "steps.reported")
	if a == b {
		t.Fatalf("two calls gave the same name %q", a)
	}
	for _, name := range []string{a, b, testenv.UniqueName(t, "odd prefix/with:chars"), testenv.UniqueName(t, "")} {
		if !valid.MatchString(name) {
			t.Errorf("UniqueName gave %q: not a valid Kafka topic name", name)
		}
	}
	if !strings.HasPrefix(a, "steps.reported_testuniquename_") {
		t.Errorf("UniqueName = %q, want it to start with the prefix and the test name", a)
	}
}

func TestRedisServerKillKeepsAcknowledgedWrites(t *testing.T) {
	s := testenv.StartRedisServer(t)
	c := s.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("a killed server answered PING")
	}
	// While it is down, its port is held by a socket that does not listen: a connection is
	// refused, as by a server that is down, and Start binds the port again.
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialling a killed server: %v, want connection refused", err)
	}
	s.Start()
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after restart: %q, %v; want v (AOF, fsync always)", got, err)
	}
	s.Pause()
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := c.Ping(pctx).Err()
	cancel()
	if err == nil {
		t.Fatal("a paused server answered PING")
	}
	s.Resume()
	testenv.WaitFor(t, 10*time.Second, "the resumed server to answer", func() bool { return c.Ping(ctx).Err() == nil })
}

// TestRedisDiff: each key with another value, missing or extra gives a line, in key order,
// up to the limit and a count of the rest; equal dumps give none.
func TestRedisDiff(t *testing.T) {
	want := map[string]string{"a": "1", "b": "2", "c": "3"}
	if d := testenv.RedisDiff(want, maps.Clone(want), 10); len(d) != 0 {
		t.Errorf("equal dumps: %q", d)
	}
	got := map[string]string{"a": "1", "b": "9", "d": "4"}
	if d, w := testenv.RedisDiff(want, got, 10), []string{`b: "9", want "2"`, `c: missing (want "3")`, `d: extra "4"`}; !slices.Equal(d, w) {
		t.Errorf("got %q, want %q", d, w)
	}
	if d, w := testenv.RedisDiff(want, got, 1), []string{`b: "9", want "2"`, "... and 2 more"}; !slices.Equal(d, w) {
		t.Errorf("limit 1: got %q, want %q", d, w)
	}
}

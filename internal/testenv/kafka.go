package testenv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultPartitions is the partition count of topics created without an
// explicit count, on the real broker (num.partitions in servers.sh) and in
// the clusters of EachKafka.
const DefaultPartitions = 8

// pingTimeout bounds the reachability check of a real server.
const pingTimeout = 10 * time.Second

// reachableKafka remembers brokers that answered a ping in this process, so
// that only the first test that asks for a broker pays for the check.
var reachableKafka sync.Map // seed broker address -> struct{}

// KafkaBrokers returns the seed brokers of the real Kafka broker announced in
// RANKSTREAM_TEST_KAFKA, after checking that it answers a metadata request.
// Without the variable the test is skipped (or fails if RequireServers).
func KafkaBrokers(t testing.TB) []string {
	t.Helper()
	addr := serverAddr(t, EnvKafka, "Kafka broker")
	if _, ok := reachableKafka.Load(addr); !ok {
		if err := pingKafka(addr); err != nil {
			t.Fatalf("testenv: Kafka broker %s (%s) does not answer: %v", addr, EnvKafka, err)
		}
		reachableKafka.Store(addr, struct{}{})
	}
	return []string{addr}
}

func pingKafka(addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTimeout(pingTimeout))
	if err != nil {
		return fmt.Errorf("kafka ping: new client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("kafka ping: %w", err)
	}
	return nil
}

// FakeKafka starts an in-process kfake cluster of one broker on 127.0.0.1,
// whose topics created without a partition count get partitions partitions,
// and returns its seed brokers. opts are applied after those defaults and
// may override them. The cluster is closed when the test ends.
func FakeKafka(t testing.TB, partitions int, opts ...kfake.Opt) []string {
	t.Helper()
	all := append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(partitions)}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("testenv: start kfake cluster: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// EachKafka runs fn twice, as the subtests "real" (the broker of
// KafkaBrokers) and "kfake" (a fresh FakeKafka with DefaultPartitions), so a
// test proves the same behaviour on both. The "real" subtest skips or fails
// like KafkaBrokers when no broker is announced.
func EachKafka(t *testing.T, fn func(t *testing.T, brokers []string)) {
	t.Helper()
	t.Run("real", func(t *testing.T) {
		fn(t, KafkaBrokers(t))
	})
	t.Run("kfake", func(t *testing.T) {
		fn(t, FakeKafka(t, DefaultPartitions))
	})
}

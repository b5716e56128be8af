package testenv

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Logical databases of the test redis-server (servers.sh starts it with
// --databases 1024). Database 0 only holds the allocation counter; tests get
// databases 1..redisDatabases-1.
const (
	redisDatabases  = 1024
	redisCounterKey = "rankstream:testenv:db"
)

// Redis returns a client of the real redis-server announced in
// RANKSTREAM_TEST_REDIS, bound to a logical database of this test's own
// (see RedisAddr). The client is closed when the test ends.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	addr, db := RedisAddr(t)
	client := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// RedisAddr allocates a logical database of the real redis-server for this
// test and returns the server's address and the database number, e.g. for a
// child process. The database is flushed now and when the test ends. Tests
// running at the same time, in any package, get different databases (until
// 1023 allocations wrap around). Without RANKSTREAM_TEST_REDIS the test is
// skipped (or fails if RequireServers).
func RedisAddr(t testing.TB) (addr string, db int) {
	t.Helper()
	addr = serverAddr(t, EnvRedis, "redis-server")
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	db, err := allocRedisDB(ctx, addr)
	if err != nil {
		t.Fatalf("testenv: redis-server %s (%s): %v", addr, EnvRedis, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		defer cancel()
		if err := flushRedisDB(ctx, addr, db); err != nil {
			t.Errorf("testenv: cleanup: %v", err)
		}
	})
	return addr, db
}

// allocRedisDB takes the next database number from the counter in database 0
// and empties that database.
func allocRedisDB(ctx context.Context, addr string) (int, error) {
	admin := redis.NewClient(&redis.Options{Addr: addr, DB: 0})
	defer admin.Close()
	n, err := admin.Incr(ctx, redisCounterKey).Result()
	if err != nil {
		return 0, fmt.Errorf("allocate database: INCR %s: %w", redisCounterKey, err)
	}
	db := 1 + int(n%(redisDatabases-1))
	if err := flushRedisDB(ctx, addr, db); err != nil {
		return 0, fmt.Errorf("allocate database: %w", err)
	}
	return db, nil
}

func flushRedisDB(ctx context.Context, addr string, db int) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer c.Close()
	if err := c.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHDB database %d: %w", db, err)
	}
	return nil
}

package testenv

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

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

// The cluster has one keyspace (no logical databases), so its tests take turns: a test holds
// clusterLock from RedisCluster until it ends.
const (
	clusterLock    = "rankstream:testenv:cluster-lock"
	clusterLockTTL = 10 * time.Minute // a test that died holding the lock frees it this late
)

// RedisCluster returns a client of the real 3-master Redis Cluster announced in
// RANKSTREAM_TEST_REDIS_CLUSTER, with its seeds (e.g. for a child process's --redis). The test
// has the cluster to itself until it ends (tests in any package wait for each other), and it
// finds it empty: every master is flushed now. Without the variable the test is skipped (or
// fails if RequireServers).
func RedisCluster(t testing.TB) (*redis.ClusterClient, string) {
	t.Helper()
	seeds := serverAddr(t, EnvRedisCluster, "Redis Cluster")
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(seeds, ",")})
	t.Cleanup(func() { _ = client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), clusterLockTTL)
	defer cancel()
	owner := UniqueName(t, "owner")
	for {
		ok, err := client.SetNX(ctx, clusterLock, owner, clusterLockTTL).Result()
		if err != nil {
			t.Fatalf("testenv: Redis Cluster %s (%s): %v", seeds, EnvRedisCluster, err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("testenv: Redis Cluster %s: still taken by another test after %s", seeds, clusterLockTTL)
		case <-time.After(50 * time.Millisecond):
		}
	}
	flush := func(ctx context.Context) error {
		return client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			// FLUSHALL would drop the lock: delete every other key instead.
			iter := m.Scan(ctx, 0, "*", 1000).Iterator()
			for iter.Next(ctx) {
				if k := iter.Val(); k != clusterLock {
					if err := m.Del(ctx, k).Err(); err != nil {
						return err
					}
				}
			}
			return iter.Err()
		})
	}
	if err := flush(ctx); err != nil {
		t.Fatalf("testenv: Redis Cluster %s: flush: %v", seeds, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := flush(ctx); err != nil {
			t.Errorf("testenv: Redis Cluster cleanup: %v", err)
		}
		if owned, _ := client.Get(ctx, clusterLock).Result(); owned == owner {
			client.Del(ctx, clusterLock)
		}
	})
	return client, seeds
}

// RedisDiff says how a Redis dump (RedisDump) got differs from want: up to limit lines, one per
// key with another value, missing or extra, in key order; none when they are equal.
func RedisDiff(want, got map[string]string, limit int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := got[k]; !ok {
			out = append(out, fmt.Sprintf("%s: missing (want %q)", k, want[k]))
		} else if v != want[k] {
			out = append(out, fmt.Sprintf("%s: %q, want %q", k, v, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: extra %q", k, got[k]))
		}
	}
	if len(out) > limit {
		out = append(out[:limit], fmt.Sprintf("... and %d more", len(out)-limit))
	}
	return out
}

// RedisDump returns every key of rdb's database with its contents (a string's value, a ZSET's
// members and scores, a hash's fields, a set's members) and whether it expires: what two runs
// that must leave the same Redis compare.
func RedisDump(t testing.TB, rdb redis.UniversalClient) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		var v string
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "string":
			v = rdb.Get(ctx, k).Val()
		case "zset":
			v = fmt.Sprint(rdb.ZRangeWithScores(ctx, k, 0, -1).Val())
		case "hash":
			v = fmt.Sprint(rdb.HGetAll(ctx, k).Val()) // fmt prints maps sorted by key
		case "set":
			members := rdb.SMembers(ctx, k).Val()
			slices.Sort(members)
			v = fmt.Sprint(members)
		default:
			v = "type " + typ
		}
		out[k] = fmt.Sprintf("%s (expires: %v)", v, rdb.TTL(ctx, k).Val() > 0)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

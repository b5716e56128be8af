package redis

import (
	"context"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// Open connects to Redis and pings it. addr is "host:port", a "redis://host:port/db" URL, or a
// comma-separated list of "host:port" seeds of a Redis Cluster.
func Open(ctx context.Context, addr string) (goredis.UniversalClient, error) {
	var rdb goredis.UniversalClient
	switch {
	case strings.HasPrefix(addr, "redis://") || strings.HasPrefix(addr, "rediss://"):
		opt, err := goredis.ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("redis: parse %q: %w", addr, err)
		}
		rdb = goredis.NewClient(opt)
	case strings.Contains(addr, ","):
		rdb = goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addr, ",")})
	default:
		rdb = goredis.NewClient(&goredis.Options{Addr: addr})
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis: ping %s: %w", addr, err)
	}
	return rdb, nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/service/app"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

func runServe(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlags("serve", "Serves the pages (/ and /boards), the query API (/v1/...), /metrics, /healthz and /readyz, answering from Redis only.")
	fs.SetOutput(stderr)
	var lf logFlags
	lf.register(fs)
	redisAddr := fs.String("redis", "127.0.0.1:6379", "Redis: host:port, redis://host:port/db, or comma-separated Redis Cluster seeds")
	httpAddr := fs.String("http", "127.0.0.1:8080", "listen address")
	hotTTL := fs.Duration("hot-cache-ttl", api.DefaultHotCacheTTL, "how long GET /v1/hot/search serves the snapshot it read from Redis before reading again; 0 reads it for every request")
	timeout := redisTimeoutFlag(fs)
	var cf clickhouseFlags
	cf.registerConn(fs)
	withHistory := fs.Bool("history", false, "also answer GET /v1/history/hot (the pages' time travel) from ClickHouse's topk_history; the rest of the API never reads ClickHouse")
	boardTTL := boardCacheTTLFlag(fs)
	boardsFile := boardsFlag(fs, "GET /v1/boards/{board} answers for them (and for the daily steps board, board steps, always); use the file the processors use")
	log, err := lf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	boards, err := app.LoadBoards(*boardsFile)
	if err != nil {
		return exitCode(err, stderr)
	}
	cfg := app.ServeConfig{RedisAddr: *redisAddr, HTTPAddr: *httpAddr, HotCacheTTL: *hotTTL, BoardCacheTTL: *boardTTL,
		RedisTimeout: *timeout, Boards: boards}
	if *withHistory {
		cfg.History = func() (*rsclickhouse.Sink, error) { return cf.sink() }
	}
	return exitCode(app.Serve(ctx, cfg, log), stderr)
}

// boardCacheTTLFlag registers --board-cache-ttl of the query API (serve, dev).
func boardCacheTTLFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("board-cache-ttl", api.DefaultBoardCacheTTL, fmt.Sprintf("how long the Top-100 of a board read more than %d times within it is served from memory (pages within the Top-100 show changes at most this late; a member's own rank always reads Redis); 0 turns the cache off", api.HotBoardReads))
}

// redisTimeoutFlag registers --redis-timeout of the query API (serve, dev).
func redisTimeoutFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("redis-timeout", api.DefaultRedisTimeout, "deadline of the Redis reads of one query API request; a request Redis does not answer within it gets 503 with Retry-After")
}

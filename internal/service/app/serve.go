package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/service/web"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// ServeConfig is what `rankstream serve` runs: the query API, answering from Redis only.
type ServeConfig struct {
	RedisAddr     string
	HTTPAddr      string
	HotCacheTTL   time.Duration // see api.WithHotCacheTTL
	BoardCacheTTL time.Duration // see api.WithBoardCacheTTL
	RedisTimeout  time.Duration // see api.WithRedisTimeout
	// Boards are the declared boards (--boards FILE) the generic endpoints answer for, besides
	// the daily steps board.
	Boards []*board.Board
	// History, when not nil, opens the ClickHouse history the pages' time travel reads (GET
	// /v1/history/hot); the rest of the API never reads it.
	History func() (*rsclickhouse.Sink, error)
}

// Serve serves the query API and the pages until ctx ends.
func Serve(ctx context.Context, cfg ServeConfig, log *slog.Logger) error {
	rdb, err := rsredis.OpenReader(cfg.RedisAddr, cfg.RedisTimeout)
	if err != nil {
		return err
	}
	defer rdb.Close()
	CheckRedis(ctx, rdb, cfg.RedisAddr, log)
	log.Info("serving", "http", cfg.HTTPAddr, "redis", cfg.RedisAddr, "redis_timeout", cfg.RedisTimeout)
	qapi := api.New(rsredis.NewBatchedReader(rdb), log, api.WithHotCacheTTL(cfg.HotCacheTTL), api.WithBoardCacheTTL(cfg.BoardCacheTTL), api.WithRedisTimeout(cfg.RedisTimeout),
		api.WithBoards(cfg.Boards))
	mux := http.NewServeMux()
	mux.Handle("/", qapi)
	web.Register(mux, web.Config{Boards: cfg.Boards})
	if cfg.History != nil {
		hist, err := cfg.History()
		if err != nil {
			return err
		}
		defer hist.Close()
		api.RegisterHistory(mux, HotHistory{Sink: hist}, log)
	}
	return serveFast(ctx, cfg.HTTPAddr, qapi.FastServer(mux, obs.DefaultServerLimits), log)
}

// serveFast serves srv on addr until ctx ends, then shuts it down as ServeHTTP does.
func serveFast(ctx context.Context, addr string, srv *api.FastServer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("http: listen on %s: %w", addr, err)
	}
	return serveOn(ctx, ln, srv, log)
}

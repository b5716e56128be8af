package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/rankstream/rankstream/internal/api"
	"github.com/rankstream/rankstream/internal/board"
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
}

// Serve serves the query API until ctx ends.
func Serve(ctx context.Context, cfg ServeConfig, log *slog.Logger) error {
	rdb, err := rsredis.OpenReader(cfg.RedisAddr, cfg.RedisTimeout)
	if err != nil {
		return err
	}
	defer rdb.Close()
	CheckRedis(ctx, rdb, cfg.RedisAddr, log)
	log.Info("serving", "http", cfg.HTTPAddr, "redis", cfg.RedisAddr, "redis_timeout", cfg.RedisTimeout)
	qapi := api.New(rsredis.NewReader(rdb), log, api.WithHotCacheTTL(cfg.HotCacheTTL), api.WithBoardCacheTTL(cfg.BoardCacheTTL), api.WithRedisTimeout(cfg.RedisTimeout),
		api.WithBoards(cfg.Boards))
	return ServeHTTP(ctx, cfg.HTTPAddr, qapi, log, nil)
}

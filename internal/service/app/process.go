package app

import (
	"context"
	"errors"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// ProcessConfig is what `rankstream process` runs: the processors against real brokers.
type ProcessConfig struct {
	Pipeline  Pipeline // Redis, History and Log are set by Process
	RedisAddr string
	HTTPAddr  string // /metrics, /healthz, /readyz
	// CreateTopics creates missing topics at start (otherwise they are only verified).
	CreateTopics bool
	// History, when not nil, opens the ClickHouse sink of the history: hot-search snapshots,
	// daily steps, the board archive and the members' scores.
	History func() (*rsclickhouse.Sink, error)
}

// Process runs the processors until ctx ends or one fails in a way a restart cannot heal.
func Process(ctx context.Context, cfg ProcessConfig, log *slog.Logger) error {
	rdb, err := rsredis.Open(cfg.RedisAddr)
	if err != nil {
		return err
	}
	defer rdb.Close()
	CheckRedis(ctx, rdb, cfg.RedisAddr, log)

	p := cfg.Pipeline
	p.Redis, p.Log = rdb, log
	// The history store is not pinged: one that is down at start-up delays history (its writer
	// retries), not the processors.
	if cfg.History != nil {
		hist, err := cfg.History()
		if err != nil {
			return err
		}
		defer hist.Close()
		p.History, p.StepsHistory = History{Sink: hist}, StepsHistory{Sink: hist}
		p.Archive, p.Totals = hist, MemberScores{Sink: hist}
	}

	// The process's one Kafka client for topics, reads and synchronous writes (the consumer
	// groups have their own); closed after every unit returned.
	kcl, err := kafka.NewClient(p.Kafka)
	if err != nil {
		return err
	}
	defer kcl.Close()
	sup := kafka.NewSupervisor(log, kcl.Ping)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		mux := obs.Mux(func(ctx context.Context) error { return errors.Join(sup.Ready(), rdb.Ping(ctx).Err()) })
		return ServeHTTP(gctx, cfg.HTTPAddr, mux, log, nil)
	})
	g.Go(func() error {
		if err := EnsureTopics(gctx, kcl, cfg.CreateTopics, log); err != nil {
			return err
		}
		return Supervise(gctx, sup, p.Units(kcl))
	})
	log.Info("processing", "brokers", p.Kafka.Brokers, "redis", cfg.RedisAddr, slog.String("http", cfg.HTTPAddr))
	return g.Wait()
}

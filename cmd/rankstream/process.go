package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	goredis "github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/obs"
	"github.com/rankstream/rankstream/processors/history"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/sinks/snapshot"
	"github.com/rankstream/rankstream/topics"
)

func runProcess(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlags("process", "Runs the processors (goka groups: steps, hot, hot-merge) against real Kafka brokers, writing to Redis (and ClickHouse with --history).\nStart more instances with the same flags to scale out: they split the partitions.")
	fs.SetOutput(stderr)
	var pf pipelineFlags
	pf.register(fs, true)
	redisAddr := fs.String("redis", "127.0.0.1:6379", "Redis: host:port, redis://host:port/db, or comma-separated Redis Cluster seeds")
	httpAddr := fs.String("http", "127.0.0.1:9101", "listen address of /metrics, /healthz and /readyz")
	stateDir := fs.String("state-dir", "", "folder for goka's local table copies (LevelDB); empty keeps them in memory and recovers them from the changelog at start")
	createTopics := fs.Bool("create-topics", true, "create missing topics at start (otherwise only verify them)")
	var cf clickhouseFlags
	cf.register(fs)
	withHistory := fs.Bool("history", false, "also write every hot-search snapshot to ClickHouse's topk_history (run `rankstream migrate` first), through the topic hot.history and group hot-history: a ClickHouse that is down delays history, never the processors")
	log, err := pf.log.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	kf := &pf.kafka

	kc := kf.config(*stateDir)
	rdb, err := rsredis.Open(*redisAddr)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer rdb.Close()
	checkRedis(ctx, rdb, *redisAddr, log)

	// The history store is not pinged: one that is down at start-up delays history (its writer
	// retries), not the processors.
	var store history.Store
	if *withHistory {
		hist, err := cf.sink()
		if err != nil {
			return exitCode(err, stderr)
		}
		defer hist.Close()
		store = snapshot.History{Sink: hist}
	}

	sup := kafka.NewSupervisor(log)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		mux := obs.Mux(func(ctx context.Context) error { return errors.Join(sup.Ready(), rdb.Ping(ctx).Err()) })
		return serveHTTP(gctx, *httpAddr, mux, log, nil)
	})
	g.Go(func() error {
		if err := ensureTopics(gctx, kc, *createTopics, log); err != nil {
			return err
		}
		return supervise(gctx, sup, pipelineUnits(kc, pf, rdb, store, log))
	})
	log.Info("processing", "brokers", kc.Brokers, "redis", *redisAddr, slog.String("http", *httpAddr))
	return exitCode(g.Wait(), stderr)
}

// pipelineUnits returns the units of every processor: steps with its Redis sink, hot,
// hot-merge and, with a history store, hot-history.
func pipelineUnits(kc kafka.Config, pf pipelineFlags, rdb goredis.UniversalClient, store history.Store, log *slog.Logger) []unit {
	steps := unit{string(topics.StepsGroup), func(ctx context.Context) error {
		return runStepsPipeline(ctx, kc, pf.steps, rdb, log)
	}}
	return append([]unit{steps}, hotUnits(kc, pf.hot, rdb, store, log)...)
}

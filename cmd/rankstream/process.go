package main

import (
	"context"
	"io"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/obs"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
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
	history := fs.Bool("history", false, "also write every hot-search snapshot to ClickHouse's topk_history (run `rankstream migrate` first)")
	log, err := pf.log.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	kf, sf := &pf.kafka, pf.steps

	kc := kf.config(*stateDir)
	if _, err := kc.EnsureTopics(ctx, *createTopics); err != nil {
		return exitCode(err, stderr)
	}
	rdb, err := rsredis.Open(ctx, *redisAddr)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer rdb.Close()

	var hist *rsclickhouse.Sink
	if *history {
		if hist, err = cf.open(ctx); err != nil {
			return exitCode(err, stderr)
		}
		defer hist.Close()
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return runStepsPipeline(gctx, kc, sf, rdb, log) })
	g.Go(func() error { return runHotPipeline(gctx, kc, pf.hot, rdb, hist, log) })
	g.Go(func() error {
		mux := obs.Mux(func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
		return serveHTTP(gctx, *httpAddr, mux, log, nil)
	})
	log.Info("processing", "brokers", kc.Brokers, "redis", *redisAddr, slog.String("http", *httpAddr))
	return exitCode(g.Wait(), stderr)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/obs"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// shutdownGrace is how long a sink keeps retrying after shutdown began; records it could not
// store by then stay uncommitted and are processed again after the restart.
const shutdownGrace = 10 * time.Second

// runStepsPipeline runs the steps processor and its Redis sink until ctx ends. The sink
// outlives the processor: the processor waits for its in-flight records on shutdown, and
// only the sink can complete them. If the sink could not write everything it was handed
// (Redis down past the shutdown grace), the error says so and wraps errSinkFailed: those
// records are not committed, and a restart must create processor and sink anew.
func runStepsPipeline(ctx context.Context, kc kafka.Config, sf stepsFlags, rdb goredis.UniversalClient, log *slog.Logger) error {
	sink := rsredis.NewStepsWriter(rdb, rsredis.StepsOptions{Interval: sf.coalesce, MaxPending: sf.maxPending, Retention: sf.rules.Retention, Logger: log})
	sinkCtx, stopSink := context.WithCancel(context.WithoutCancel(ctx))
	defer context.AfterFunc(ctx, func() { time.AfterFunc(shutdownGrace, stopSink) })()
	sinkDone := make(chan error, 1)
	go func() { sinkDone <- sink.Run(sinkCtx) }()

	cfg := steps.Config{Names: kc.Names, Rules: sf.rules, Sink: sink, Log: log}
	err := steps.Run(ctx, cfg, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(steps.Group), log)...)
	stopSink()
	sinkErr := <-sinkDone
	if sinkErr == nil {
		sinkErr = sink.Err()
	}
	if sinkErr != nil {
		// %v, not %w: the cause often wraps context.Canceled (the grace ended the retries),
		// which must not read as a normal shutdown (exit status 0).
		return fmt.Errorf("%w: %v", errSinkFailed, errors.Join(sinkErr, err))
	}
	return err
}

// errSinkFailed marks a steps pipeline that stopped with records its sink did not write.
var errSinkFailed = fmt.Errorf("steps pipeline: the redis sink did not write every record (restart processor and sink together): %w", kafka.ErrUnwritten)

// checkRedis tells at start-up when Redis does not answer. That ends nothing: the sinks retry
// their writes with backoff (offsets stay uncommitted), the query API answers 503 and /readyz
// is false until Redis answers.
func checkRedis(ctx context.Context, rdb goredis.UniversalClient, addr string, log *slog.Logger) {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		log.Warn("redis: not answering at start-up; writes are retried and reads answer 503 until it does",
			"redis", addr, "err", err)
	}
}

// serveHTTP serves h on addr with obs.DefaultServerLimits (timeouts, a cap on concurrent
// requests) until ctx ends, then shuts down gracefully. started receives the bound address
// (useful with port 0).
func serveHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger, started func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("http: listen on %s: %w", addr, err)
	}
	if started != nil {
		started(ln.Addr())
	}
	srv := obs.NewServer(h, obs.DefaultServerLimits)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		log.Info("http: shutting down", "addr", ln.Addr().String())
		return srv.Shutdown(sctx)
	})
	return g.Wait()
}

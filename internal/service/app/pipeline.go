package app

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

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/archive"
	"github.com/rankstream/rankstream/processors/friends"
	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/processors/hot/history"
	"github.com/rankstream/rankstream/processors/hot/merge"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// shutdownGrace is how long a sink keeps retrying after shutdown began; records it could not
// store by then stay uncommitted and are processed again after the restart.
const shutdownGrace = 10 * time.Second

// Pipeline is every processor of rankstream with its stores: what `process` and `dev` run.
type Pipeline struct {
	Kafka kafka.Config
	Steps StepsConfig
	// Scores runs the scores processor when it declares boards (the boards file).
	Scores  ScoresConfig
	Friends FriendsConfig
	Hot     hot.Config   // Names, Partitions and Log are the pipeline's (Units sets them)
	Merge   merge.Config // likewise
	// Redis is where the boards and the hot-search snapshot go.
	Redis goredis.UniversalClient
	// History, when not nil, stores every hot-search snapshot (through hot.history).
	History history.Store
	// StepsHistory, when not nil, stores every user's daily steps (from the steps table's
	// changelog), gathering changes for StepsHistoryInterval (0: the default, a minute).
	StepsHistory         steps.HistoryStore
	StepsHistoryInterval time.Duration
	// Archive, when not nil, takes the final board of every finished period (archive.Archiver).
	Archive archive.Store
	// ArchiveGrace is how long after a period's end its board is archived
	// (archive.DefaultGrace when 0).
	ArchiveGrace time.Duration
	// Totals, when not nil and boards are declared, takes every member's scores (group
	// scores-totals).
	Totals scores.TotalsStore
	Log    *slog.Logger
}

// StepsConfig shapes the steps processor and its Redis sink.
type StepsConfig struct {
	Rules topics.StepRules
	// Limits are the rules of a user's day that depend on its state (--max-steps-rate).
	Limits steps.Limits
	// Coalesce is how long Redis writes are coalesced per user and day before a flush.
	Coalesce time.Duration
	// MaxPending is how many records may wait for a Redis flush before the processor stops
	// consuming (backpressure while Redis is slow or down).
	MaxPending int
}

// ScoresConfig shapes the scores processor and its Redis sink.
type ScoresConfig struct {
	// Boards are the declared boards (--boards FILE); none: the scores processor does not run.
	Boards []*board.Board
	Rules  topics.ScoreRules
	// Coalesce is how long Redis writes are coalesced per member and period before a flush.
	Coalesce time.Duration
	// MaxPending is how many records may wait for a Redis flush before the processor stops
	// consuming.
	MaxPending int
}

// FriendsConfig shapes the friends processor and its Redis sink.
type FriendsConfig struct {
	Rules topics.FriendRules
	// Coalesce is how long Redis writes are coalesced per pair before a flush.
	Coalesce time.Duration
	// MaxPending is how many records may wait for a Redis flush before the processor stops
	// consuming.
	MaxPending int
}

// Units returns the units of every processor, each run by a kafka.Supervisor: steps and
// friends, each with its Redis sink, scores with its Redis sink (when boards are declared), hot, hot-merge and, with
// history stores, hot-history, steps-history, the archiver and scores-totals. cl is the
// process's Kafka client (of p.Kafka), shared by the units and closed by the caller once they
// all returned.
func (p Pipeline) Units(cl *kafka.Client) []Unit {
	p.Hot.Names, p.Hot.Partitions, p.Hot.Log = p.Kafka.Names, p.Kafka.Partitions, p.Log
	p.Merge.Names, p.Merge.Partitions, p.Merge.Log = p.Kafka.Names, p.Kafka.Partitions, p.Log
	kc, log := p.Kafka, p.Log
	units := []Unit{
		{string(steps.Group), p.runSteps},
		{string(friends.Group), p.runFriends},
		{string(hot.Group), func(ctx context.Context) error {
			return hot.Run(ctx, p.Hot, cl, kc.ProcessorOptions(kc.Names.Group(hot.Group), log)...)
		}},
		{string(merge.Group), func(ctx context.Context) error {
			pub := Publisher{Redis: rsredis.NewHotWriter(p.Redis)}
			if p.History != nil {
				pub.History = history.NewQueue(cl)
			}
			return merge.Run(ctx, p.Merge, pub, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(merge.Group), log)...)
		}},
	}
	if len(p.Scores.Boards) > 0 {
		units = append(units, Unit{string(scores.Group), p.runScores})
	}
	if p.History != nil {
		units = append(units, Unit{string(history.Group), func(ctx context.Context) error {
			return history.Run(ctx, kc, p.History, log)
		}})
	}
	if p.StepsHistory != nil {
		units = append(units, Unit{string(steps.HistoryGroup), func(ctx context.Context) error {
			return steps.RunHistory(ctx, kc, p.StepsHistory, p.StepsHistoryInterval, log)
		}})
	}
	if p.Archive != nil {
		a := archive.Archiver{Boards: p.Scores.Boards, StepsRetention: p.Steps.Rules.Retention, Grace: p.ArchiveGrace,
			ScoresDone: archive.ProcessedUntil(cl, scores.Group, topics.ScoresUpdated),
			StepsDone:  archive.ProcessedUntil(cl, steps.Group, topics.StepsReported),
			Redis:      p.Redis, Store: p.Archive, Log: log}
		units = append(units, Unit{"archive", a.Run})
	}
	if p.Totals != nil && len(p.Scores.Boards) > 0 {
		units = append(units, Unit{string(scores.TotalsGroup), func(ctx context.Context) error {
			return scores.RunTotals(ctx, kc, p.Totals, log)
		}})
	}
	return units
}

// runSteps runs the steps processor and its Redis sink until ctx ends.
func (p Pipeline) runSteps(ctx context.Context) error {
	kc, log := p.Kafka, p.Log
	sink := rsredis.NewStepsWriter(p.Redis, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: p.Steps.Coalesce, MaxPending: p.Steps.MaxPending, Logger: log}, Retention: p.Steps.Rules.Retention})
	cfg := steps.Config{Names: kc.Names, Rules: p.Steps.Rules, Limits: p.Steps.Limits, Sink: sink, Log: log}
	return runWithSink(ctx, sink, func(ctx context.Context) error {
		return steps.Run(ctx, cfg, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(steps.Group), log)...)
	})
}

// runScores runs the scores processor and its Redis sink until ctx ends.
func (p Pipeline) runScores(ctx context.Context) error {
	kc, log := p.Kafka, p.Log
	sink := rsredis.NewScoresWriter(p.Redis, p.Scores.Boards, rsredis.FlushOptions{Interval: p.Scores.Coalesce, MaxPending: p.Scores.MaxPending, Logger: log})
	cfg := scores.Config{Names: kc.Names, Rules: p.Scores.Rules, Boards: p.Scores.Boards, Sink: sink, Log: log}
	return runWithSink(ctx, sink, func(ctx context.Context) error {
		return scores.Run(ctx, cfg, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(scores.Group), log)...)
	})
}

// runFriends runs the friends processor and its Redis sink until ctx ends.
func (p Pipeline) runFriends(ctx context.Context) error {
	kc, log := p.Kafka, p.Log
	sink := rsredis.NewFriendsWriter(p.Redis, rsredis.FlushOptions{Interval: p.Friends.Coalesce, MaxPending: p.Friends.MaxPending, Logger: log})
	cfg := friends.Config{Names: kc.Names, Rules: p.Friends.Rules, Sink: sink, Log: log}
	return runWithSink(ctx, sink, func(ctx context.Context) error {
		return friends.Run(ctx, cfg, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(friends.Group), log)...)
	})
}

// asyncSink is a Redis writer a processor hands its records to (StepsWriter, ScoresWriter).
type asyncSink interface {
	Run(ctx context.Context) error
	Err() error
}

// runWithSink runs a processor (run) and its sink until ctx ends. The sink outlives the
// processor: the processor waits for its in-flight records on shutdown, and only the sink can
// complete them. If the sink could not write everything it was handed (Redis down past the
// shutdown grace), the error says so and wraps ErrSinkFailed: those records are not
// committed, and a restart must create processor and sink anew.
func runWithSink(ctx context.Context, sink asyncSink, run func(context.Context) error) error {
	sinkCtx, stopSink := context.WithCancel(context.WithoutCancel(ctx))
	defer context.AfterFunc(ctx, func() { time.AfterFunc(shutdownGrace, stopSink) })()
	sinkDone := make(chan error, 1)
	go func() { sinkDone <- sink.Run(sinkCtx) }()
	err := run(ctx)
	stopSink()
	sinkErr := <-sinkDone
	if sinkErr == nil {
		sinkErr = sink.Err()
	}
	if sinkErr != nil {
		// %v, not %w: the cause often wraps context.Canceled (the grace ended the retries),
		// which must not read as a normal shutdown (exit status 0).
		return fmt.Errorf("%w: %v", ErrSinkFailed, errors.Join(sinkErr, err))
	}
	return err
}

// ErrSinkFailed marks a processor (steps, scores) that stopped with records its sink did not
// write.
var ErrSinkFailed = fmt.Errorf("pipeline: the redis sink did not write every record (restart processor and sink together): %w", kafka.ErrUnwritten)

// CheckRedis tells at start-up when Redis does not answer. That ends nothing: the sinks retry
// their writes with backoff (offsets stay uncommitted), the query API answers 503 and /readyz
// is false until Redis answers.
func CheckRedis(ctx context.Context, rdb goredis.UniversalClient, addr string, log *slog.Logger) {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		log.Warn("redis: not answering at start-up; writes are retried and reads answer 503 until it does",
			"redis", addr, "err", err)
	}
}

// ServeHTTP serves h on addr with obs.DefaultServerLimits (timeouts, a cap on concurrent
// requests) until ctx ends, then shuts down gracefully. started receives the bound address
// (useful with port 0).
func ServeHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger, started func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("http: listen on %s: %w", addr, err)
	}
	if started != nil {
		started(ln.Addr())
	}
	return serveOn(ctx, ln, obs.NewServer(h, obs.DefaultServerLimits), log)
}

// httpServer is net/http's Server or the query API's FastServer.
type httpServer interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
}

// serveOn serves srv on ln until ctx ends, then shuts it down gracefully (at most 5 s).
func serveOn(ctx context.Context, ln net.Listener, srv httpServer, log *slog.Logger) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
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

package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/kafkaconf"
	"github.com/rankstream/rankstream/processors/hot"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/sinks/snapshot"
	"github.com/rankstream/rankstream/topics"
)

// hotFlags shape the hot-search pipeline.
type hotFlags struct {
	window, slide, lateness, idle, lookahead, checkpoint, mergeWait time.Duration
	k                                                               int
}

func (h *hotFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&h.window, "hot-window", time.Hour, "hot search: length of the sliding window (event time)")
	fs.DurationVar(&h.slide, "hot-slide", 5*time.Second, "hot search: how often the window advances and a snapshot is published (whole seconds)")
	fs.DurationVar(&h.lateness, "hot-lateness", 2*time.Second, "hot search: a window closes this long after the slowest input partition's newest event")
	fs.DurationVar(&h.idle, "hot-idle", 30*time.Second, "hot search: an input partition silent this long (wall clock) stops holding windows back")
	fs.DurationVar(&h.lookahead, "hot-lookahead", 5*time.Minute, "hot search: how far ahead of the closing window events are kept (input partitions read at different speeds); later ones are dropped")
	fs.IntVar(&h.k, "hot-k", 100, "hot search: items per snapshot")
	fs.DurationVar(&h.checkpoint, "hot-checkpoint", 5*time.Second, "hot search: how often each partition stores its window state (wall clock); a restart re-reads the loop records after it")
	fs.DurationVar(&h.mergeWait, "hot-merge-wait", 10*time.Second, "hot search: how long (wall clock) a window waits for its missing partitions before it is published without them (missing_partitions); a late partial publishes it again")
}

func (h *hotFlags) config(kc kafkaconf.Config, log *slog.Logger) hot.Config {
	return hot.Config{Names: kc.Names, Partitions: kc.Partitions, Window: h.window, Slide: h.slide,
		Lateness: h.lateness, Idle: h.idle, Lookahead: h.lookahead, K: h.k, Checkpoint: h.checkpoint,
		MergeWait: h.mergeWait, Log: log}
}

// runHotPipeline runs the hot group and its merge group until ctx ends.
func runHotPipeline(ctx context.Context, kc kafkaconf.Config, hf hotFlags, rdb goredis.UniversalClient, history *rsclickhouse.Sink, log *slog.Logger) error {
	cfg := hf.config(kc, log)
	pub := snapshot.Publisher{Redis: rsredis.NewHotWriter(rdb), History: history}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return hot.Run(gctx, cfg, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(topics.HotGroup), log)...)
	})
	g.Go(func() error {
		return hot.RunMerge(gctx, cfg, pub, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(topics.HotMergeGroup), log)...)
	})
	return g.Wait()
}

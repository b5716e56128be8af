package main

import (
	"context"
	"flag"
	"github.com/rankstream/rankstream/processors/hotmerge"
	"log/slog"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/processors/history"
	"github.com/rankstream/rankstream/processors/hot"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/sinks/snapshot"
)

// hotFlags shape the hot-search pipeline; their defaults are hot.Config's and
// hotmerge.Config's.
type hotFlags struct {
	cfg       hot.Config
	mergeWait time.Duration
}

func (h *hotFlags) register(fs *flag.FlagSet) {
	d, c := hot.DefaultConfig(), &h.cfg
	fs.DurationVar(&c.Window, "hot-window", d.Window, "hot search: length of the sliding window (event time)")
	fs.DurationVar(&c.Slide, "hot-slide", d.Slide, "hot search: how often the window advances and a snapshot is published (whole seconds)")
	fs.DurationVar(&c.Lateness, "hot-lateness", d.Lateness, "hot search: a window closes this long after the slowest input partition's newest event")
	fs.DurationVar(&c.Idle, "hot-idle", d.Idle, "hot search: an input partition silent this long (wall clock) stops holding windows back")
	fs.DurationVar(&c.Lookahead, "hot-lookahead", d.Lookahead, "hot search: how far ahead of the closing window the sketch keeps events; an input partition read faster than the others waits when it gets four fifths of this ahead (nothing is dropped for being early)")
	fs.IntVar(&c.K, "hot-k", d.K, "hot search: items per snapshot")
	fs.DurationVar(&c.Checkpoint, "hot-checkpoint", d.Checkpoint, "hot search: how often each partition stores its window state (wall clock); a restart re-reads the loop records after it")
	fs.DurationVar(&h.mergeWait, "hot-merge-wait", hotmerge.DefaultConfig().MergeWait, "hot search: how long (wall clock) a window waits for its missing partitions before it is published without them (missing_partitions); a late partial publishes it again")
}

func (h *hotFlags) config(kc kafka.Config, log *slog.Logger) hot.Config {
	c := h.cfg
	c.Names, c.Partitions, c.Log = kc.Names, kc.Partitions, log
	return c
}

// mergeConfig is the merge group's configuration: its snapshots hold as many items as the hot
// group's partials.
func (h *hotFlags) mergeConfig(kc kafka.Config, log *slog.Logger) hotmerge.Config {
	return hotmerge.Config{Names: kc.Names, Partitions: kc.Partitions, K: h.cfg.K, MergeWait: h.mergeWait, Log: log}
}

// hotUnits returns the units of the hot-search pipeline, each run by a kafka.Supervisor:
// the hot group and its merge group, restarted independently of each other, and with a history
// store the writer of its queue (hot.history), which the merge fills before it writes Redis.
func hotUnits(kc kafka.Config, hf hotFlags, rdb goredis.UniversalClient, store history.Store, log *slog.Logger) []unit {
	cfg := hf.config(kc, log)
	units := []unit{
		{string(hot.Group), func(ctx context.Context) error {
			return hot.Run(ctx, cfg, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(hot.Group), log)...)
		}},
		{string(hotmerge.Group), func(ctx context.Context) error {
			pub := snapshot.Publisher{Redis: rsredis.NewHotWriter(rdb)}
			if store != nil {
				q, err := history.NewQueue(kc)
				if err != nil {
					return err
				}
				defer q.Close()
				pub.History = q
			}
			return hotmerge.Run(ctx, hf.mergeConfig(kc, log), pub, kc.Brokers, kc.ProcessorOptions(kc.Names.Group(hotmerge.Group), log)...)
		}},
	}
	if store != nil {
		units = append(units, unit{string(history.Group), func(ctx context.Context) error {
			return history.Run(ctx, kc, store, log)
		}})
	}
	return units
}

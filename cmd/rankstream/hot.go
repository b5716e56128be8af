package main

import (
	"flag"
	"time"

	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/processors/hot/merge"
)

// hotFlags shape the hot-search pipeline; their defaults are hot.Config's and
// merge.Config's.
type hotFlags struct {
	cfg       hot.Config
	mergeWait time.Duration
}

func (h *hotFlags) register(fs *flag.FlagSet) {
	d, c := hot.DefaultConfig(), &h.cfg
	fs.DurationVar(&c.Window, "hot-window", d.Window, "hot search: length of the sliding window (event time)")
	fs.DurationVar(&c.Slide, "hot-slide", d.Slide, "hot search: how often the window advances and a snapshot is published (whole seconds)")
	fs.DurationVar(&c.Lateness, "hot-lateness", d.Lateness, "hot search: a window closes this long after the slowest input partition's newest event")
	fs.DurationVar(&c.Idle, "hot-idle", d.Idle, "hot search: an input partition with no data left to read for this long (wall clock) stops holding windows back; one with data unread (a lagging or dead consumer) holds them until it is read")
	fs.DurationVar(&c.Lookahead, "hot-lookahead", d.Lookahead, "hot search: how far ahead of the closing window the sketch keeps events; an input partition read faster than the others waits when it gets four fifths of this ahead (nothing is dropped for being early)")
	fs.IntVar(&c.K, "hot-k", d.K, "hot search: items per snapshot")
	fs.DurationVar(&c.Checkpoint, "hot-checkpoint", d.Checkpoint, "hot search: how often each partition stores its window state (wall clock); a restart re-reads the loop records after it")
	fs.DurationVar(&h.mergeWait, "hot-merge-wait", merge.DefaultMergeWait, "hot search: how long (wall clock) a window waits for its missing partitions before it is published without them (missing_partitions); a late partial publishes it again")
}

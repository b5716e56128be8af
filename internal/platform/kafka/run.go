package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/lovoo/goka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// LagEvery is how often rankstream_consumer_lag is exported, for every consumer group.
const LagEvery = 5 * time.Second

// RunGraph builds the goka processor of graph on brokers (opts: Config.ProcessorOptions, or
// goka.WithTester in tests) and runs it (Run) until ctx ends or it fails; its errors start
// with name.
func RunGraph(ctx context.Context, name string, brokers []string, graph *goka.GroupGraph, log *slog.Logger, opts ...goka.ProcessorOption) error {
	proc, err := goka.NewProcessor(brokers, graph, opts...)
	if err == nil {
		err = Run(ctx, proc, graph.Group(), log)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Run runs proc, a goka processor of group, until ctx ends or it fails, the same way for every
// processor of rankstream: it logs the start and the end, exports the group's consumer lag
// (rankstream_consumer_lag{group,topic,partition}: records behind the high-water mark of each
// input and loop partition this instance owns) every 5 s, and shows the processor to the Supervisor running
// it (Supervisor.Run), whose readiness follows the processor's state. The processor's dead
// letters (DeadLetter) are logged through log.
//
// beside run next to the processor (e.g. the merge's sweep over its table); their context ends
// when ctx does or the processor stops by itself. The processor is stopped only after every one
// of them returned: one that uses the processor (VisitAll) must never run while it stops.
func Run(ctx context.Context, proc *goka.Processor, group goka.Group, log *slog.Logger, beside ...func(context.Context)) error {
	log = log.With("group", string(group))
	if u := unitOf(ctx); u != nil {
		u.attach(proc)
		defer u.detach(proc)
	}
	procCtx, stopProc := context.WithCancel(withDeadLetterLog(context.WithoutCancel(ctx), log))
	defer stopProc()
	besideCtx, stopBeside := context.WithCancel(ctx)
	defer stopBeside()
	go func() {
		select {
		case <-proc.Done():
			stopBeside()
		case <-besideCtx.Done():
		}
	}()
	besides := append([]func(context.Context){func(ctx context.Context) { ExportLag(ctx, string(group), processorLag(proc)) }}, beside...)
	var wg sync.WaitGroup
	for _, b := range besides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b(besideCtx)
		}()
	}
	besidesDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(besidesDone)
		stopProc() // ctx ended (or the processor stopped): only now may it stop
	}()

	log.Info("processor starting")
	start := time.Now()
	err := proc.Run(procCtx)
	stopBeside()
	<-besidesDone
	if err != nil {
		log.Error("processor failed", "after", time.Since(start).Round(time.Millisecond), "err", err)
		return err
	}
	log.Info("processor stopped", "after", time.Since(start).Round(time.Millisecond))
	return nil
}

// Partition names one partition of a topic.
type Partition struct {
	Topic     string
	Partition int32
}

// ExportLag sets rankstream_consumer_lag{group,topic,partition} to what lag measures, for
// every partition it names, every LagEvery until ctx ends; a partition no longer named (this
// instance lost it) is dropped, and so is every partition of group when ExportLag returns. A
// measure that fails (ok false) leaves the last values.
func ExportLag(ctx context.Context, group string, lag func(context.Context) (records map[Partition]int64, ok bool)) {
	g := lagGauges{group: group, shown: map[Partition]bool{}}
	defer g.set(nil)
	t := time.NewTicker(LagEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if now, ok := lag(ctx); ok {
			g.set(now)
		}
	}
}

// lagGauges are the series of rankstream_consumer_lag of one group.
type lagGauges struct {
	group string
	shown map[Partition]bool
}

// set shows lags (a negative one as 0) and drops the series of the partitions it does not name.
func (g lagGauges) set(lags map[Partition]int64) {
	labels := func(p Partition) prometheus.Labels {
		return prometheus.Labels{"group": g.group, "topic": p.Topic, "partition": strconv.Itoa(int(p.Partition))}
	}
	for p := range g.shown {
		if _, still := lags[p]; !still {
			obs.ConsumerLag.Delete(labels(p))
			delete(g.shown, p)
		}
	}
	for p, n := range lags {
		obs.ConsumerLag.With(labels(p)).Set(float64(max(n, 0)))
		g.shown[p] = true
	}
}

// processorLag is a goka processor's consumer lag: the records behind the high-water marks of
// the input and loop partitions this instance owns.
func processorLag(proc *goka.Processor) func(context.Context) (map[Partition]int64, bool) {
	return func(context.Context) (map[Partition]int64, bool) {
		lags := map[Partition]int64{}
		for part, p := range proc.Stats().Group {
			for topic, in := range p.Input {
				lags[Partition{topic, part}] = in.OffsetLag
			}
		}
		return lags, true
	}
}

package kafka

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/obs"
)

// LagEvery is how often rankstream_consumer_lag{group} is exported, for every consumer group.
const LagEvery = 5 * time.Second

// Run runs proc, a goka processor of group, until ctx ends or it fails, the same way for every
// processor of rankstream: it logs the start and the end, exports the group's consumer lag
// (rankstream_consumer_lag{group}: records behind the high-water marks of the input and loop
// partitions this instance owns) every 5 s, and shows the processor to the Supervisor running
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
	lag := obs.ConsumerLag.WithLabelValues(string(group))
	besides := append([]func(context.Context){func(ctx context.Context) { reportLag(ctx, proc, lag) }}, beside...)
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

// reportLag sets lag to the processor's consumer lag every LagEvery until ctx ends.
func reportLag(ctx context.Context, proc *goka.Processor, lag interface{ Set(float64) }) {
	t := time.NewTicker(LagEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var sum int64
		for _, p := range proc.Stats().Group {
			for _, in := range p.Input {
				sum += max(in.OffsetLag, 0)
			}
		}
		lag.Set(float64(sum))
	}
}

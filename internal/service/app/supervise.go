package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/internal/platform/kafka"
)

// Unit is a part of the pipeline that a kafka.Supervisor runs and restarts as a whole: a
// goka processor and what belongs to it (the steps processor and its Redis sink, say).
type Unit struct {
	Name string
	Run  func(context.Context) error
}

// Supervise runs every unit under sup until ctx ends or one fails in a way a restart cannot
// heal (kafka.Permanent); the others are then stopped too.
func Supervise(ctx context.Context, sup *kafka.Supervisor, units []Unit) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, u := range units {
		g.Go(func() error { return sup.Run(gctx, u.Name, u.Run) })
	}
	return g.Wait()
}

// topicsTimeout bounds one attempt of EnsureTopics.
const topicsTimeout = 30 * time.Second

// maxTopicsRetryDelay caps the wait between EnsureTopics attempts. An attempt against a broker
// that is down is a refused dial, so the attempts need not space out like the supervisor's
// restarts (up to kafka.MaxRestartDelay): with that cap the process started up to 30 s after
// its broker was back (TestBrokerOutage/down_at_startup).
const maxTopicsRetryDelay = 5 * time.Second

// EnsureTopics creates and verifies the topics (kafka.Client.EnsureTopics), retrying with
// backoff (from kafka.MinRestartDelay, doubling up to maxTopicsRetryDelay) while the brokers
// cannot be reached or are not ready: a broker down at start-up delays the start (each attempt
// logged), it does not end the process. A topic that does not match its spec (or is missing
// with create=false) ends it.
func EnsureTopics(ctx context.Context, cl *kafka.Client, create bool, log *slog.Logger) error {
	attempts := 1
	err := backoff.Retry(ctx, backoff.New(kafka.MinRestartDelay, maxTopicsRetryDelay), func(err error) bool { return !errors.Is(err, kafka.ErrTopicMismatch) },
		func(attempt int, err error, wait time.Duration) {
			attempts = attempt + 1
			log.Warn("kafka: topics not ready, retrying", "attempt", attempt, "retry_in", wait, "brokers", cl.Config().Brokers, "err", err)
		},
		func() error {
			actx, cancel := context.WithTimeout(ctx, topicsTimeout)
			defer cancel()
			_, err := cl.EnsureTopics(actx, create)
			return err
		})
	if err == nil && attempts > 1 {
		log.Info("kafka: topics ready", "attempts", attempts)
	}
	return err
}

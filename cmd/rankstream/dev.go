package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/api"
	"github.com/rankstream/rankstream/internal/embedded"
	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/loadgen"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

func runDev(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("dev", "Runs the whole pipeline on one machine: an embedded Kafka broker (kfake, data under --data-dir),\nembedded Redis (miniredis) unless --redis names a real one, the processors, the query API,\nand demo traffic.")
	fs.SetOutput(stderr)
	var pf pipelineFlags
	pf.register(fs, false)
	kafkaListen := fs.String("kafka-listen", "127.0.0.1:0", "address of the embedded Kafka broker (port 0 picks a free one), e.g. 127.0.0.1:9092")
	dataDir := fs.String("data-dir", "data", "folder of the embedded broker's data (topics and committed offsets survive a restart); empty keeps it in memory")
	redisAddr := fs.String("redis", "", "a real Redis (host:port or redis:// URL); empty runs embedded miniredis")
	httpAddr := fs.String("http", "127.0.0.1:8080", "listen address of the query API, pages and metrics")
	redisTimeout := redisTimeoutFlag(fs)
	demo := fs.Bool("demo", true, "generate demo traffic")
	demoRate := fs.Float64("demo-rate", 200, "demo step reports per second")
	demoUsers := fs.Int("demo-users", 2_000, "demo users")
	log, err := pf.log.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	kf := &pf.kafka

	kafkaDir := ""
	if *dataDir != "" {
		kafkaDir = filepath.Join(*dataDir, "kafka")
	}
	cluster, err := embedded.Kafka(*kafkaListen, kafkaDir, kf.partitions)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer cluster.Close()
	kf.brokers = strings.Join(cluster.ListenAddrs(), ",")

	embeddedRedis := *redisAddr == ""
	if embeddedRedis {
		mr, err := embedded.Redis("127.0.0.1:0")
		if err != nil {
			return exitCode(err, stderr)
		}
		defer mr.Close()
		*redisAddr = mr.Addr()
	}
	rdb, err := rsredis.Open(*redisAddr)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer rdb.Close()
	checkRedis(ctx, rdb, *redisAddr, log)
	// The query API reads through a client of its own, bounded by --redis-timeout.
	qdb, err := rsredis.OpenReader(*redisAddr, *redisTimeout)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer qdb.Close()

	kc := kf.config(filepath.Join(*dataDir, "state"))
	if *dataDir == "" {
		kc.StateDir = ""
	}
	if err := ensureTopics(ctx, kc, true, log); err != nil {
		return exitCode(err, stderr)
	}
	if embeddedRedis {
		// miniredis starts empty: replay the retained steps reports so the boards come back.
		// The writes are absolute values, so replaying over the kept table state is exact. The
		// hot groups need no replay: their windows come back from their checkpoints, and the
		// next snapshot (one slide later) refills hot:search:latest.
		if _, err := kc.ResetOffsets(ctx, kc.Names.Group(steps.Group), kc.Names.Stream(topics.StepsReported), time.Time{}); err != nil {
			return exitCode(err, stderr)
		}
	}

	sup := kafka.NewSupervisor(log)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return supervise(gctx, sup, pipelineUnits(kc, pf, rdb, nil, log))
	})
	g.Go(func() error {
		qapi := api.New(rsredis.NewReader(qdb), log, api.WithRedisTimeout(*redisTimeout), api.WithReady(sup.Ready))
		return serveHTTP(gctx, *httpAddr, qapi, log, func(a net.Addr) {
			fmt.Fprintf(stdout, "rankstream dev is running\n  Kafka (kfake):  %s\n  Redis:          %s\n  query API:      http://%s/v1/boards/steps?limit=10\n  hot search:     http://%s/v1/hot/search?k=10\n  metrics:        http://%s/metrics\n",
				kf.brokers, *redisAddr, a, a, a)
		})
	})
	if *demo {
		g.Go(func() error {
			gen, err := demoSearch()
			if err != nil {
				return err
			}
			return demoProduce(gctx, kc, topics.SearchQueries, *demoRate, gen.Next, log)
		})
		g.Go(func() error {
			gen, err := loadgen.NewSteps(loadgen.StepsConfig{Users: *demoUsers, DupRatio: 0.05, StaleRatio: 0.05, Seed: uint64(time.Now().UnixNano())})
			if err != nil {
				return err
			}
			return demoProduce(gctx, kc, topics.StepsReported, *demoRate, gen.Next, log)
		})
	}
	return exitCode(g.Wait(), stderr)
}

// demoSearch generates search queries: a Zipf vocabulary plus two planted terms whose
// popularity rises and falls over ten minutes, so the hot list moves while you watch.
func demoSearch() (*loadgen.Search, error) {
	now := time.Now()
	return loadgen.NewSearch(loadgen.SearchConfig{
		Terms: 2_000, Skew: 1.0, VariantRatio: 0.2, Seed: uint64(now.UnixNano()),
		Trends: []loadgen.Trend{
			{Term: "black friday deals", Peak: now.Add(3 * time.Minute), Width: 5 * time.Minute, Share: 0.08},
			{Term: "snow storm", Peak: now.Add(8 * time.Minute), Width: 5 * time.Minute, Share: 0.08},
		},
	})
}

// demoProduce sends what next generates into the stream at rate records per second until ctx
// ends.
func demoProduce(ctx context.Context, kc kafka.Config, stream goka.Stream, rate float64, next func(time.Time) []loadgen.Record, log *slog.Logger) error {
	cl, err := kc.Client(kgo.ProducerLinger(10 * time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = loadgen.Produce(ctx, cl, loadgen.ProduceConfig{
		Topic: string(kc.Names.Stream(stream)), Rate: rate, Progress: 30 * time.Second,
	}, next, log)
	return err
}

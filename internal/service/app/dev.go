package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/service/web"
	"github.com/rankstream/rankstream/processors/friends"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// DevConfig is what `rankstream dev` runs: the whole pipeline on one machine, on an embedded
// Kafka broker (kfake) and, unless RedisAddr names a real one, embedded Redis (miniredis).
type DevConfig struct {
	// Pipeline: Kafka.Brokers, Kafka.StateDir, Redis and Log are set by Dev; without
	// Scores.Boards, Dev declares DemoBoards.
	Pipeline    Pipeline
	KafkaListen string // address of the embedded broker (port 0 picks a free one)
	// DataDir holds the embedded broker's data and the tables' state; "" keeps them in memory.
	DataDir      string
	RedisAddr    string // "" runs miniredis
	HTTPAddr     string // query API, write gateway, metrics, health
	RedisTimeout time.Duration
	// BoardCacheTTL: see api.WithBoardCacheTTL (0: off).
	BoardCacheTTL time.Duration
	// APIKey is the key the gateway's routes accept; "" makes a random one, printed at start.
	APIKey    string
	Demo      bool    // generate demo traffic
	DemoRate  float64 // demo step reports (and search queries; a tenth as many score ops) per second
	DemoUsers int
}

// Dev runs the pipeline, the query API, the write gateway's routes (accepting cfg.APIKey) and
// the demo traffic until ctx ends, printing the addresses and the key to stdout once the API
// listens.
func Dev(ctx context.Context, cfg DevConfig, stdout io.Writer, log *slog.Logger) error {
	kafkaDir := ""
	if cfg.DataDir != "" {
		kafkaDir = filepath.Join(cfg.DataDir, "kafka")
	}
	cluster, err := EmbeddedKafka(cfg.KafkaListen, kafkaDir, cfg.Pipeline.Kafka.Partitions)
	if err != nil {
		return err
	}
	defer cluster.Close()

	redisAddr := cfg.RedisAddr
	if redisAddr == "" {
		mr, err := EmbeddedRedis("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer mr.Close()
		redisAddr = mr.Addr()
	}
	rdb, err := rsredis.Open(redisAddr)
	if err != nil {
		return err
	}
	defer rdb.Close()
	CheckRedis(ctx, rdb, redisAddr, log)
	// The query API reads through a client of its own, bounded by RedisTimeout.
	qdb, err := rsredis.OpenReader(redisAddr, cfg.RedisTimeout)
	if err != nil {
		return err
	}
	defer qdb.Close()

	p := cfg.Pipeline
	p.Redis, p.Log = rdb, log
	loads := demoScoreLoads
	if len(p.Scores.Boards) == 0 {
		p.Scores.Boards = DemoBoards()
	} else {
		loads = nil
		for _, b := range p.Scores.Boards {
			loads = append(loads, loadgen.ScoreBoardLoad{Board: b.Name, Op: topics.OpIncr})
		}
	}
	p.Kafka.Brokers = cluster.ListenAddrs()
	p.Kafka.StateDir = ""
	if cfg.DataDir != "" {
		p.Kafka.StateDir = filepath.Join(cfg.DataDir, "state")
	}
	kc := p.Kafka
	// The process's one Kafka client for topics, reads and synchronous writes (the consumer
	// groups and the demo producers have their own); closed after every unit returned.
	kcl, err := kafka.NewClient(kc)
	if err != nil {
		return err
	}
	defer kcl.Close()
	if err := EnsureTopics(ctx, kcl, true, log); err != nil {
		return err
	}
	if cfg.RedisAddr == "" {
		// miniredis starts empty: replay the retained steps reports and score ops so the
		// boards come back (steps.Replay, scores.Replay: the tables are kept and the writes
		// absolute, so replaying over them is exact). The hot groups need no replay: their
		// windows come back from their checkpoints, and the next snapshot (one slide later)
		// refills hot:search:latest.
		for _, r := range []kafka.Replay{steps.Replay(kc.Names), scores.Replay(kc.Names)} {
			for _, gt := range r.Offsets {
				if _, err := kcl.ResetOffsets(ctx, gt.Group, gt.Topic, time.Time{}); err != nil {
					return err
				}
			}
		}
		// And the friendships: every op hands its pair as the table keeps it.
		if _, err := kcl.ResetOffsets(ctx, kc.Names.Group(friends.Group), kc.Names.Stream(topics.FriendsChanged), time.Time{}); err != nil {
			return err
		}
	}
	if cfg.Demo {
		if err := kcl.ProduceSync(ctx, demoFriendships(kc.Names, cfg.DemoUsers, time.Now())...); err != nil {
			return err
		}
	}

	key := cfg.APIKey
	if key == "" {
		key = rand.Text()
	}
	gw, err := gateway.New(gateway.Config{Kafka: kc, StepRules: p.Steps.Rules, ScoreRules: p.Scores.Rules, Boards: p.Scores.Boards, Keys: gateway.NewKeys([]gateway.APIKey{gateway.KeyOf("dev", key)}), Log: log})
	if err != nil {
		return err
	}
	defer gw.Close()

	sup := kafka.NewSupervisor(log, kcl.Ping)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return Supervise(gctx, sup, p.Units(kcl)) })
	g.Go(func() error {
		// The query API answers every path but the gateway's routes.
		mux := http.NewServeMux()
		mux.Handle("/", api.New(rsredis.NewBatchedReader(qdb), log, api.WithRedisTimeout(cfg.RedisTimeout), api.WithBoardCacheTTL(cfg.BoardCacheTTL), api.WithReady(sup.Ready),
			api.WithBoards(p.Scores.Boards)))
		gw.Register(mux)
		web.Register(mux, web.Config{Boards: p.Scores.Boards, Scopes: loadgen.DefaultRegions})
		return ServeHTTP(gctx, cfg.HTTPAddr, mux, log, func(a net.Addr) {
			fmt.Fprintf(stdout, "rankstream dev is running\n  pages:          http://%s/ (hot search) and http://%s/boards (leaderboards)\n  Kafka (kfake):  %s\n  Redis:          %s\n  query API:      http://%s/v1/boards/steps?limit=10\n  score board:    http://%s/v1/boards/%s?period=total&limit=10\n  friends board:  http://%s/v1/friends/u0/steps?limit=10\n  hot search:     http://%s/v1/hot/search?k=10\n  write gateway:  POST http://%s/v1/steps and /v1/search with Authorization: Bearer %s\n  metrics:        http://%s/metrics\n",
				a, a, strings.Join(kc.Brokers, ","), redisAddr, a, a, p.Scores.Boards[0].Name, a, a, a, key, a)
		})
	})
	if cfg.Demo {
		g.Go(func() error {
			gen, err := demoSearch()
			if err != nil {
				return err
			}
			return demoProduce(gctx, kc, topics.SearchQueries, cfg.DemoRate, gen.Next, log)
		})
		g.Go(func() error {
			gen, err := loadgen.NewScores(loadgen.ScoresConfig{Boards: loads, Members: cfg.DemoUsers, DupRatio: 0.05, Seed: uint64(time.Now().UnixNano())})
			if err != nil {
				return err
			}
			// A tenth of the rate: a live board needs few ops, and each costs a script per board
			// on the embedded Redis, which starts a Lua state for every call.
			return demoProduce(gctx, kc, topics.ScoresUpdated, cfg.DemoRate/10, gen.Next, log)
		})
		g.Go(func() error {
			gen, err := loadgen.NewSteps(loadgen.StepsConfig{Users: cfg.DemoUsers, DupRatio: 0.05, StaleRatio: 0.05, Seed: uint64(time.Now().UnixNano())})
			if err != nil {
				return err
			}
			return demoProduce(gctx, kc, topics.StepsReported, cfg.DemoRate, gen.Next, log)
		})
	}
	return g.Wait()
}

// The demo friendships: each of the first demoFriendUsers demo users (u0, u1, ...) adds the
// demoFriends users after it, so that each has twice as many friends. Few, so that the burst
// at start-up does not hold the embedded Redis back.
const (
	demoFriendUsers = 100
	demoFriends     = 5
)

// demoFriendships are the demo users' friendships (wrapping around among the first
// demoFriendUsers users), at now. Sent again at every start, they change nothing.
func demoFriendships(names topics.Names, users int, now time.Time) []*kgo.Record {
	topic := string(names.Stream(topics.FriendsChanged))
	users = min(users, demoFriendUsers)
	var recs []*kgo.Record
	for i := range users {
		for k := 1; k <= min(demoFriends, users-1); k++ {
			u, f := "u"+strconv.Itoa(i), "u"+strconv.Itoa((i+k)%users)
			v, _ := json.Marshal(topics.FriendOp{UserID: u, FriendID: f, Op: topics.OpAdd, TS: topics.Timestamp{Time: now}})
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(u), Value: v, Timestamp: now})
		}
	}
	return recs
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
	cl, err := kc.KgoClient(kgo.ProducerLinger(10 * time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = loadgen.Produce(ctx, cl, loadgen.ProduceConfig{
		Topic: string(kc.Names.Stream(stream)), Rate: rate, Progress: 30 * time.Second,
	}, next, log)
	return err
}

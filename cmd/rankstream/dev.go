package main

import (
	"context"
	"io"

	"github.com/rankstream/rankstream/internal/service/app"
)

func runDev(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("dev", "Runs the whole pipeline on one machine: an embedded Kafka broker (kfake, data under --data-dir),\nembedded Redis (miniredis) unless --redis names a real one, the processors, the query API,\nthe write gateway's routes, and demo traffic.")
	fs.SetOutput(stderr)
	var pf pipelineFlags
	pf.register(fs, false, "empty declares the demo boards (arena, highscore) and their demo traffic")
	kafkaListen := fs.String("kafka-listen", "127.0.0.1:0", "address of the embedded Kafka broker (port 0 picks a free one), e.g. 127.0.0.1:9092")
	dataDir := fs.String("data-dir", "data", "folder of the embedded broker's data (topics and committed offsets survive a restart); empty keeps it in memory")
	redisAddr := fs.String("redis", "", "a real Redis (host:port or redis:// URL); empty runs embedded miniredis")
	httpAddr := fs.String("http", "127.0.0.1:8080", "listen address of the query API, the write gateway's routes, pages and metrics")
	apiKey := fs.String("api-key", "", "the key the write gateway's routes accept (Authorization: Bearer <key>); empty makes a random one, printed at start")
	redisTimeout := redisTimeoutFlag(fs)
	boardTTL := boardCacheTTLFlag(fs)
	demo := fs.Bool("demo", true, "generate demo traffic")
	demoRate := fs.Float64("demo-rate", 200, "demo step reports per second (as many search queries, a tenth as many score ops)")
	demoUsers := fs.Int("demo-users", 2_000, "demo users")
	log, err := pf.log.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	pipeline, err := pf.pipeline("")
	if err != nil {
		return exitCode(err, stderr)
	}
	return exitCode(app.Dev(ctx, app.DevConfig{
		Pipeline: pipeline, KafkaListen: *kafkaListen, DataDir: *dataDir, RedisAddr: *redisAddr,
		HTTPAddr: *httpAddr, RedisTimeout: *redisTimeout, BoardCacheTTL: *boardTTL, APIKey: *apiKey, Demo: *demo, DemoRate: *demoRate, DemoUsers: *demoUsers,
	}, stdout, log), stderr)
}

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/service/gateway"
)

func runGateway(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlags("gateway", "Serves the write API (POST /v1/steps, /v1/search, /v1/scores), /metrics, /healthz and /readyz: validates each body with the\nprocessors' rules, rate-limits per user, and answers 202 once Kafka acknowledged (503 with Retry-After while it cannot).")
	fs.SetOutput(stderr)
	var kf kafkaFlags
	kf.registerClient(fs)
	var lf logFlags
	lf.register(fs)
	var cfg app.GatewayConfig
	g := &cfg.Gateway
	registerStepRules(fs, &g.StepRules)
	boards := boardsFlag(fs, "the same file as the processors': a score update naming another board is refused; empty: every score update is refused")
	fs.StringVar(&cfg.HTTPAddr, "http", "127.0.0.1:8090", "listen address")
	fs.StringVar(&cfg.KeysFile, "api-keys", "", "the `file` of the accepted API keys, one \"name sha256-hex\" a line (the SHA-256 of the key: printf %s \"$KEY\" | sha256sum); read again on SIGHUP")
	fs.Float64Var(&g.UserRate, "user-rate", gateway.DefaultUserRate, "requests a second a user may make on a route, on average (429 with Retry-After beyond); negative: no per-user limit")
	fs.IntVar(&g.UserBurst, "user-burst", gateway.DefaultUserBurst, "requests a user may make at once on a route")
	fs.IntVar(&g.UserBuckets, "user-buckets", gateway.DefaultUserBuckets, "users whose rate is tracked in memory; beyond, the least recently seen one is forgotten")
	fs.Int64Var(&g.MaxBody, "max-body", gateway.DefaultMaxBody, "largest request body in bytes (413 beyond)")
	fs.Int64Var(&g.MaxInFlightBytes, "max-in-flight-bytes", gateway.DefaultMaxInFlightBytes, "bytes of records handed to Kafka and not yet acknowledged; a request past it is shed with 503 at once")
	fs.DurationVar(&g.RequestTimeout, "request-timeout", gateway.DefaultRequestTimeout, "deadline for Kafka to acknowledge a request's records (503 with Retry-After after it)")
	fs.DurationVar(&g.ShedRetryAfter, "shed-retry-after", gateway.DefaultShedRetryAfter, "largest Retry-After of a 503: each draws whole seconds from 1 to it, spreading a surge's retries")
	log, err := lf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	if cfg.KeysFile == "" {
		fmt.Fprintln(stderr, "rankstream gateway: --api-keys is required (rankstream gateway --help)")
		return exitCode(errUsage, stderr)
	}
	if g.Boards, err = app.LoadBoards(*boards); err != nil {
		return exitCode(err, stderr)
	}
	g.ScoreRules = scoreRulesOf(g.StepRules)
	g.Kafka = kf.config("")
	return exitCode(app.Gateway(ctx, cfg, log), stderr)
}

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/service/archive"
	"github.com/rankstream/rankstream/processors/steps"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

func runProcess(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlags("process", "Runs the processors (goka groups: steps, hot, hot-merge, scores with --boards; with --history the groups hot-history and steps-history) against real Kafka brokers, writing to Redis (and ClickHouse with --history).\nStart more instances with the same flags to scale out: they split the partitions.")
	fs.SetOutput(stderr)
	var pf pipelineFlags
	pf.register(fs, true, "with it the scores processor runs too (group scores, topic scores.updated)")
	redisAddr := fs.String("redis", "127.0.0.1:6379", "Redis: host:port, redis://host:port/db, or comma-separated Redis Cluster seeds")
	httpAddr := fs.String("http", "127.0.0.1:9101", "listen address of /metrics, /healthz and /readyz")
	stateDir := fs.String("state-dir", "", "folder for goka's local table copies (LevelDB); empty keeps them in memory and recovers them from the changelog at start")
	createTopics := fs.Bool("create-topics", true, "create missing topics at start (otherwise only verify them)")
	var cf clickhouseFlags
	cf.register(fs)
	withHistory := fs.Bool("history", false, "also write the history to ClickHouse (run `rankstream migrate` first): every hot-search snapshot to topk_history, through the topic hot.history and group hot-history; every user's daily steps to user_daily_steps, from the steps table through group steps-history; every member's scores to board_member_scores (group scores-totals); and the final board of every finished period to board_archive. A ClickHouse that is down delays history, never the processors")
	historyInterval := fs.Duration("history-interval", steps.DefaultHistoryInterval, "with --history, how long the daily steps history gathers changes before it writes them (one insert per interval; a batch of 50,000 days is written at once)")
	archiveGrace := fs.Duration("archive-grace", archive.DefaultGrace, "with --history: how long after a period's end (in the board's zone; for the steps board, the day's end at UTC-12) its board is archived, so that late ops still count")
	log, err := pf.log.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	if *historyInterval <= 0 {
		fmt.Fprintln(stderr, "rankstream process: --history-interval must be positive")
		return exitCode(errUsage, stderr)
	}
	pipeline, err := pf.pipeline(*stateDir)
	if err != nil {
		return exitCode(err, stderr)
	}
	if *archiveGrace <= 0 {
		return exitCode(fmt.Errorf("--archive-grace %s: must be positive: %w", *archiveGrace, errUsage), stderr)
	}
	pipeline.ArchiveGrace = *archiveGrace
	cfg := app.ProcessConfig{Pipeline: pipeline, RedisAddr: *redisAddr, HTTPAddr: *httpAddr, CreateTopics: *createTopics}
	cfg.Pipeline.StepsHistoryInterval = *historyInterval
	if *withHistory {
		cfg.History = func() (*rsclickhouse.Sink, error) { return cf.sink() }
	}
	return exitCode(app.Process(ctx, cfg, log), stderr)
}

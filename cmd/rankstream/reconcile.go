package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/service/reconcile"
	"github.com/rankstream/rankstream/topics"
)

func runReconcile(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("reconcile", "Compares Redis with the source of truth, the group table (read from its changelog): the step keys and\n"+
		"boards of --day, or with --board the global and scope boards of one period of a score board. Prints the\n"+
		"differences by class (missing, stale, extra, wrong order) with examples and exits 1 when there are any; with\n"+
		"--repair rewrites them with the sinks' own writes, compares again, and exits 1 only if some remain.")
	fs.SetOutput(stderr)
	var kf kafkaFlags
	kf.registerClient(fs)
	var lf logFlags
	lf.register(fs)
	retention := fs.Duration("retention", topics.DefaultStepRules.Retention, "the --retention of the steps processors: the TTL a repair gives step keys and boards, as they do")
	redisAddr := fs.String("redis", "127.0.0.1:6379", "Redis: host:port, redis://host:port/db, or comma-separated Redis Cluster seeds")
	day := fs.String("day", "", "the day (yyyymmdd): of the steps boards, or the day whose --period window of --board to compare")
	cfg := reconcile.Config{}
	fs.StringVar(&cfg.Board, "board", "", "a score board of --boards to compare instead of the daily steps (steps: the daily steps)")
	fs.StringVar(&cfg.Period, "period", "d", "with --board: d, w, m, season (the window holding --day), total, or a window by id (h:2026113009, d:20261130, season:s1)")
	boardsFile := boardsFlag(fs, "with --board; use the file the processors use")
	fs.BoolVar(&cfg.Repair, "repair", false, "rewrite what differs with the sinks' writes, then compare again")
	log, err := lf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	if cfg.Board == board.StepsBoard {
		cfg.Board = ""
	}
	if *day == "" && (cfg.Board == "" || cfg.Period != "total" && !strings.Contains(cfg.Period, ":")) {
		fmt.Fprintln(stderr, "rankstream reconcile: --day is required (rankstream reconcile --help)")
		return exitCode(errUsage, stderr)
	}
	if *day != "" {
		if cfg.Day, err = board.ParseDay(*day); err != nil {
			fmt.Fprintf(stderr, "rankstream reconcile: --day: %v\n", err)
			return exitCode(errUsage, stderr)
		}
	}
	if cfg.Board != "" {
		if cfg.Boards, err = app.LoadBoards(*boardsFile); err != nil {
			return exitCode(err, stderr)
		}
	}
	cfg.RedisAddr, cfg.Kafka, cfg.StepsRetention = *redisAddr, kf.config(""), *retention
	return exitCode(reconcile.Run(ctx, cfg, stdout, log), stderr)
}

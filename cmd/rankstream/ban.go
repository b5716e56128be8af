package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/topics"
)

func runBan(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("ban", "Bans a member from a board (--board B) or from every board (--all): the scores processor removes them from every period at once and sends their later ops to the dead-letter topic (reason banned). --unban lifts a ban (the member starts again from nothing); --release lifts the freeze a quarantined op left (the entries go on from where they were). The op goes onto scores.updated, keyed by the member; each one applied is recorded in scores.quarantine with who (--by) and why (--reason).")
	fs.SetOutput(stderr)
	var kf kafkaFlags
	kf.registerClient(fs)
	cfg := app.BanConfig{Op: topics.OpBan}
	fs.StringVar(&cfg.Board, "board", "", "the board (one of the boards file)")
	all := fs.Bool("all", false, "every declared board (board \"*\")")
	fs.StringVar(&cfg.Member, "member", "", "the member id")
	fs.StringVar(&cfg.Reason, "reason", "", "why, for the audit (up to 512 bytes)")
	fs.StringVar(&cfg.By, "by", currentUser(), "who, for the audit (default: the user running the command)")
	unban := fs.Bool("unban", false, "lift a ban instead")
	release := fs.Bool("release", false, "lift the freeze of a quarantined member instead")
	if err := parse(fs, args); err != nil {
		return exitCode(err, stderr)
	}
	switch {
	case (cfg.Board == "") == !*all:
		fmt.Fprintln(stderr, "rankstream ban: give exactly one of --board B and --all")
		return exitCode(errUsage, stderr)
	case cfg.Member == "":
		fmt.Fprintln(stderr, "rankstream ban: --member is required")
		return exitCode(errUsage, stderr)
	case *unban && *release:
		fmt.Fprintln(stderr, "rankstream ban: give at most one of --unban and --release")
		return exitCode(errUsage, stderr)
	case *all:
		cfg.Board = topics.AllBoards
	}
	switch {
	case *unban:
		cfg.Op = topics.OpUnban
	case *release:
		cfg.Op = topics.OpRelease
	}
	cfg.Kafka = kf.config("")
	op, err := app.Ban(ctx, cfg, time.Now())
	if err != nil {
		return exitCode(err, stderr)
	}
	fmt.Fprintf(stdout, "sent %s of member %s on board %s by %s (request id %s)\n", op.Op, op.Member, op.Board, op.By, op.RequestID)
	return 0
}

// currentUser names the user running the command: the login name, else $USER.
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

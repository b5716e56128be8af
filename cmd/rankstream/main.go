// Command rankstream is the one binary of the pipeline: each subcommand turns its flags and
// the RANKSTREAM_* environment into a configuration and hands it to the package that runs it
// (internal/service/app for process, dev, serve and gateway); none holds logic of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name, synopsis string
	run            func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = []command{
	{"dev", "everything on one machine on embedded defaults (kfake, miniredis) with demo traffic", runDev},
	{"process", "run the processors against real Kafka and Redis", runProcess},
	{"serve", "serve the query API and pages from Redis", runServe},
	{"gateway", "serve the write API: HTTP reports into Kafka", runGateway},
	{"topics", "create or verify the Kafka topics", runTopics},
	{"ban", "ban, unban or release a member on one board or every board (fair play)", runBan},
	{"replay", "move a group's offsets back to reprocess the retained input (--dry-run shows the plan)", runReplay},
	{"reconcile", "compare Redis with the group tables (--repair rewrites the differences)", runReconcile},
	{"migrate", "create the ClickHouse schema (idempotent)", runMigrate},
	{"produce", "generate load into Kafka (produce steps|search), or replay a search file", runProduce},
	{"topk", "the hot-search engine offline: sliding-window Top-K of \"<time>\\t<item>\" lines", runTopk},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(dispatch(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "rankstream: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: rankstream <command> [flags]   (rankstream <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.synopsis)
	}
}

// exitCode maps a command's error to an exit status: 0 for none or a normal shutdown, 2 for a
// usage error (already printed by the flag set), 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "rankstream:", err)
	return 1
}

var errUsage = errors.New("usage")

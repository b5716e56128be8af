package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rankstream/rankstream/internal/platform/kafka"
)

func runTopics(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("topics", "Creates the topics rankstream needs (inputs, dead-letter topic, compacted group tables), or with --verify only checks that they exist with the right partition counts and compaction.")
	fs.SetOutput(stderr)
	var kf kafkaFlags
	kf.register(fs, true)
	verify := fs.Bool("verify", false, "only verify; create nothing")
	if err := parse(fs, args); err != nil {
		return exitCode(err, stderr)
	}
	cl, err := kafka.NewClient(kf.config(""))
	if err != nil {
		return exitCode(err, stderr)
	}
	defer cl.Close()
	results, err := cl.EnsureTopics(ctx, !*verify)
	for _, r := range results {
		state := "ok"
		switch {
		case r.Created:
			state = "created"
		case r.Problem != "":
			state = "PROBLEM: " + r.Problem
		}
		fmt.Fprintf(stdout, "%-40s %s\n", r.Name, state)
	}
	return exitCode(err, stderr)
}

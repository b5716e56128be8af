package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestReplayUsage: the flags that cannot make a replay are refused before any broker is
// asked: a missing or contradictory choice with status 2 (usage), a value the flag package
// refuses with status 1 (as for every command).
func TestReplayUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--to-start"}, 2, "--group is required"},
		{[]string{"--group", "steps"}, 2, "exactly one of --to-start, --to-time, --to-offset"},
		{[]string{"--group", "steps", "--to-start", "--to-time", "2026-11-30T00:00:00Z"}, 2, "exactly one of"},
		{[]string{"--group", "steps", "--to-start", "--dry-run", "--follow"}, 2, "a --dry-run moves nothing"},
		{[]string{"--group", "steps", "--to-time", "yesterday"}, 2, "--to-time: parsing time"},
		{[]string{"--group", "steps", "--to-offset", "3"}, 1, "want PARTITION:OFFSET"},
		{[]string{"--group", "steps", "--to-offset", "3:-1"}, 1, "want PARTITION:OFFSET"},
		{[]string{"--group", "steps", "--to-offset", "3:1", "--to-offset", "3:2"}, 1, "partition 3 given twice"},
	} {
		var stderr bytes.Buffer
		code := dispatch(context.Background(), append([]string{"replay"}, c.args...), nil, &bytes.Buffer{}, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("replay %q: status %d, %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}

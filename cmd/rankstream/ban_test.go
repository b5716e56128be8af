package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestBanUsage: what cannot make an operator op is refused before any broker is asked: a
// missing or contradictory choice with status 2 (usage), an op the processor would refuse
// (checked by the same decoder) with status 1.
func TestBanUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--member", "m1"}, 2, "exactly one of --board B and --all"},
		{[]string{"--member", "m1", "--board", "arena", "--all"}, 2, "exactly one of --board B and --all"},
		{[]string{"--board", "arena"}, 2, "--member is required"},
		{[]string{"--board", "arena", "--member", "m1", "--unban", "--release"}, 2, "at most one of --unban and --release"},
		{[]string{"--board", "Arena", "--member", "m1", "--by", "alice"}, 1, `board: "Arena" is not`},
		{[]string{"--board", "arena", "--member", "m 1", "--by", "alice"}, 1, "member: contains U+0020"},
		{[]string{"--board", "arena", "--member", "m1", "--by", ""}, 1, "by: missing"},
		{[]string{"--all", "--member", "m1", "--by", "alice", "--reason", strings.Repeat("x", 513)}, 1, "reason: 513 bytes"},
	} {
		var stderr bytes.Buffer
		code := dispatch(context.Background(), append([]string{"ban", "--brokers", "127.0.0.1:1"}, c.args...), nil, &bytes.Buffer{}, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("ban %q: status %d, %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}

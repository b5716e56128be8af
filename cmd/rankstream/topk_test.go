package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// topkInput holds three events: go at 10:00:01 and 10:00:06, rust at 10:00:02.
const topkInput = "2026-11-30T10:00:01Z\tgo\n2026-11-30T10:00:02Z\trust\n2026-11-30T10:00:06Z\tgo\n"

// The windows of topkInput with --window 10s --slide 5s, one line each; and with --k 1.
const (
	topkSteps = `{"window_start":"2026-11-30T09:59:55Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"go","count":1,"error":0},{"item":"rust","count":1,"error":0}]}
{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0},{"item":"rust","count":1,"error":0}]}
`
	topkStepsK1 = `{"window_start":"2026-11-30T09:59:55Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"go","count":1,"error":0}]}
{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0}]}
`
	topkFinal = `{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0},{"item":"rust","count":1,"error":0}]}
`
)

// TestTopkFlagsAndEnv runs `rankstream topk` as main does: every flag also comes from
// RANKSTREAM_<FLAG>, a flag on the command line wins, a bad variable is a usage error naming
// it, and --help (on standard output) lists the flags and their variables.
func TestTopkFlagsAndEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(file, []byte(topkInput), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		code    int
		stdout  string // exact, unless help
		say     string // in stderr; empty: stderr is empty
		help    bool
		withSTD bool // standard input holds topkInput
	}{
		{name: "flags", args: []string{"--window", "10s", "--slide", "5s"}, withSTD: true, stdout: topkSteps},
		{name: "env", env: map[string]string{"RANKSTREAM_WINDOW": "10s", "RANKSTREAM_SLIDE": "5s"}, withSTD: true, stdout: topkSteps},
		{name: "env for every kind of flag", env: map[string]string{"RANKSTREAM_WINDOW": "10s", "RANKSTREAM_SLIDE": "5s",
			"RANKSTREAM_FINAL": "true", "RANKSTREAM_EXACT": "1", "RANKSTREAM_K": "5"}, withSTD: true, stdout: topkFinal},
		{name: "a flag wins over the env", env: map[string]string{"RANKSTREAM_WINDOW": "10s", "RANKSTREAM_SLIDE": "5s", "RANKSTREAM_K": "5"},
			args: []string{"--k", "1"}, withSTD: true, stdout: topkStepsK1},
		{name: "env and a file argument", env: map[string]string{"RANKSTREAM_WINDOW": "10s", "RANKSTREAM_SLIDE": "5s"}, args: []string{file}, stdout: topkSteps},
		{name: "- is standard input", args: []string{"--window", "10s", "--slide", "5s", "-"}, withSTD: true, stdout: topkSteps},
		{name: "a bad variable", env: map[string]string{"RANKSTREAM_K": "many"}, code: 2, say: `RANKSTREAM_K="many": parse error`},
		{name: "an invalid window from the env", env: map[string]string{"RANKSTREAM_WINDOW": "7s"}, code: 2, say: "window 7s"},
		{name: "an invalid width from the env", env: map[string]string{"RANKSTREAM_WIDTH": "8"}, code: 2, say: "width 8"},
		{name: "an invalid depth from the env", env: map[string]string{"RANKSTREAM_DEPTH": "0"}, code: 2, say: "depth 0"},
		{name: "too few candidates from the env", env: map[string]string{"RANKSTREAM_CANDIDATES": "50"}, code: 2, say: "candidates 50"},
		{name: "help", args: []string{"--help"}, env: map[string]string{"RANKSTREAM_K": "many"}, help: true},
		{name: "unknown flag", args: []string{"--nope"}, code: 2, say: "flag provided but not defined"},
		{name: "two files", args: []string{"a", "b"}, code: 2, say: "at most one input file"},
		{name: "missing file", args: []string{filepath.Join(t.TempDir(), "missing")}, code: 2, say: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			in := ""
			if tc.withSTD {
				in = topkInput
			}
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), append([]string{"topk"}, tc.args...), strings.NewReader(in), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			switch {
			case tc.help:
				for _, want := range []string{"Usage: rankstream topk [flags] [file]", "Exit status", "-window", "-slide", "-k", "-width", "-depth",
					"-candidates", "-final", "-exact", "RANKSTREAM_WINDOW", "RANKSTREAM_SLIDE", "RANKSTREAM_K ", "RANKSTREAM_WIDTH",
					"RANKSTREAM_DEPTH", "RANKSTREAM_CANDIDATES", "RANKSTREAM_FINAL", "RANKSTREAM_EXACT", "a flag on the command line wins"} {
					if !strings.Contains(stdout.String(), want) {
						t.Errorf("help lacks %q:\n%s", want, stdout.String())
					}
				}
			case stdout.String() != tc.stdout:
				t.Errorf("output:\n%s\nwant:\n%s", stdout.String(), tc.stdout)
			}
			if tc.say == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.say) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tc.say)
			}
		})
	}
}

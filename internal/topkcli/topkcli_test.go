package topkcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run executes the command and returns its output and exit status.
func run(t *testing.T, input string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = Run(context.Background(), args, strings.NewReader(input), &out, &errOut)
	return out.String(), errOut.String(), status
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.tsv")
	if err := os.WriteFile(file, []byte("2026-11-30T10:00:01Z\tgo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		input      string
		wantOut    []string // exact output lines
		wantErr    []string // substrings of stderr
		wantStatus int
	}{
		{
			name:  "windows step by step",
			args:  []string{"--window", "10s", "--slide", "5s"},
			input: "2026-11-30T10:00:01Z\tgo\n2026-11-30T10:00:02Z\trust\n2026-11-30T10:00:06Z\tgo\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T09:59:55Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"go","count":1,"error":0},{"item":"rust","count":1,"error":0}]}`,
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0},{"item":"rust","count":1,"error":0}]}`,
			},
		},
		{
			name:  "final only",
			args:  []string{"--window", "10s", "--slide", "5s", "--final"},
			input: "2026-11-30T10:00:01Z\tgo\n2026-11-30T10:00:02Z\trust\n2026-11-30T10:00:06Z\tgo\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0},{"item":"rust","count":1,"error":0}]}`,
			},
		},
		{
			name:  "normalised items, offsets and epoch milliseconds",
			args:  []string{"--window", "10s", "--slide", "10s", "--exact"},
			input: "2026-11-30T18:00:01+08:00\t  Weather \t TODAY \n1796032802000\tweather today\n2026-11-30T10:00:03Z\tSTRASSE\n2026-11-30T10:00:04Z\tStraße\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"strasse","count":2,"error":0},{"item":"weather today","count":2,"error":0}]}`,
			},
		},
		{
			name:  "k limits the items",
			args:  []string{"--window", "5s", "--slide", "5s", "--k", "1"},
			input: "2026-11-30T10:00:01Z\ta\n2026-11-30T10:00:02Z\tb\n2026-11-30T10:00:03Z\tb\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"b","count":2,"error":0}]}`,
			},
		},
		{
			name:  "a gap skips the empty windows",
			args:  []string{"--window", "5s", "--slide", "5s"},
			input: "2026-11-30T10:00:01Z\ta\n2026-11-30T12:00:01Z\tb\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"a","count":1,"error":0}]}`,
				`{"window_start":"2026-11-30T12:00:00Z","window_end":"2026-11-30T12:00:05Z","items":[{"item":"b","count":1,"error":0}]}`,
			},
		},
		{
			name:  "invalid lines are reported and skipped",
			args:  []string{"--window", "5s", "--slide", "5s"},
			input: "2026-11-30T10:00:01Z\ta\nno tab here\nyesterday\tb\n2026-11-30T10:00:00Z\tc\n2026-11-30T10:00:02Z\t   \n\n2026-11-30T10:00:03Z\ta\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"a","count":2,"error":0}]}`,
			},
			wantErr: []string{
				"line 2: no tab", `line 3: time "yesterday"`, "line 4: time 2026-11-30T10:00:00Z is before",
				"line 5: empty item", "line 6: no tab", "5 invalid lines skipped",
			},
			wantStatus: ExitSkipped,
		},
		{
			name:       "a time without offset is invalid",
			args:       []string{"--exact"},
			input:      "2026-11-30T10:00:01\ta\n",
			wantErr:    []string{"line 1: time"},
			wantStatus: ExitSkipped,
		},
		{
			name:    "file argument",
			args:    []string{"--slide", "1s", "--window", "1s", file},
			wantOut: []string{`{"window_start":"2026-11-30T10:00:01Z","window_end":"2026-11-30T10:00:02Z","items":[{"item":"go","count":1,"error":0}]}`},
		},
		{name: "empty input", input: ""},
		{name: "help", args: []string{"--help"}, wantOut: nil, wantStatus: ExitOK},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: []string{"flag provided but not defined"}, wantStatus: ExitUsage},
		{name: "window not a multiple of the slide", args: []string{"--window", "7s", "--slide", "5s"}, wantErr: []string{"window 7s"}, wantStatus: ExitUsage},
		{name: "k above candidates", args: []string{"--k", "600"}, wantErr: []string{"candidates"}, wantStatus: ExitUsage},
		{name: "two files", args: []string{"a", "b"}, wantErr: []string{"at most one input file"}, wantStatus: ExitUsage},
		{name: "missing file", args: []string{filepath.Join(dir, "missing")}, wantErr: []string{"no such file"}, wantStatus: ExitUsage},
		{name: "line too long", input: "2026-11-30T10:00:01Z\t" + strings.Repeat("x", maxLine) + "\n", wantErr: []string{"line 1: bufio.Scanner: token too long"}, wantStatus: ExitSkipped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := run(t, tt.input, tt.args...)
			if status != tt.wantStatus {
				t.Errorf("status %d, want %d; stderr:\n%s", status, tt.wantStatus, errOut)
			}
			if tt.name == "help" {
				for _, f := range []string{"Usage: rankstream topk", "-window", "-slide", "-k", "-width", "-depth", "-candidates", "-final", "-exact", "Exit status"} {
					if !strings.Contains(out, f) {
						t.Errorf("help lacks %q:\n%s", f, out)
					}
				}
				return
			}
			var lines []string
			if out != "" {
				lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			}
			if strings.Join(lines, "\n") != strings.Join(tt.wantOut, "\n") {
				t.Errorf("output:\n%s\nwant:\n%s", out, strings.Join(tt.wantOut, "\n"))
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if len(tt.wantErr) == 0 && errOut != "" {
				t.Errorf("unexpected stderr:\n%s", errOut)
			}
		})
	}
}

// TestSketchAgreesWithExact runs the sketch and --exact over the same
// random streams: the windows are the same, every item the sketch reports
// has its exact count within its bounds, and when every error is zero the
// lists are identical.
func TestSketchAgreesWithExact(t *testing.T) {
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var b strings.Builder
		ts := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		distinct := []int{20, 300, 5000}[seed%3]
		for range 10_000 {
			ts = ts.Add(time.Duration(rng.IntN(300)) * time.Millisecond)
			i := rng.IntN(1 + rng.IntN(distinct))
			fmt.Fprintf(&b, "%d\tQuery %d\n", ts.UnixMilli(), i)
		}
		flags := []string{"--window", "1m", "--slide", "5s", "--k", "10", "--width", "1024"}
		approxOut, _, s1 := run(t, b.String(), flags...)
		// All items of each window, exactly.
		exactOut, _, s2 := run(t, b.String(), append(flags, "--exact", "--k", "1000000")...)
		if s1 != 0 || s2 != 0 {
			t.Fatalf("seed %d: status %d and %d", seed, s1, s2)
		}
		al, el := decode(t, approxOut), decode(t, exactOut)
		if len(al) != len(el) || len(al) < 50 {
			t.Fatalf("seed %d: %d sketch windows, %d exact", seed, len(al), len(el))
		}
		identical := 0
		for i := range al {
			a, e := al[i], el[i]
			if a.WindowStart != e.WindowStart || a.WindowEnd != e.WindowEnd {
				t.Fatalf("seed %d window %d: sketch %s–%s, exact %s–%s", seed, i, a.WindowStart, a.WindowEnd, e.WindowStart, e.WindowEnd)
			}
			truth := map[string]uint64{}
			for _, it := range e.Items {
				truth[it.Item] = it.Count
			}
			allExact := true
			for _, it := range a.Items {
				if c := truth[it.Item]; c > it.Count || c < it.Count-it.Error {
					t.Fatalf("seed %d window %d: %s exactly %d, sketch [%d − %d, %d]", seed, i, it.Item, c, it.Count, it.Error, it.Count)
				}
				allExact = allExact && it.Error == 0
			}
			if allExact && distinct <= 300 {
				want := e.Items[:min(10, len(e.Items))]
				if fmt.Sprint(a.Items) != fmt.Sprint(want) {
					t.Fatalf("seed %d window %d: sketch %v, exact %v", seed, i, a.Items, want)
				}
				identical++
			}
		}
		t.Logf("seed %d: %d windows, %d identical to exact", seed, len(al), identical)
	}
}

func decode(t *testing.T, out string) []line {
	t.Helper()
	var ls []line
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		var l line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("bad output line %q: %v", s, err)
		}
		ls = append(ls, l)
	}
	return ls
}

func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	input := strings.Repeat("2026-11-30T10:00:01Z\ta\n", 10_000)
	var out, errOut bytes.Buffer
	if status := Run(ctx, nil, strings.NewReader(input), &out, &errOut); status != ExitSkipped {
		t.Fatalf("status %d after cancel, want %d", status, ExitSkipped)
	}
	if !strings.Contains(errOut.String(), "context canceled") {
		t.Fatalf("stderr: %s", errOut.String())
	}
}

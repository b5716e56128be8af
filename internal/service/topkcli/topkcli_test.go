package topkcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// run runs topk on input with cfg and returns its output and exit status.
func run(t *testing.T, input string, cfg Config) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = Run(context.Background(), cfg, strings.NewReader(input), &out, &errOut)
	return out.String(), errOut.String(), status
}

// with returns the default config changed by set.
func with(set func(*Config)) Config {
	c := DefaultConfig()
	set(&c)
	return c
}

// shape returns the default config with a window and slide, and more changes.
func shape(window, slide time.Duration, set ...func(*Config)) Config {
	return with(func(c *Config) {
		c.Window, c.Slide = window, slide
		for _, s := range set {
			s(c)
		}
	})
}

func final(c *Config)   { c.Final = true }
func counted(c *Config) { c.Exact = true }

func TestRun(t *testing.T) {
	s := time.Second
	tests := []struct {
		name       string
		cfg        Config
		input      string
		wantOut    []string // exact output lines
		wantErr    []string // substrings of stderr
		wantStatus int
	}{
		{
			name:  "windows step by step",
			cfg:   shape(10*s, 5*s),
			input: "2026-11-30T10:00:01Z\tgo\n2026-11-30T10:00:02Z\trust\n2026-11-30T10:00:06Z\tgo\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T09:59:55Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"go","count":1,"error":0},{"item":"rust","count":1,"error":0}]}`,
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0},{"item":"rust","count":1,"error":0}]}`,
			},
		},
		{
			name:  "final only",
			cfg:   shape(10*s, 5*s, final),
			input: "2026-11-30T10:00:01Z\tgo\n2026-11-30T10:00:02Z\trust\n2026-11-30T10:00:06Z\tgo\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"go","count":2,"error":0},{"item":"rust","count":1,"error":0}]}`,
			},
		},
		{
			name:  "normalised items, offsets and epoch milliseconds",
			cfg:   shape(10*s, 10*s, counted),
			input: "2026-11-30T18:00:01+08:00\t  Weather \t TODAY \n1796032802000\tweather today\n2026-11-30T10:00:03Z\tSTRASSE\n2026-11-30T10:00:04Z\tStraße\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:10Z","items":[{"item":"strasse","count":2,"error":0},{"item":"weather today","count":2,"error":0}]}`,
			},
		},
		{
			name:  "k limits the items",
			cfg:   shape(5*s, 5*s, func(c *Config) { c.K = 1 }),
			input: "2026-11-30T10:00:01Z\ta\n2026-11-30T10:00:02Z\tb\n2026-11-30T10:00:03Z\tb\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"b","count":2,"error":0}]}`,
			},
		},
		{
			name:  "a gap skips the empty windows",
			cfg:   shape(5*s, 5*s),
			input: "2026-11-30T10:00:01Z\ta\n2026-11-30T12:00:01Z\tb\n",
			wantOut: []string{
				`{"window_start":"2026-11-30T10:00:00Z","window_end":"2026-11-30T10:00:05Z","items":[{"item":"a","count":1,"error":0}]}`,
				`{"window_start":"2026-11-30T12:00:00Z","window_end":"2026-11-30T12:00:05Z","items":[{"item":"b","count":1,"error":0}]}`,
			},
		},
		{
			name:  "invalid lines are reported and skipped",
			cfg:   shape(5*s, 5*s),
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
			cfg:        with(counted),
			input:      "2026-11-30T10:00:01\ta\n",
			wantErr:    []string{"line 1: time"},
			wantStatus: ExitSkipped,
		},
		{name: "empty input", cfg: DefaultConfig(), input: ""},
		{name: "window not a multiple of the slide", cfg: shape(7*s, 5*s), wantErr: []string{"window 7s"}, wantStatus: ExitUsage},
		{name: "exact: window not a multiple of the slide", cfg: shape(7*s, 5*s, counted), wantErr: []string{"window 7s"}, wantStatus: ExitUsage},
		{name: "k above candidates", cfg: with(func(c *Config) { c.K = 600 }), wantErr: []string{"candidates"}, wantStatus: ExitUsage},
		{name: "exact: k of 0", cfg: with(func(c *Config) { c.K, c.Exact = 0, true }), wantErr: []string{"k 0"}, wantStatus: ExitUsage},
		{name: "line too long", cfg: DefaultConfig(), input: "2026-11-30T10:00:01Z\t" + strings.Repeat("x", maxLine) + "\n", wantErr: []string{"line 1: bufio.Scanner: token too long"}, wantStatus: ExitSkipped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := run(t, tt.input, tt.cfg)
			if status != tt.wantStatus {
				t.Errorf("status %d, want %d; stderr:\n%s", status, tt.wantStatus, errOut)
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
		cfg := shape(time.Minute, 5*time.Second, func(c *Config) { c.K, c.Width = 10, 1024 })
		approxOut, _, s1 := run(t, b.String(), cfg)
		// All items of each window, exactly.
		cfg.Exact, cfg.K = true, 1_000_000
		exactOut, _, s2 := run(t, b.String(), cfg)
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
	if status := Run(ctx, DefaultConfig(), strings.NewReader(input), &out, &errOut); status != ExitSkipped {
		t.Fatalf("status %d after cancel, want %d", status, ExitSkipped)
	}
	if !strings.Contains(errOut.String(), "context canceled") {
		t.Fatalf("stderr: %s", errOut.String())
	}
}

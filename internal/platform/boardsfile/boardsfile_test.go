package boardsfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
)

const good = `# demo boards
boards:
  - name: arena            # [a-z0-9_-]{1,64}
    periods: [total, h, d, w, m, season]
    tz: Asia/Shanghai
    seasons:
      - {name: s2, start: 2026-12-01, end: 2027-03-01}
      - {name: s1, start: 2026-09-01, end: 2026-12-01}
    retention: 30d
    shards: 16
    max_incr: 1000
    max_rate: {ops: 60, points: 5000}
  - name: sales_q-4
    periods: [d]
    tz: America/New_York
`

func TestParseGoodFile(t *testing.T) {
	boards, err := Parse("demo.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(boards) != 2 {
		t.Fatalf("%d boards", len(boards))
	}
	a, s := boards[0], boards[1]
	wantPeriods := []board.Period{board.PeriodHour, board.PeriodDay, board.PeriodWeek, board.PeriodMonth, board.PeriodSeason, board.PeriodTotal}
	if a.Name != "arena" || a.Zone.String() != "Asia/Shanghai" || a.Retention != 30*24*time.Hour || a.Shards != 16 || strings.Join(periods(a), ",") != strings.Join(periods(&board.Board{Periods: wantPeriods}), ",") {
		t.Fatalf("arena: %+v", a)
	}
	if len(a.Seasons) != 2 || a.Seasons[0].Name != "s1" || a.Seasons[1].Name != "s2" || a.Seasons[0].Start != 20260901 || a.Seasons[0].End != 20261201 {
		t.Fatalf("seasons not sorted by start: %+v", a.Seasons)
	}
	// Shanghai is UTC+8: season s1 starts at 2026-08-31T16:00Z.
	if got := a.Seasons[0].StartAt.UTC().Format(time.RFC3339); got != "2026-08-31T16:00:00Z" {
		t.Fatalf("s1 starts at %s", got)
	}
	if a.FairPlay != (board.FairPlay{MaxIncr: 1000, MaxRateOps: 60, MaxRatePoints: 5000}) {
		t.Fatalf("arena's fair play: %+v", a.FairPlay)
	}
	// The defaults: retention 7 days, one shard, no fair-play limit.
	if s.Name != "sales_q-4" || s.Retention != board.DefaultRetention || s.Shards != 1 || len(s.Seasons) != 0 || s.FairPlay.Limited() {
		t.Fatalf("sales_q-4: %+v", s)
	}
}

func periods(b *board.Board) []string {
	var out []string
	for _, p := range b.Periods {
		out = append(out, string(p))
	}
	return out
}

// TestParseNamesLineAndField: every rule's error names the line and column of the value at
// fault (or of its enclosing mapping, for a missing one) and the field.
func TestParseNamesLineAndField(t *testing.T) {
	head := "boards:\n  - name: arena\n    periods: [d]\n    tz: UTC\n" // lines 1-4
	tests := []struct {
		name      string
		yaml      string
		line, col int
		field     string
		err       error
		says      string
	}{
		{"bad name", "boards:\n  - name: Arena\n    periods: [d]\n    tz: UTC\n", 2, 11, "boards[0].name", board.ErrInvalid, `"Arena"`},
		{"name too long", "boards:\n  - name: " + strings.Repeat("a", 65) + "\n    periods: [d]\n    tz: UTC\n", 2, 11, "boards[0].name", board.ErrInvalid, "[a-z0-9_-]{1,64}"},
		{"name missing", "boards:\n  - periods: [d]\n    tz: UTC\n", 2, 5, "boards[0].name", board.ErrMissing, "name"},
		{"the steps board's name", "boards:\n  - name: steps\n    periods: [d]\n    tz: UTC\n", 2, 11, "boards[0].name", board.ErrInvalid, "steps"},
		{"two boards, one name", head + "  - name: arena\n    periods: [h]\n    tz: UTC\n", 5, 11, "boards[1].name", board.ErrDuplicate, `"arena"`},
		{"unknown period", "boards:\n  - name: a\n    periods: [d, y]\n    tz: UTC\n", 3, 18, "boards[0].periods[1]", board.ErrInvalid, `"y"`},
		{"period twice", "boards:\n  - name: a\n    periods:\n      - d\n      - d\n    tz: UTC\n", 5, 9, "boards[0].periods[1]", board.ErrDuplicate, "twice"},
		{"no periods", "boards:\n  - name: a\n    periods: []\n    tz: UTC\n", 3, 14, "boards[0].periods", board.ErrMissing, "at least one"},
		{"periods not a list", "boards:\n  - name: a\n    periods: d\n    tz: UTC\n", 3, 14, "boards[0].periods", board.ErrInvalid, "list"},
		{"bad tz", "boards:\n  - name: a\n    periods: [d]\n    tz: Mars/Olympus\n", 4, 9, "boards[0].tz", board.ErrInvalid, "IANA"},
		{"tz Local", "boards:\n  - name: a\n    periods: [d]\n    tz: Local\n", 4, 9, "boards[0].tz", board.ErrInvalid, "IANA"},
		{"tz missing", "boards:\n  - name: a\n    periods: [d]\n", 2, 5, "boards[0].tz", board.ErrMissing, "zone"},
		{"bad retention", head + "    retention: 30\n", 5, 16, "boards[0].retention", board.ErrInvalid, `"30"`},
		{"retention in months", head + "    retention: 1m\n", 5, 16, "boards[0].retention", board.ErrInvalid, "hours, days or weeks"},
		{"zero retention", head + "    retention: 0d\n", 5, 16, "boards[0].retention", board.ErrInvalid, `"0d"`},
		{"retention too long", head + "    retention: 3661d\n", 5, 16, "boards[0].retention", board.ErrInvalid, "3660d"},
		{"shards 0", head + "    shards: 0\n", 5, 13, "boards[0].shards", board.ErrInvalid, "1..1024"},
		{"shards 1025", head + "    shards: 1025\n", 5, 13, "boards[0].shards", board.ErrInvalid, "1..1024"},
		{"shards not a number", head + "    shards: 2.5\n", 5, 13, "boards[0].shards", board.ErrInvalid, `"2.5"`},
		{"shards a list", head + "    shards: [2]\n", 5, 13, "boards[0].shards", board.ErrInvalid, "single value"},
		{"unknown key", head + "    shard: 4\n", 5, 5, "boards[0].shard", board.ErrInvalid, `unknown key "shard"`},
		{"key twice", head + "    tz: UTC\n", 5, 5, "boards[0].tz", board.ErrDuplicate, "twice"},
		{"unknown top-level key", "board:\n  - name: a\n", 1, 1, "board", board.ErrInvalid, "unknown key"},
		{"no boards key", "{}\n", 1, 1, "boards", board.ErrMissing, "boards"},
		{"empty boards", "boards: []\n", 1, 9, "boards", board.ErrMissing, "no board"},
		{"seasons without period season", head + "    seasons: [{name: s1, start: 2026-01-01, end: 2026-02-01}]\n", 5, 14, "boards[0].seasons", board.ErrInvalid, "only with period season"},
		{"period season without seasons", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n", 2, 5, "boards[0].seasons", board.ErrMissing, "at least one season"},
		{"season end before start", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: s1, start: 2026-02-01, end: 2026-02-01}\n", 6, 44, "boards[0].seasons[0].end", board.ErrInvalid, "not after"},
		{"season bad date", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: s1, start: 2026-02-30, end: 2026-03-01}\n", 6, 27, "boards[0].seasons[0].start", board.ErrInvalid, "yyyy-mm-dd"},
		{"season date missing", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: s1, start: 2026-02-01}\n", 6, 9, "boards[0].seasons[0].end", board.ErrMissing, "end"},
		{"season bad name", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: S 1, start: 2026-02-01, end: 2026-03-01}\n", 6, 16, "boards[0].seasons[0].name", board.ErrInvalid, `"S 1"`},
		{"seasons overlap", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: s1, start: 2026-01-01, end: 2026-03-01}\n      - {name: s2, start: 2026-02-28, end: 2026-05-01}\n", 7, 9, "boards[0].seasons[1]", board.ErrInvalid, "overlaps"},
		{"season name twice", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: s1, start: 2026-01-01, end: 2026-03-01}\n      - {name: s1, start: 2026-03-01, end: 2026-05-01}\n", 7, 16, "boards[0].seasons[1].name", board.ErrDuplicate, "twice"},
		{"unknown season key", "boards:\n  - name: a\n    periods: [season]\n    tz: UTC\n    seasons:\n      - {name: s1, begin: 2026-01-01, end: 2026-03-01}\n", 6, 20, "boards[0].seasons[0].begin", board.ErrInvalid, "unknown key"},
		{"alias", "boards:\n  - name: &n a\n    periods: [d]\n    tz: UTC\n", 2, 11, "boards[0].name", board.ErrInvalid, "aliases"},
		{"board not a mapping", "boards:\n  - arena\n", 2, 5, "boards[0]", board.ErrInvalid, "mapping"},
		{"null value", "boards:\n  - name:\n    periods: [d]\n    tz: UTC\n", 2, 10, "boards[0].name", board.ErrInvalid, "single value"},
		{"max_incr 0", head + "    max_incr: 0\n", 5, 15, "boards[0].max_incr", board.ErrInvalid, "1..281474976710656"},
		{"max_incr not a number", head + "    max_incr: 1e3\n", 5, 15, "boards[0].max_incr", board.ErrInvalid, `"1e3"`},
		{"max_incr above twice the score range", head + "    max_incr: 281474976710657\n", 5, 15, "boards[0].max_incr", board.ErrInvalid, "1..281474976710656"},
		{"max_rate empty", head + "    max_rate: {}\n", 5, 15, "boards[0].max_rate", board.ErrMissing, "ops, points or both"},
		{"max_rate a number", head + "    max_rate: 60\n", 5, 15, "boards[0].max_rate", board.ErrInvalid, "mapping of ops, points"},
		{"max_rate unknown key", head + "    max_rate: {ops: 6, per: 1m}\n", 5, 24, "boards[0].max_rate.per", board.ErrInvalid, "unknown key"},
		{"max_rate ops negative", head + "    max_rate:\n      ops: -1\n", 6, 12, "boards[0].max_rate.ops", board.ErrInvalid, "1..1000000"},
		{"max_rate points too many", head + "    max_rate: {points: 281474976710657}\n", 5, 24, "boards[0].max_rate.points", board.ErrInvalid, "1..281474976710656"},
		{"two documents", "boards: []\n---\nboards: []\n", 2, 1, "", board.ErrInvalid, "one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("b.yaml", []byte(tt.yaml))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if e.Line != tt.line || e.Column != tt.col || e.Field != tt.field || !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("got %q (line %d col %d field %q), want line %d col %d field %q, %v, saying %q", err, e.Line, e.Column, e.Field, tt.line, tt.col, tt.field, tt.err, tt.says)
			}
			if want := "boards file b.yaml:"; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q does not start with %q", err, want)
			}
		})
	}
}

func TestParseSyntaxAndEmpty(t *testing.T) {
	if _, err := Parse("b.yaml", []byte("boards:\n  - name: [a\n")); err == nil || !strings.Contains(err.Error(), "line") {
		t.Fatalf("syntax error: %v", err)
	}
	if _, err := Parse("b.yaml", nil); !errors.Is(err, board.ErrMissing) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty file: %v", err)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Load(path); err != nil || len(b) != 2 {
		t.Fatalf("Load: %v %v", b, err)
	}
	if _, err := Load(path + ".missing"); err == nil || !strings.Contains(err.Error(), "boards file") {
		t.Fatalf("missing file: %v", err)
	}
}

package board

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Period is the kind of a board's period: where its boards start and end.
type Period string

// The periods a board may keep.
const (
	PeriodHour   Period = "h"      // a local clock hour
	PeriodDay    Period = "d"      // a local calendar day
	PeriodWeek   Period = "w"      // an ISO week, Monday to Sunday, local
	PeriodMonth  Period = "m"      // a local calendar month
	PeriodSeason Period = "season" // a season declared with the board, in local dates
	PeriodTotal  Period = "total"  // for ever
)

// Periods lists every period, in the canonical order a board keeps them.
var Periods = []Period{PeriodHour, PeriodDay, PeriodWeek, PeriodMonth, PeriodSeason, PeriodTotal}

// Limits of a board definition.
const (
	MaxShards    = 1024
	MaxRetention = 3660 * 24 * time.Hour
	// DefaultRetention is the retention of a board that names none (as for daily steps).
	DefaultRetention = 7 * 24 * time.Hour
	// StepsBoard is the name the daily steps board answers to; no declared board may take it.
	StepsBoard = "steps"
)

// Spec is a board as its declaration spells it: every field is the raw text, "" when
// absent. NewBoard checks it.
type Spec struct {
	Name      string
	Periods   []string
	TZ        string
	Seasons   []SeasonSpec
	Retention string // "<n>h", "<n>d" or "<n>w"; "": DefaultRetention
	Shards    string // 1..MaxShards; "": 1
	// MaxIncr, MaxRateOps and MaxRatePoints are the fair-play limits (max_incr, max_rate.ops,
	// max_rate.points): whole numbers, "" for none.
	MaxIncr, MaxRateOps, MaxRatePoints string
	// HasMaxRate tells that max_rate was given (it must then name ops, points or both).
	HasMaxRate bool
}

// SeasonSpec is a season as declared: local dates yyyy-mm-dd, End exclusive.
type SeasonSpec struct {
	Name, Start, End string
}

// Board is a checked board definition.
type Board struct {
	Name    string
	Periods []Period // distinct, in the order of Periods
	Zone    *time.Location
	// Seasons are sorted by start and do not overlap; only with PeriodSeason.
	Seasons   []Season
	Retention time.Duration
	Shards    int
	FairPlay  FairPlay
}

// FairPlay are a board's anti-cheat limits; a zero field is no limit. An op breaking one is
// quarantined instead of applied, and the member's entries on the board are frozen until an
// operator releases or bans them (processors/scores).
type FairPlay struct {
	// MaxIncr: an op that lifts the member by more than this at once (an incr by more, or a
	// set more above the member's best current score on the periods it names) is quarantined.
	MaxIncr int64
	// MaxRateOps and MaxRatePoints: more than this many ops, or more points of rise, by one
	// member in one minute of event time (UTC minutes of the ops' ts) are quarantined.
	MaxRateOps, MaxRatePoints int64
}

// Limits of the fair-play settings.
const (
	// MaxRateOpsLimit bounds max_rate.ops.
	MaxRateOpsLimit = 1_000_000
)

// Limited tells whether any limit is set.
func (f FairPlay) Limited() bool { return f.MaxIncr > 0 || f.MaxRateOps > 0 || f.MaxRatePoints > 0 }

// RateLimited tells whether a per-minute limit is set.
func (f FairPlay) RateLimited() bool { return f.MaxRateOps > 0 || f.MaxRatePoints > 0 }

// Season is a named span of local dates [Start, End) of a board.
type Season struct {
	Name       string
	Start, End Day
	// StartAt and EndAt are the instants the season covers, [StartAt, EndAt): the first
	// instant whose local date is Start or later, and that of End.
	StartAt, EndAt time.Time
}

// FieldError is a definition rejected for one field. Field names it as the declaration
// does: "tz", "seasons[1].start", "boards[2].name".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Errors a definition is rejected with (wrapped in a FieldError).
var (
	ErrInvalid   = errors.New("invalid")
	ErrMissing   = errors.New("missing")
	ErrDuplicate = errors.New("duplicate")
)

var nameRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// ValidName tells whether s may name a board or a season: [a-z0-9_-]{1,64}.
func ValidName(s string) bool { return nameRE.MatchString(s) }

func fieldErr(field string, err error, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: fmt.Errorf("%w: "+format, append([]any{err}, args...)...)}
}

// NewBoard checks a board's declaration. Its error is a *FieldError naming the first field
// at fault.
func NewBoard(s Spec) (*Board, error) {
	b := &Board{Name: s.Name, Retention: DefaultRetention, Shards: 1}
	switch {
	case s.Name == "":
		return nil, fieldErr("name", ErrMissing, "a board needs a name")
	case !ValidName(s.Name):
		return nil, fieldErr("name", ErrInvalid, "%q is not [a-z0-9_-]{1,64}", s.Name)
	case s.Name == StepsBoard:
		return nil, fieldErr("name", ErrInvalid, "%q is the daily steps board's name", s.Name)
	}
	if len(s.Periods) == 0 {
		return nil, fieldErr("periods", ErrMissing, "a board needs at least one of h, d, w, m, season, total")
	}
	for i, p := range s.Periods {
		field := fmt.Sprintf("periods[%d]", i)
		if !slices.Contains(Periods, Period(p)) {
			return nil, fieldErr(field, ErrInvalid, "%q is none of h, d, w, m, season, total", p)
		}
		if slices.Contains(b.Periods, Period(p)) {
			return nil, fieldErr(field, ErrDuplicate, "period %q twice", p)
		}
		b.Periods = append(b.Periods, Period(p))
	}
	slices.SortFunc(b.Periods, func(x, y Period) int { return slices.Index(Periods, x) - slices.Index(Periods, y) })
	if s.TZ == "" {
		return nil, fieldErr("tz", ErrMissing, "a board needs an IANA time zone, e.g. Europe/Berlin or UTC")
	}
	loc, err := time.LoadLocation(s.TZ)
	if err != nil || s.TZ == "Local" {
		return nil, fieldErr("tz", ErrInvalid, "%q is not an IANA time zone", s.TZ)
	}
	b.Zone = loc
	if s.Retention != "" {
		if b.Retention, err = ParseRetention(s.Retention); err != nil {
			return nil, &FieldError{Field: "retention", Err: err}
		}
	}
	if s.Shards != "" {
		n, err := strconv.Atoi(s.Shards)
		if err != nil || n < 1 || n > MaxShards {
			return nil, fieldErr("shards", ErrInvalid, "%q is not a whole number in 1..%d", s.Shards, MaxShards)
		}
		b.Shards = n
	}
	if err := b.setSeasons(s.Seasons); err != nil {
		return nil, err
	}
	if err := b.setFairPlay(s); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Board) setFairPlay(s Spec) error {
	for _, f := range []struct {
		field, text string
		limit       int64
		dst         *int64
	}{
		{"max_incr", s.MaxIncr, 2 * MaxScore, &b.FairPlay.MaxIncr},
		{"max_rate.ops", s.MaxRateOps, MaxRateOpsLimit, &b.FairPlay.MaxRateOps},
		{"max_rate.points", s.MaxRatePoints, 2 * MaxScore, &b.FairPlay.MaxRatePoints},
	} {
		if f.text == "" {
			continue
		}
		n, err := strconv.ParseInt(f.text, 10, 64)
		if err != nil || n < 1 || n > f.limit || f.text[0] == '+' {
			return fieldErr(f.field, ErrInvalid, "%q is not a whole number in 1..%d", f.text, f.limit)
		}
		*f.dst = n
	}
	if s.HasMaxRate && !b.FairPlay.RateLimited() {
		return fieldErr("max_rate", ErrMissing, "want ops, points or both (per member and minute of event time)")
	}
	return nil
}

func (b *Board) setSeasons(specs []SeasonSpec) error {
	hasSeason := slices.Contains(b.Periods, PeriodSeason)
	switch {
	case hasSeason && len(specs) == 0:
		return fieldErr("seasons", ErrMissing, "period season needs at least one season")
	case !hasSeason && len(specs) > 0:
		return fieldErr("seasons", ErrInvalid, "seasons are declared only with period season")
	}
	for i, s := range specs {
		field := fmt.Sprintf("seasons[%d]", i)
		switch {
		case s.Name == "":
			return fieldErr(field+".name", ErrMissing, "a season needs a name")
		case !ValidName(s.Name):
			return fieldErr(field+".name", ErrInvalid, "%q is not [a-z0-9_-]{1,64}", s.Name)
		case slices.ContainsFunc(b.Seasons, func(o Season) bool { return o.Name == s.Name }):
			return fieldErr(field+".name", ErrDuplicate, "season %q twice", s.Name)
		}
		start, err := parseDate(field+".start", s.Start)
		if err != nil {
			return err
		}
		end, err := parseDate(field+".end", s.End)
		if err != nil {
			return err
		}
		if end <= start {
			return fieldErr(field+".end", ErrInvalid, "%s is not after the start %s", s.End, s.Start)
		}
		for _, o := range b.Seasons {
			if start < o.End && o.Start < end {
				return fieldErr(field, ErrInvalid, "season %q overlaps season %q", s.Name, o.Name)
			}
		}
		b.Seasons = append(b.Seasons, Season{Name: s.Name, Start: start, End: end,
			StartAt: FirstLocalInstant(start, b.Zone), EndAt: FirstLocalInstant(end, b.Zone)})
	}
	slices.SortFunc(b.Seasons, func(x, y Season) int { return int(x.Start - y.Start) })
	return nil
}

func parseDate(field, s string) (Day, error) {
	if s == "" {
		return 0, fieldErr(field, ErrMissing, "a season needs a start and an end date (yyyy-mm-dd)")
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, fieldErr(field, ErrInvalid, "%q is not a date yyyy-mm-dd", s)
	}
	return DayOf(t, time.UTC), nil
}

// ParseRetention parses a retention: a positive whole number of hours ("12h"), days ("30d")
// or weeks ("2w"), at most MaxRetention.
func ParseRetention(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if len(s) >= 2 {
		if u, ok := unit[s[len(s)-1]]; ok {
			n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
			if err == nil && n > 0 && s[0] != '+' && n <= int64(MaxRetention/u) {
				return time.Duration(n) * u, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: retention %q is not a positive whole number of hours, days or weeks (12h, 30d, 2w) up to %dd", ErrInvalid, s, MaxRetention/(24*time.Hour))
}

// NewBoards checks a list of declarations and that their names differ. A FieldError's Field
// is prefixed with "boards[i].".
func NewBoards(specs []Spec) ([]*Board, error) {
	if len(specs) == 0 {
		return nil, fieldErr("boards", ErrMissing, "no board declared")
	}
	out := make([]*Board, 0, len(specs))
	for i, s := range specs {
		b, err := NewBoard(s)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				return nil, &FieldError{Field: fmt.Sprintf("boards[%d].%s", i, fe.Field), Err: fe.Err}
			}
			return nil, err
		}
		if slices.ContainsFunc(out, func(o *Board) bool { return o.Name == b.Name }) {
			return nil, fieldErr(fmt.Sprintf("boards[%d].name", i), ErrDuplicate, "board %q twice", b.Name)
		}
		out = append(out, b)
	}
	return out, nil
}

// Has tells whether the board keeps period p.
func (b *Board) Has(p Period) bool { return slices.Contains(b.Periods, p) }

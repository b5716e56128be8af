package board

import (
	"errors"
	"slices"
	"strings"
)

// MaxPeriodID bounds the id of a named period (a season name has at most 64 bytes).
const MaxPeriodID = 64

// Errors of ParsePeriod.
var (
	ErrPeriodKind = errors.New("board: not a period kind")
	ErrPeriodID   = errors.New("board: not a period id")
)

// ParsePeriod reads a period as the read API's period= and `rankstream reconcile --period`
// name it: kind[:id], a kind of Periods (h, d, w, m, season, total), optionally followed by
// ':' and an id of 1 to MaxPeriodID characters of [A-Za-z0-9_-] (d:20261130, h:2026113008,
// w:2026W49, m:202611, season:s1); id is "" without one (the current period, for the caller to
// resolve). It returns the kind as written, also with an error: ErrPeriodKind for a kind that
// is none of Periods, ErrPeriodID for a ':' not followed by such an id. Whether a board keeps
// the kind and has a window of that id is the board's (Has, WindowByID).
func ParsePeriod(s string) (kind Period, id string, err error) {
	name, id, hasID := strings.Cut(s, ":")
	kind = Period(name)
	if !slices.Contains(Periods, kind) {
		return kind, id, ErrPeriodKind
	}
	if hasID && (id == "" || len(id) > MaxPeriodID || strings.ContainsFunc(id, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-')
	})) {
		return kind, id, ErrPeriodID
	}
	return kind, id, nil
}

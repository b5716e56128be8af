package board

import "strings"

// Standing is a member's value on a board, as a ranking compares it.
type Standing struct {
	Member    string
	Score     int64
	ReachedMs int64
	// Present is false for a member without a value (e.g. no steps that day): it ranks after
	// every member with one, with score 0.
	Present bool
}

// Compare orders two standings as every board ranks them: a value before none, a higher
// score first, then the earlier reach time, then the smaller member id (the order of equal
// entries on a score board's sorted set); members without a value by id. It returns a
// negative number when a ranks before b, 0 when they are the same member, positive otherwise.
func Compare(a, b Standing) int {
	switch {
	case a.Present != b.Present:
		if a.Present {
			return -1
		}
		return 1
	case a.Present && a.Score != b.Score:
		if a.Score > b.Score {
			return -1
		}
		return 1
	case a.Present && a.ReachedMs != b.ReachedMs:
		if a.ReachedMs < b.ReachedMs {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Member, b.Member)
}

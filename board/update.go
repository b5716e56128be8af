package board

import "time"

// StepUpdate is a user's merged state for one local day, as the steps processor hands it to
// the serving store. Every field is absolute, so writing it again is harmless.
type StepUpdate struct {
	User      string
	Day       Day
	Steps     int64
	ReachedMs int64
	Region    string
	// Left are the regions the user was ranked in on this day besides Region: the user is
	// removed from their boards (again) with every update, which a redelivery needs after a
	// crash that came between the state's write and the boards' write.
	Left []string
}

// MaxScore bounds the scores of declared boards: every score is in [-MaxScore, MaxScore]
// (2^47), where the boards' Redis encoding is exact; an op that would leave it is refused.
const MaxScore int64 = 1 << 47

// ScoreUpdate is a member's entry on one period of a board after an op, as the scores
// processor hands it to the serving store. Every field is absolute, so writing it again is
// harmless.
type ScoreUpdate struct {
	Board  string
	Member string
	Period Period
	// PeriodID is the window's id (Window.ID): "20261130", "2026W48", "total", ...
	PeriodID string
	// ExpireAt is when the period's boards expire (the window's end plus the board's
	// retention); zero for total, which never expires.
	ExpireAt time.Time
	// Present is false when the member was deleted from the period: it must be removed from
	// the period's global board and every scope's.
	Present   bool
	Score     int64
	ReachedMs int64
	// Scope is the scope board the member is on besides the global one ("" for none).
	Scope string
	// Left are the scopes the member was on in this period besides Scope: it is removed from
	// their boards (again) with every update, which a redelivery needs.
	Left []string
}

// FriendUpdate is whether Friend is in User's friend set after an op, as the friends
// processor hands it to the serving store. It is absolute, so writing it again is harmless.
type FriendUpdate struct {
	User, Friend string
	Friends      bool
}

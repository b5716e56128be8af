package friends

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxFriends bounds a user's friend set. An add that would make either user of the pair
// have more is refused (ErrTooManyFriends).
const MaxFriends = 5_000

// MaxRemoved bounds the removed pairs a user's state remembers. Past it the removal with the
// oldest ts is forgotten, and the state remembers that ts as its floor: an add on a pair it
// does not remember whose ts is at or before the floor is refused (ErrForgotten), since a
// later removal of that pair may be among the forgotten ones. So a stale add is never
// applied, whatever the bound; an add after every forgotten removal is applied as usual.
const MaxRemoved = 1_000

// Errors of Apply when it refuses an add: the pair becomes removed at the add's ts (on both
// sides: the refusing side tells the other), and the record goes to the dead-letter topic
// with the error as its reason.
var (
	ErrTooManyFriends = fmt.Errorf("friends: the user already has %d friends", MaxFriends)
	ErrForgotten      = errors.New("friends: the pair is not remembered and the add is not later than the newest forgotten removal; it may be stale")
)

// Refusal says why a pair's removal was an add refused (Pair.Refused).
type Refusal uint8

// Refusals.
const (
	NotRefused Refusal = iota
	RefusedTooMany
	RefusedForgotten
)

func (r Refusal) err() error {
	switch r {
	case RefusedTooMany:
		return ErrTooManyFriends
	case RefusedForgotten:
		return ErrForgotten
	}
	return nil
}

// Op is a friendship op as one side of the pair sees it: Friend is the other user.
type Op struct {
	Friend string
	Add    bool // false: remove
	TSMs   int64
}

// Wins tells whether op a decides the pair over b: the later ts wins, and on equal ts a
// removal wins over an add (the tie rule: the same whatever the order of arrival, on both
// sides, on every replay and redelivery). Equal ops (same ts, same kind) are the same op.
func Wins(a, b Op) bool { return a.TSMs > b.TSMs || a.TSMs == b.TSMs && !a.Add && b.Add }

// Pair is what a user's state keeps of one pair: the op that decides it (the last-writer-wins
// register), and whether that op is a refused add.
type Pair struct {
	Op
	Refused Refusal // the op is a removal because this side refused an add at its ts
}

// State is one user's side of their friendships (the group table's value): every pair the
// user is in or was removed from, sorted by friend id.
type State struct {
	Pairs []Pair
	// FloorMs is one more than the latest ts of a forgotten removal (0: none forgotten).
	FloorMs int64
	friends int // the adds among Pairs
}

// Friends returns the user's friends, sorted.
func (s *State) Friends() []string {
	out := make([]string, 0, s.friends)
	for _, p := range s.Pairs {
		if p.Add {
			out = append(out, p.Friend)
		}
	}
	return out
}

// Len is the number of the user's friends.
func (s *State) Len() int { return s.friends }

// Result is what Apply did.
type Result struct {
	// Pair is the pair's op after Apply: what the user's side holds, the store must show and
	// the other side must hold too.
	Pair Op
	// Changed says the state changed and must be written back.
	Changed bool
	// Refused is non-nil when the op was an add refused (now or, for its redelivery, before):
	// the pair is removed at the op's ts. The record goes to the dead-letter topic with it.
	Refused error
}

// Apply merges op into the state: the op decides the pair when it wins over the op held
// (Wins); an add that would make a new friend is refused, and turned into a removal at its
// ts, when the user has MaxFriends friends or the op is at or before the floor on a pair not
// remembered. Apply is idempotent, and commutative up to the refusals: without them, the
// result depends only on the set of ops applied.
func (s *State) Apply(op Op) Result {
	i, found := slices.BinarySearchFunc(s.Pairs, op.Friend, func(p Pair, f string) int { return strings.Compare(p.Friend, f) })
	if found {
		cur := s.Pairs[i]
		if !Wins(op, cur.Op) {
			res := Result{Pair: cur.Op}
			if op.Add && op.TSMs == cur.TSMs && !cur.Add && cur.Refused != NotRefused {
				res.Refused = cur.Refused.err() // the redelivery of a refused add
			}
			return res
		}
	}
	next := Pair{Op: op}
	if op.Add && !(found && s.Pairs[i].Add) {
		switch {
		case !found && op.TSMs < s.FloorMs:
			next.Add, next.Refused = false, RefusedForgotten
		case s.friends >= MaxFriends:
			next.Add, next.Refused = false, RefusedTooMany
		}
	}
	if found {
		if s.Pairs[i].Add {
			s.friends--
		}
		s.Pairs[i] = next
	} else {
		s.Pairs = slices.Insert(s.Pairs, i, next)
	}
	if next.Add {
		s.friends++
	}
	s.forget()
	return Result{Pair: next.Op, Changed: true, Refused: next.Refused.err()}
}

// forget drops the removals beyond MaxRemoved, oldest ts first (then smallest friend id),
// raising the floor over them.
func (s *State) forget() {
	over := len(s.Pairs) - s.friends - MaxRemoved
	if over <= 0 {
		return
	}
	removed := make([]Pair, 0, len(s.Pairs)-s.friends)
	for _, p := range s.Pairs {
		if !p.Add {
			removed = append(removed, p)
		}
	}
	slices.SortFunc(removed, func(a, b Pair) int {
		if a.TSMs != b.TSMs {
			return int(min(max(a.TSMs-b.TSMs, -1), 1))
		}
		return strings.Compare(a.Friend, b.Friend)
	})
	drop := make(map[string]bool, over)
	for _, p := range removed[:over] {
		drop[p.Friend] = true
		s.FloorMs = max(s.FloorMs, p.TSMs+1)
	}
	s.Pairs = slices.DeleteFunc(s.Pairs, func(p Pair) bool { return drop[p.Friend] })
}

package redis

import (
	"strconv"
	"strings"

	"github.com/rankstream/rankstream/board"
)

// Redis key names of the contract (see docs/contract.md): every key this package writes or
// reads is built here, and every key it finds by SCAN is read back here. Ids are validated by
// package topics to contain no ':' or spaces, so they are embedded unescaped.

// Prefixes the builders and the parsers share.
const (
	stepsRegionPrefix = "rank:steps:region:" // + region + ":" + day
	scoreBoardPrefix  = "rank:{"             // + the board's hash tag + "}"
	// boardsMatch is the SCAN pattern of every board key (steps and score boards, with the
	// hashes and marks beside them).
	boardsMatch = "rank:*"
)

// StepKey is the String holding a user's merged steps for a local day.
func StepKey(d board.Day, user string) string { return stepKeyPrefix(d) + user }

func stepKeyPrefix(d board.Day) string { return "step:" + d.String() + ":" }

// StepsGlobalBoard is the daily steps board of every user.
func StepsGlobalBoard(d board.Day) string { return "rank:steps:global:" + d.String() }

// StepsRegionBoard is the daily steps board of one region.
func StepsRegionBoard(region string, d board.Day) string {
	return stepsRegionPrefix + region + ":" + d.String()
}

// StepsBoard is the Redis key of a day's steps board: the global one, or a region's.
func StepsBoard(day board.Day, region string) string {
	if region == "" {
		return StepsGlobalBoard(day)
	}
	return StepsRegionBoard(region, day)
}

// stepKeysMatch is the SCAN pattern of day d's step keys, and stepsRegionBoardsMatch that of
// its region boards.
func stepKeysMatch(d board.Day) string { return stepKeyPrefix(d) + "*" }

func stepsRegionBoardsMatch(d board.Day) string {
	return stepsRegionPrefix + "*" + ":" + d.String()
}

// userOfStepKey returns the user of k, a step key of day d; ok is false for another key.
func userOfStepKey(k string, d board.Day) (user string, ok bool) {
	return strings.CutPrefix(k, stepKeyPrefix(d))
}

// isStepKeyOf tells whether k is a step key of day d.
func isStepKeyOf(k string, d board.Day) bool { _, ok := userOfStepKey(k, d); return ok }

// regionOfStepsBoard returns the region of k, a region board of day d
// (stepsRegionBoardsMatch).
func regionOfStepsBoard(k string, d board.Day) string {
	return strings.TrimSuffix(strings.TrimPrefix(k, stepsRegionPrefix), ":"+d.String())
}

// HotKey is the String holding the JSON of a Top-K stream's latest snapshot, e.g.
// hot:search:latest. Stream names hold no ':', braces or spaces (topics checks them).
func HotKey(stream string) string { return "hot:" + stream + ":latest" }

// HotZSetKey is the ZSET mirror of HotKey (item → count), for clients that prefer ZREVRANGE.
// Its hash tag is HotKey, so in a Redis Cluster both keys live in one slot and a script can
// replace them together.
func HotZSetKey(stream string) string { return "{" + HotKey(stream) + "}:z" }

// ScoreBoardKey returns the sorted set of shard i of the board: rank:{<board>:<period>[:<id>]
// [:s:<scope>]:<i>}, e.g. rank:{arena:d:20261130:0} or rank:{arena:total:s:eu:3}. Names, ids
// and scopes hold no ':', braces or spaces (checked by board and topics).
func ScoreBoardKey(ref BoardRef, shard int) string {
	var b strings.Builder
	b.WriteString(scoreBoardPrefix)
	writeBoardOf(&b, ref)
	b.WriteString(":" + strconv.Itoa(shard) + "}")
	return b.String()
}

// writeBoardOf writes the board, period and scope of ref as its keys hold them:
// <board>:<period>[:<id>][:s:<scope>].
func writeBoardOf(b *strings.Builder, ref BoardRef) {
	b.WriteString(ref.Board)
	b.WriteString(":")
	b.WriteString(string(ref.Period))
	if ref.Period != board.PeriodTotal {
		b.WriteString(":" + ref.PeriodID)
	}
	if ref.Scope != "" {
		b.WriteString(":s:" + ref.Scope)
	}
}

// ScoreBoardMembersKey returns the hash member -> entry prefix beside ScoreBoardKey (the same
// hash tag).
func ScoreBoardMembersKey(ref BoardRef, shard int) string { return ScoreBoardKey(ref, shard) + ":m" }

// ScoreBoardPattern names every shard of a board at once, e.g. rank:{arena:d:20261130:*}: how
// a report shows the board (a SCAN pattern of its shards too).
func ScoreBoardPattern(ref BoardRef) string {
	var b strings.Builder
	b.WriteString(scoreBoardPrefix)
	writeBoardOf(&b, ref)
	b.WriteString(":*}")
	return b.String()
}

// FriendsKey is the set of a user's friends.
func FriendsKey(user string) string { return "friends:" + user }

// ArchivedKey is the mark of the board whose (first shard's) key is boardKey: boardKey +
// ":archived", in the same slot.
func ArchivedKey(boardKey string) string { return boardKey + ":archived" }

// ScopesKey is the key of BoardScopes' answer for a score board's period (ref.Scope ignored):
// <board>:<period>[:<id>].
func ScopesKey(ref BoardRef) string {
	var b strings.Builder
	writeBoardOf(&b, BoardRef{Board: ref.Board, Period: ref.Period, PeriodID: ref.PeriodID})
	return b.String()
}

// StepsScopesKey is the key of BoardScopes' answer for day d's steps boards, whose scopes
// are the regions: steps:<yyyymmdd>.
func StepsScopesKey(d board.Day) string { return stepsScopesKey(d.String()) }

func stepsScopesKey(day string) string { return board.StepsBoard + ":" + day }

// scopeBoardOf reads k, a key found by SCAN of boardsMatch: for a region's steps board, the
// StepsScopesKey of its day and the region; for a scope board's shard, the ScopesKey of its
// period and the scope; ok false for any other key (global boards, :m hashes, marks).
func scopeBoardOf(k string) (scopesKey, scope string, ok bool) {
	if rest, isRegion := strings.CutPrefix(k, stepsRegionPrefix); isRegion {
		region, day, ok := strings.Cut(rest, ":")
		if !ok || strings.Contains(day, ":") {
			return "", "", false
		}
		return stepsScopesKey(day), region, true
	}
	inner, ok := strings.CutPrefix(k, scoreBoardPrefix)
	if !ok || !strings.HasSuffix(inner, "}") {
		return "", "", false
	}
	inner = strings.TrimSuffix(inner, "}")
	head, tail, ok := strings.Cut(inner, ":s:")
	if !ok {
		return "", "", false
	}
	scope, shard, ok := strings.Cut(tail, ":")
	if !ok || strings.Contains(shard, ":") {
		return "", "", false
	}
	return head, scope, true
}

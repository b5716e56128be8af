package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"

	goredis "github.com/redis/go-redis/v9"
)

// Bounds of score board reads: a page is the merge of every shard's first offset+limit
// entries, so deep pages are refused (a member beyond them reads its own standing instead).
const (
	MaxBoardOffset    = 1000
	MaxBoardLimit     = 100
	MaxBoardNeighbors = 50
)

// ErrBoardBounds rejects a read beyond MaxBoardOffset, MaxBoardLimit or MaxBoardNeighbors.
var ErrBoardBounds = errors.New("redis: score board read out of bounds")

// BoardPage returns the size of a score board and its members from rank offset+1 on, at most
// limit of them, in one round trip: each shard's first offset+limit entries, merged.
func (r *Reader) BoardPage(ctx context.Context, ref BoardRef, offset, limit int) (total int64, rows []Ranked, err error) {
	if offset < 0 || offset > MaxBoardOffset || limit < 0 || limit > MaxBoardLimit || ref.Shards < 1 {
		return 0, nil, fmt.Errorf("%w: offset %d (at most %d), limit %d (at most %d), %d shards", ErrBoardBounds, offset, MaxBoardOffset, limit, MaxBoardLimit, ref.Shards)
	}
	pipe := r.pipeline()
	cards := make([]*goredis.IntCmd, ref.Shards)
	heads := make([]*goredis.StringSliceCmd, ref.Shards)
	for i := range ref.Shards {
		key := ScoreBoardKey(ref, i)
		cards[i] = pipe.ZCard(ctx, key)
		if limit > 0 {
			heads[i] = pipe.ZRange(ctx, key, 0, int64(offset+limit-1))
		}
	}
	if err := r.exec(ctx, pipe); err != nil {
		return 0, nil, fmt.Errorf("redis: score board %s: %w", ScoreBoardKey(ref, 0), err)
	}
	lists := make([][]string, 0, ref.Shards)
	for i := range ref.Shards {
		total += cards[i].Val()
		if heads[i] != nil {
			lists = append(lists, heads[i].Val())
		}
	}
	merged := mergeEntries(lists, offset+limit, false)
	if len(merged) <= offset {
		return total, nil, nil
	}
	rows, err = rankedEntries(merged[offset:], int64(offset)+1)
	return total, rows, err
}

// BoardStanding returns the size of a score board and the member's row with up to n rows
// above and below it (ascending rank). The member's shard is read atomically in one round
// trip (standingScript: its entry, rank in the shard, size and neighbours); on a board of one
// shard that is the answer. On a sharded board, a second round trip reads every other shard's
// size, entries before the member's entry (ZLEXCOUNT) and n entries on each side of it, and
// the rank is exact: one plus the entries before its entry in every shard. It fails with
// ErrNotRanked when the member is not on the board.
func (r *Reader) BoardStanding(ctx context.Context, ref BoardRef, member string, n int) (total int64, rows []Ranked, err error) {
	if n < 0 || n > MaxBoardNeighbors || ref.Shards < 1 {
		return 0, nil, fmt.Errorf("%w: %d neighbours (at most %d), %d shards", ErrBoardBounds, n, MaxBoardNeighbors, ref.Shards)
	}
	own := ShardOf(member, ref.Shards)
	ownKey := ScoreBoardKey(ref, own)
	st, err := r.standing(ctx, []string{ownKey, ScoreBoardMembersKey(ref, own)}, member, n)
	if errors.Is(err, goredis.Nil) {
		return 0, nil, fmt.Errorf("redis: member of %s: %w", ownKey, ErrNotRanked)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("redis: score board member %s: %w", ownKey, err)
	}
	entries := make([]string, len(st.entries))
	for i, e := range st.entries {
		entries[i], _ = e.(string)
	}
	at := int(st.pos - st.first) // the member's entry
	if at >= len(entries) {
		return 0, nil, fmt.Errorf("redis: score board member %s: the standing script replied %d entries from %d, the member at %d", ownKey, len(entries), st.first, st.pos)
	}
	if ref.Shards == 1 {
		rows, err = rankedEntries(entries, st.first+1)
		return st.card, rows, err
	}
	entry := entries[at]
	excl := "(" + entry // the entry as an exclusive bound of ZLEXCOUNT and the ranges by lex
	pipe := r.pipeline()
	cards := make([]*goredis.IntCmd, 0, ref.Shards-1)
	before := make([]*goredis.IntCmd, 0, ref.Shards-1)
	above := make([]*goredis.StringSliceCmd, 0, ref.Shards-1)
	below := make([]*goredis.StringSliceCmd, 0, ref.Shards-1)
	for i := range ref.Shards {
		if i == own {
			continue
		}
		key := ScoreBoardKey(ref, i)
		cards = append(cards, pipe.ZCard(ctx, key))
		before = append(before, pipe.ZLexCount(ctx, key, "-", excl))
		if n > 0 {
			above = append(above, pipe.ZRevRangeByLex(ctx, key, &goredis.ZRangeBy{Max: excl, Min: "-", Count: int64(n)}))
			below = append(below, pipe.ZRangeByLex(ctx, key, &goredis.ZRangeBy{Min: excl, Max: "+", Count: int64(n)}))
		}
	}
	if err := r.exec(ctx, pipe); err != nil {
		return 0, nil, fmt.Errorf("redis: score board member %s: %w", ownKey, err)
	}
	// The own shard's entries as of the first round trip, the others' as of the second: each
	// shard holds other members, so the rows are distinct and ranked as of those reads.
	slices.Reverse(entries[:at]) // descending, as the other shards' entries above
	ups, downs := [][]string{entries[:at]}, [][]string{entries[at+1:]}
	total, rank := st.card, 1+st.pos
	for i := range cards {
		total += cards[i].Val()
		rank += before[i].Val()
		if n > 0 {
			ups, downs = append(ups, above[i].Val()), append(downs, below[i].Val())
		}
	}
	up := mergeEntries(ups, n, true)
	slices.Reverse(up)
	list := append(append(up, entry), mergeEntries(downs, n, false)...)
	rows, err = rankedEntries(list, rank-int64(len(up)))
	return total, rows, err
}

// mergeEntries merges lists each sorted ascending (descending when desc) into the first k of
// their union, in the same order. Entries differ across shards (a member lives in one).
func mergeEntries(lists [][]string, k int, desc bool) []string {
	out := make([]string, 0, k)
	next := make([]int, len(lists))
	for len(out) < k {
		best := -1
		for i, l := range lists {
			if next[i] >= len(l) {
				continue
			}
			if best < 0 || (l[next[i]] < lists[best][next[best]]) != desc {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out = append(out, lists[best][next[best]])
		next[best]++
	}
	return out
}

// rankedEntries decodes entries ranked from rank on.
func rankedEntries(entries []string, rank int64) ([]Ranked, error) {
	rows := make([]Ranked, 0, len(entries))
	for i, e := range entries {
		m, score, reached, err := DecodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("redis: score board: %w", err)
		}
		rows = append(rows, Ranked{Rank: rank + int64(i), Member: m, Score: score, ReachedMs: reached})
	}
	return rows, nil
}

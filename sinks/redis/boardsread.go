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
// above and below it (ascending rank). The member's rank is exact on a sharded board: one
// plus the entries before its entry in every shard. It fails with ErrNotRanked when the
// member is not on the board, and with ErrBoardChanged when its entry changed between the
// two round trips.
func (r *Reader) BoardStanding(ctx context.Context, ref BoardRef, member string, n int) (total int64, rows []Ranked, err error) {
	if n < 0 || n > MaxBoardNeighbors || ref.Shards < 1 {
		return 0, nil, fmt.Errorf("%w: %d neighbours (at most %d), %d shards", ErrBoardBounds, n, MaxBoardNeighbors, ref.Shards)
	}
	own := ShardOf(member, ref.Shards)
	pipe := r.pipeline()
	prefixCmd := pipe.HGet(ctx, ScoreBoardMembersKey(ref, own), member)
	err = r.exec(ctx, pipe)
	if errors.Is(err, goredis.Nil) {
		return 0, nil, fmt.Errorf("redis: member of %s: %w", ScoreBoardKey(ref, own), ErrNotRanked)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("redis: score board member %s: %w", ScoreBoardKey(ref, own), err)
	}
	entry := prefixCmd.Val() + member
	excl := "(" + entry // the entry as an exclusive bound of ZLEXCOUNT and the ranges by lex
	pipe = r.pipeline()
	pipe.ZScore(ctx, ScoreBoardKey(ref, own), entry) // redis.Nil if the entry is gone
	cards := make([]*goredis.IntCmd, ref.Shards)
	before := make([]*goredis.IntCmd, ref.Shards)
	above := make([]*goredis.StringSliceCmd, ref.Shards)
	below := make([]*goredis.StringSliceCmd, ref.Shards)
	for i := range ref.Shards {
		key := ScoreBoardKey(ref, i)
		cards[i] = pipe.ZCard(ctx, key)
		before[i] = pipe.ZLexCount(ctx, key, "-", excl)
		if n > 0 {
			above[i] = pipe.ZRevRangeByLex(ctx, key, &goredis.ZRangeBy{Max: excl, Min: "-", Count: int64(n)})
			below[i] = pipe.ZRangeByLex(ctx, key, &goredis.ZRangeBy{Min: excl, Max: "+", Count: int64(n)})
		}
	}
	if err := r.exec(ctx, pipe); errors.Is(err, goredis.Nil) {
		return 0, nil, fmt.Errorf("redis: member of %s: %w", ScoreBoardKey(ref, own), ErrBoardChanged)
	} else if err != nil {
		return 0, nil, fmt.Errorf("redis: score board member %s: %w", ScoreBoardKey(ref, own), err)
	}
	rank := int64(1)
	var ups, downs [][]string
	for i := range ref.Shards {
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

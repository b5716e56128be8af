package redis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
)

// Reading whole boards for their archive, and the marks that say a period's board was
// archived. A board is read in chunks, so that a board of millions of members never sits in
// one reply; each chunk of a score board continues after the last entry read (a lex cursor),
// so that a write during the read neither repeats nor skips an entry it did not move.

// ScanBoard calls fn with every member of a score board in rank order, at most chunk rows
// at a time (ranks from 1, exact over the shards: the k-way merge of the shards read
// chunk entries at a time each).
func (r *Reader) ScanBoard(ctx context.Context, ref BoardRef, chunk int, fn func([]Ranked) error) error {
	if chunk < 1 || ref.Shards < 1 {
		return fmt.Errorf("%w: chunk %d, %d shards", ErrBoardBounds, chunk, ref.Shards)
	}
	bufs := make([][]string, ref.Shards)
	cursor := make([]string, ref.Shards) // the last entry read from each shard; "" none yet
	done := make([]bool, ref.Shards)
	out := make([]string, 0, chunk)
	rank := int64(1)
	emit := func() error {
		rows, err := rankedEntries(out, rank)
		if err != nil {
			return err
		}
		rank += int64(len(rows))
		out = out[:0]
		return fn(rows)
	}
	for {
		if err := r.refill(ctx, ref, chunk, bufs, cursor, done); err != nil {
			return err
		}
		// Take the smallest head while every shard that is not exhausted has one.
		for {
			best := -1
			for i, b := range bufs {
				if len(b) == 0 {
					if !done[i] {
						best = -2 // shard i must be read on before anything is emitted
						break
					}
					continue
				}
				if best == -1 || b[0] < bufs[best][0] {
					best = i
				}
			}
			if best < 0 {
				if best == -1 { // every shard exhausted
					if len(out) > 0 {
						return emit()
					}
					return nil
				}
				break
			}
			out = append(out, bufs[best][0])
			bufs[best] = bufs[best][1:]
			if len(out) == chunk {
				if err := emit(); err != nil {
					return err
				}
			}
		}
	}
}

// refill reads the next chunk entries of every shard whose buffer is empty and which is not
// exhausted, in one pipeline.
func (r *Reader) refill(ctx context.Context, ref BoardRef, chunk int, bufs [][]string, cursor []string, done []bool) error {
	pipe := r.rdb.Pipeline()
	cmds := make([]*goredis.StringSliceCmd, len(bufs))
	for i := range bufs {
		if len(bufs[i]) > 0 || done[i] {
			continue
		}
		min := "-"
		if cursor[i] != "" {
			min = "(" + cursor[i]
		}
		cmds[i] = pipe.ZRangeByLex(ctx, ScoreBoardKey(ref, i), &goredis.ZRangeBy{Min: min, Max: "+", Count: int64(chunk)})
	}
	if pipe.Len() == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redis: read score board %s: %w", ScoreBoardKey(ref, 0), err)
	}
	for i, c := range cmds {
		if c == nil {
			continue
		}
		bufs[i] = c.Val()
		if len(bufs[i]) < chunk {
			done[i] = true
		}
		if n := len(bufs[i]); n > 0 {
			cursor[i] = bufs[i][n-1]
		}
	}
	return nil
}

// ScanStepsBoard calls fn with every member of a day's steps board (global when region is
// "") in rank order, at most chunk rows at a time.
func (r *Reader) ScanStepsBoard(ctx context.Context, day board.Day, region string, chunk int, fn func([]Ranked) error) error {
	if chunk < 1 {
		return fmt.Errorf("%w: chunk %d", ErrBoardBounds, chunk)
	}
	key := StepsBoard(day, region)
	for first := int64(0); ; first += int64(chunk) {
		zs, err := r.rdb.ZRevRangeWithScores(ctx, key, first, first+int64(chunk)-1).Result()
		if err != nil {
			return fmt.Errorf("redis: read steps board %s: %w", key, err)
		}
		if len(zs) > 0 {
			if err := fn(ranked(day, first+1, zs)); err != nil {
				return err
			}
		}
		if len(zs) < chunk {
			return nil
		}
	}
}

// ArchiveMarks records which finished boards were archived: one String beside the board
// (ArchivedKey) holding the number of members archived, expiring with the board, so that the
// mark lives exactly as long as what it speaks of.
type ArchiveMarks struct{ rdb goredis.UniversalClient }

// NewArchiveMarks returns the marks on rdb.
func NewArchiveMarks(rdb goredis.UniversalClient) *ArchiveMarks { return &ArchiveMarks{rdb: rdb} }

// Archived tells, for each board key, whether its board was archived, in one pipeline.
func (m *ArchiveMarks) Archived(ctx context.Context, boardKeys []string) ([]bool, error) {
	if len(boardKeys) == 0 {
		return nil, nil
	}
	pipe := m.rdb.Pipeline()
	cmds := make([]*goredis.IntCmd, len(boardKeys))
	for i, k := range boardKeys {
		cmds[i] = pipe.Exists(ctx, ArchivedKey(k))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("redis: archive marks: %w", err)
	}
	out := make([]bool, len(boardKeys))
	for i, c := range cmds {
		out[i] = c.Val() > 0
	}
	return out, nil
}

// MarkArchived records that the board of boardKey was archived with members members; the
// mark expires at expireAt (the board's own expiry).
func (m *ArchiveMarks) MarkArchived(ctx context.Context, boardKey string, members int64, expireAt time.Time) error {
	key := ArchivedKey(boardKey)
	if err := m.rdb.SetArgs(ctx, key, strconv.FormatInt(members, 10), goredis.SetArgs{ExpireAt: expireAt}).Err(); err != nil {
		return fmt.Errorf("redis: mark %s: %w", key, err)
	}
	return nil
}

// BoardScopes finds the scope boards that exist, by one SCAN of the keyspace (of every master
// of a Redis Cluster): for each board of a period that has scope boards, its scopes, keyed by
// the board and period as "<board>:<period>[:<id>]" (ScopesKey), and for the steps boards by
// "steps:<yyyymmdd>" (StepsScopesKey) with the regions as scopes. A scope board none of whose
// members is left has no key, and is not found.
func (r *Reader) BoardScopes(ctx context.Context) (map[string][]string, error) {
	found := map[string]map[string]bool{}
	add := func(k, scope string) {
		if found[k] == nil {
			found[k] = map[string]bool{}
		}
		found[k][scope] = true
	}
	scan := func(ctx context.Context, c goredis.UniversalClient) error {
		iter := c.Scan(ctx, 0, boardsMatch, 1000).Iterator()
		for iter.Next(ctx) {
			if k, scope, ok := scopeBoardOf(iter.Val()); ok {
				add(k, scope)
			}
		}
		return iter.Err()
	}
	var err error
	if cc, ok := r.rdb.(*goredis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
			local := &Reader{rdb: m}
			part, err := local.BoardScopes(ctx)
			mu.Lock()
			defer mu.Unlock()
			for k, scopes := range part {
				for _, s := range scopes {
					add(k, s)
				}
			}
			return err
		})
	} else {
		err = scan(ctx, r.rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("redis: find scope boards: %w", err)
	}
	out := make(map[string][]string, len(found))
	for k, set := range found {
		out[k] = slices.Sorted(maps.Keys(set))
	}
	return out, nil
}

package redis

import (
	"context"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
)

// Reads and removals of `rankstream reconcile`, which compares Redis with the group tables
// and rewrites what differs with the writers' own writes (StepsWriter, ScoresWriter). Only
// removals have no writer's twin: the steps writer only raises values.

// StepsDay is what Redis holds of one day's steps.
type StepsDay struct {
	Values map[string]int64 // step:{day}:{user} by user
	// Boards are the members and raw scores of rank:steps:global:{day} (region "") and of
	// every rank:steps:region:{region}:{day} that exists.
	Boards map[string]map[string]float64
}

// zrangeChunk is how many members one ZRANGE of StepsDay reads.
const zrangeChunk = 10_000

// StepsDay reads every step key and steps board of day d, finding them by SCAN (of every
// master of a Redis Cluster). A board is read in chunks of ranks: a write during the read
// may make it miss or repeat a member that moved, so compare what a stopped or quiet system
// holds.
func (r *Reader) StepsDay(ctx context.Context, d board.Day) (StepsDay, error) {
	out := StepsDay{Values: map[string]int64{}, Boards: map[string]map[string]float64{}}
	var keys, boards []string
	var mu sync.Mutex
	scan := func(ctx context.Context, c goredis.UniversalClient) error {
		for _, match := range []string{stepKeysMatch(d), stepsRegionBoardsMatch(d)} {
			iter := c.Scan(ctx, 0, match, 1000).Iterator()
			for iter.Next(ctx) {
				mu.Lock()
				if k := iter.Val(); isStepKeyOf(k, d) {
					keys = append(keys, k)
				} else {
					boards = append(boards, k)
				}
				mu.Unlock()
			}
			if err := iter.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if cc, ok := r.rdb.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return scan(ctx, m) })
	} else {
		err = scan(ctx, r.rdb)
	}
	if err != nil {
		return out, fmt.Errorf("redis: scan steps of %s: %w", d, err)
	}
	for len(keys) > 0 {
		n := min(len(keys), zrangeChunk)
		pipe := r.rdb.Pipeline()
		gets := make([]*goredis.StringCmd, n)
		for i, k := range keys[:n] {
			gets[i] = pipe.Get(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil && err != goredis.Nil {
			return out, fmt.Errorf("redis: read step keys of %s: %w", d, err)
		}
		for i, k := range keys[:n] {
			if v, err := gets[i].Int64(); err == nil {
				user, _ := userOfStepKey(k, d)
				out.Values[user] = v
			} else if err != goredis.Nil {
				return out, fmt.Errorf("redis: step key %s: %w", k, err)
			}
		}
		keys = keys[n:]
	}
	read := func(key, region string) error {
		for start := int64(0); ; start += zrangeChunk {
			zs, err := r.rdb.ZRangeWithScores(ctx, key, start, start+zrangeChunk-1).Result()
			if err != nil {
				return fmt.Errorf("redis: read %s: %w", key, err)
			}
			for _, z := range zs {
				if out.Boards[region] == nil {
					out.Boards[region] = map[string]float64{}
				}
				out.Boards[region][z.Member.(string)] = z.Score
			}
			if len(zs) < zrangeChunk {
				return nil
			}
		}
	}
	if err := read(StepsGlobalBoard(d), ""); err != nil {
		return out, err
	}
	for _, k := range boards {
		if err := read(k, regionOfStepsBoard(k, d)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// RemoveSteps deletes the step keys of users and removes members from day d's boards (by
// region, "" the global board): what a repair does before the steps writer writes the truth
// again where Redis holds more than the truth or holds strangers.
func RemoveSteps(ctx context.Context, rdb goredis.UniversalClient, d board.Day, users []string, members map[string][]string) error {
	pipe := rdb.Pipeline()
	for _, u := range users {
		pipe.Del(ctx, StepKey(d, u))
	}
	for region, ms := range members {
		key := StepsGlobalBoard(d)
		if region != "" {
			key = StepsRegionBoard(region, d)
		}
		args := make([]any, len(ms))
		for i, m := range ms {
			args[i] = m
		}
		if len(args) > 0 {
			pipe.ZRem(ctx, key, args...)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redis: remove steps of %s: %w", d, err)
	}
	return nil
}

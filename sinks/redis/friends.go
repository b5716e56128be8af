package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
)

type userFriend struct{ user, friend string }

// FriendsWriter mirrors the friends processor's pairs to friends:{user}: SADD of the friends
// a user has, SREM of those the user no longer has. It coalesces updates per pair (the latest
// wins: a user's updates come in order), flushes them in one pipeline per interval, retries a
// failed flush with backoff for as long as it takes, and only then calls the done callbacks,
// oldest first; after a flush that failed for good it acknowledges nothing.
type FriendsWriter struct {
	rdb goredis.UniversalClient
	q   *async[userFriend, bool, *board.FriendUpdate]
}

// NewFriendsWriter returns a writer on rdb. Call Run to start flushing.
func NewFriendsWriter(rdb goredis.UniversalClient, opts FlushOptions) *FriendsWriter {
	opts.defaults()
	w := &FriendsWriter{rdb: rdb}
	w.q = newAsync(opts.async("redis-friends"), addFriend, w.write, nil) // a friend set is no board: no update latency
	return w
}

// Submit queues u (nil: nothing to write) and done. It blocks while MaxPending records wait.
func (w *FriendsWriter) Submit(u *board.FriendUpdate, done func(error)) { w.q.submit(u, done) }

func addFriend(b *asyncBatch[userFriend, bool], u *board.FriendUpdate) {
	if u == nil {
		return
	}
	k := userFriend{u.User, u.Friend}
	p, ok := b.items[k]
	if !ok {
		p = b.alloc()
		b.items[k] = p
	}
	*p = u.Friends
}

// Run flushes every Interval (or sooner when a batch is full) until ctx is cancelled, then
// makes one last attempt to flush what is queued. Cancel ctx only after the processor that
// submits has stopped. If a flush fails for good, its records and every record submitted
// after it get an error and Run returns it.
func (w *FriendsWriter) Run(ctx context.Context) error { return w.q.run(ctx) }

// Err returns the first failure of the writer: a write that failed, or a record submitted
// after it stopped.
func (w *FriendsWriter) Err() error { return w.q.err() }

// maxFriendUsersPerPipeline bounds the users of one pipeline (each an SADD and an SREM).
const maxFriendUsersPerPipeline = 1_000

// write sends per user one SADD of the friends it has and one SREM of those it left, in
// pipelines of maxFriendUsersPerPipeline users. Every write is absolute per pair, so a
// flush written again (a retry, a redelivery) changes nothing.
func (w *FriendsWriter) write(ctx context.Context, b *asyncBatch[userFriend, bool]) error {
	type change struct{ add, rem []any }
	users := make(map[string]*change)
	for k, v := range b.items {
		c := users[k.user]
		if c == nil {
			c = &change{}
			users[k.user] = c
		}
		if *v {
			c.add = append(c.add, k.friend)
		} else {
			c.rem = append(c.rem, k.friend)
		}
	}
	pipe, n := w.rdb.Pipeline(), 0
	exec := func() error {
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("redis sink: friends of %d users: %w", len(users), err)
		}
		pipe, n = w.rdb.Pipeline(), 0
		return nil
	}
	for user, c := range users {
		if len(c.add) > 0 {
			pipe.SAdd(ctx, FriendsKey(user), c.add...)
		}
		if len(c.rem) > 0 {
			pipe.SRem(ctx, FriendsKey(user), c.rem...)
		}
		if n++; n == maxFriendUsersPerPipeline {
			if err := exec(); err != nil {
				return err
			}
		}
	}
	if n > 0 {
		return exec()
	}
	return nil
}

// Friends returns the user's friends (friends:{user}), in no order.
func (r *Reader) Friends(ctx context.Context, user string) ([]string, error) {
	fs, err := r.rdb.SMembers(ctx, FriendsKey(user)).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: friends of %s: %w", user, err)
	}
	return fs, nil
}

// maxMembersPerCommand bounds the members of one ZMSCORE or HMGET of a friends read.
const maxMembersPerCommand = 1_000

// StepsStandings returns the day's value of each member (the global steps board) in one round
// trip: ZMSCORE in pipelined batches. A member without a value that day is not Present.
func (r *Reader) StepsStandings(ctx context.Context, day board.Day, members []string) ([]board.Standing, error) {
	key := StepsGlobalBoard(day)
	pipe := r.rdb.Pipeline()
	cmds := make([]*goredis.FloatSliceCmd, 0, len(members)/maxMembersPerCommand+1)
	for from := 0; from < len(members); from += maxMembersPerCommand {
		cmds = append(cmds, pipe.ZMScore(ctx, key, members[from:min(from+maxMembersPerCommand, len(members))]...))
	}
	if len(cmds) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmt.Errorf("redis: steps of %d members on %s: %w", len(members), key, err)
		}
	}
	c := board.DayComposite(day)
	out := make([]board.Standing, len(members))
	for i, cmd := range cmds {
		for j, v := range cmd.Val() {
			m := i*maxMembersPerCommand + j
			out[m].Member = members[m]
			// go-redis reads a member without a score as 0, which no entry has: a composite's
			// time field is never all ones (a day spans fewer ticks than its bits count).
			if v != 0 {
				out[m].Score, out[m].ReachedMs = c.Decode(v)
				out[m].Present = true
			}
		}
	}
	return out, nil
}

// BoardStandings returns each member's entry on a score board in one round trip: HMGET of
// each shard's members hash in pipelined batches. A member without an entry is not Present.
func (r *Reader) BoardStandings(ctx context.Context, ref BoardRef, members []string) ([]board.Standing, error) {
	if ref.Shards < 1 || ref.Shards > board.MaxShards {
		return nil, fmt.Errorf("%w: %d shards", ErrBoardBounds, ref.Shards)
	}
	byShard := make([][]int, ref.Shards)
	for i, m := range members {
		s := ShardOf(m, ref.Shards)
		byShard[s] = append(byShard[s], i)
	}
	type batch struct {
		idx []int
		cmd *goredis.SliceCmd
	}
	var batches []batch
	pipe := r.rdb.Pipeline()
	for s, idx := range byShard {
		for from := 0; from < len(idx); from += maxMembersPerCommand {
			part := idx[from:min(from+maxMembersPerCommand, len(idx))]
			fields := make([]string, len(part))
			for j, i := range part {
				fields[j] = members[i]
			}
			batches = append(batches, batch{part, pipe.HMGet(ctx, ScoreBoardMembersKey(ref, s), fields...)})
		}
	}
	if len(batches) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
			return nil, fmt.Errorf("redis: entries of %d members on %s: %w", len(members), ScoreBoardKey(ref, 0), err)
		}
	}
	out := make([]board.Standing, len(members))
	for i, m := range members {
		out[i].Member = m
	}
	for _, b := range batches {
		for j, v := range b.cmd.Val() {
			prefix, ok := v.(string)
			if !ok {
				continue
			}
			st := &out[b.idx[j]]
			_, score, reached, err := DecodeEntry(prefix + st.Member)
			if err != nil {
				return nil, fmt.Errorf("redis: entry of %s on %s: %w", st.Member, ScoreBoardKey(ref, 0), err)
			}
			st.Score, st.ReachedMs, st.Present = score, reached, true
		}
	}
	return out, nil
}

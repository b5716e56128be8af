package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// Reader reads what the writers of this package write: the steps boards, the score boards
// and the latest hot-search snapshot. It is the read API's only access to Redis.
type Reader struct {
	rdb   goredis.UniversalClient
	batch *batcher // nil: each read has round trips of its own
}

// NewReader returns a Reader on rdb (OpenReader bounds its calls) whose every read has round
// trips of its own.
func NewReader(rdb goredis.UniversalClient) *Reader { return &Reader{rdb: rdb} }

// NewBatchedReader returns a Reader on rdb for a server answering many reads at once: the
// board reads (pages and standings) of at most maxBatchedCmds commands queued while a round
// trip runs share the next one, one round trip at a time (batcher). Under load a read then
// costs far less of this process's and redis-server's CPU; alone it costs a goroutine handoff
// more than NewReader's.
func NewBatchedReader(rdb goredis.UniversalClient) *Reader {
	return &Reader{rdb: rdb, batch: newBatcher(rdb)}
}

// pipeline returns a pipeline to queue one read's commands on, for exec: on a batched Reader
// a pooled one (the batcher only needs the commands; a new pipeline was about a tenth of a
// standing read's allocations).
func (r *Reader) pipeline() goredis.Pipeliner {
	if r.batch != nil {
		if p, ok := r.batch.pipes.Get().(goredis.Pipeliner); ok {
			return p
		}
	}
	return r.rdb.Pipeline()
}

// maxBatchedCmds is the most commands a read sends through the batcher; a read of more (the
// other shards' part of a standing with neighbours on more than 5 shards, a page on more than
// 8: 4 and 2 commands a shard) has a round trip of its own even on a batched Reader. Sharing
// a round trip saves a read of a few commands most of its cost, but one of tens of commands
// little, while the batcher's one round trip at a time would make Redis wait for serve to
// parse the replies of the round trip before (and serve for Redis), and would write and parse
// every read's commands on one goroutine.
const maxBatchedCmds = 16

// exec runs the commands queued on pipe (from r.pipeline, not used after): in a round trip of
// their own, or, on a batched Reader and for at most maxBatchedCmds commands, in the next
// shared one. Its error is the first of the commands' errors.
func (r *Reader) exec(ctx context.Context, pipe goredis.Pipeliner) error {
	if r.batch == nil {
		_, err := pipe.Exec(ctx)
		return err
	}
	var err error
	if pipe.Len() > maxBatchedCmds {
		_, err = pipe.Exec(ctx)
	} else {
		err = r.batch.exec(ctx, pipe.Cmds())
	}
	if ctx.Err() == nil { // the batcher is done with the commands: the pipeline can be reused
		pipe.Discard()
		r.batch.pipes.Put(pipe)
	}
	return err
}

// Ranked is one member of a board at its rank (1 is the first).
type Ranked struct {
	Rank      int64
	Member    string
	Score     int64
	ReachedMs int64 // when the member reached the score (the tie-breaker), epoch ms
}

// ErrNotRanked: the member is not on the board.
var ErrNotRanked = errors.New("not on the board")

// StepsPage returns the size of a day's steps board (global when region is "") and its
// members from rank offset+1 on, at most limit of them (none for limit 0), in one round trip.
func (r *Reader) StepsPage(ctx context.Context, day board.Day, region string, offset, limit int) (total int64, rows []Ranked, err error) {
	key := StepsBoard(day, region)
	pipe := r.pipeline()
	card := pipe.ZCard(ctx, key)
	var page *goredis.ZSliceCmd
	if limit > 0 {
		page = pipe.ZRevRangeWithScores(ctx, key, int64(offset), int64(offset+limit-1))
	}
	if err := r.exec(ctx, pipe); err != nil {
		return 0, nil, fmt.Errorf("redis: steps board %s: %w", key, err)
	}
	if page != nil {
		rows = ranked(day, int64(offset)+1, page.Val())
	}
	return card.Val(), rows, nil
}

// StepsStanding returns the size of a day's steps board and the member's row with up to n
// rows above and below it (ascending rank), read atomically in one round trip
// (standingScript). It fails with ErrNotRanked when the member is not on the board.
func (r *Reader) StepsStanding(ctx context.Context, day board.Day, region, member string, n int) (total int64, rows []Ranked, err error) {
	key := StepsBoard(day, region)
	st, err := r.standing(ctx, []string{key}, member, n)
	if errors.Is(err, goredis.Nil) {
		return 0, nil, fmt.Errorf("redis: member of %s: %w", key, ErrNotRanked)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("redis: steps member %s: %w", key, err)
	}
	c := board.DayComposite(day)
	rows = make([]Ranked, len(st.entries)/2)
	for i := range rows {
		m, _ := st.entries[2*i].(string)
		v, err := st.scoreAt(2*i + 1)
		if err != nil {
			return 0, nil, fmt.Errorf("redis: steps member %s: %w", key, err)
		}
		rows[i] = stepsRanked(c, st.first+1+int64(i), m, v)
	}
	return st.card, rows, nil
}

// ranked decodes rows of a day's steps board, the first at rank first.
func ranked(day board.Day, first int64, rows []goredis.Z) []Ranked {
	c := board.DayComposite(day)
	out := make([]Ranked, len(rows))
	for i, z := range rows {
		m, _ := z.Member.(string)
		out[i] = stepsRanked(c, first+int64(i), m, z.Score)
	}
	return out
}

// stepsRanked is the row of member at rank on a steps board whose composite is c, from its score.
func stepsRanked(c board.Composite, rank int64, member string, score float64) Ranked {
	steps, reached := c.Decode(score)
	return Ranked{Rank: rank, Member: member, Score: steps, ReachedMs: reached}
}

// HotSnapshot returns the latest snapshot of a Top-K stream (HotKey); nil when there is none.
func (r *Reader) HotSnapshot(ctx context.Context, stream string) (*topics.TopKSnapshot, error) {
	key := HotKey(stream)
	b, err := r.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redis: GET %s: %w", key, err)
	}
	snap := new(topics.TopKSnapshot)
	if err := json.Unmarshal(b, snap); err != nil {
		return nil, fmt.Errorf("redis: %s: %w", key, err)
	}
	return snap, nil
}

// Ping tells whether Redis answers.
func (r *Reader) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }

// IsTimeout reports whether err is Redis not answering in time: a deadline, a network
// timeout, or no pooled connection free in time.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, goredis.ErrPoolTimeout) || errors.As(err, &ne) && ne.Timeout()
}

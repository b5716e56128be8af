package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
)

// Score boards (declared boards) are exact for every score in
// [-board.MaxScore, board.MaxScore] and every reach time in [0, 2^48) ms (until the year
// 10889), which a float64 sorted set score cannot hold together. So a board shard is a
// sorted set whose scores are all 0, where Redis orders members by their bytes (memcmp), and
// each member is an entry
//
//	entry = BE56(MaxScore - score) || BE48(reached ms) || member id
//
// The first 7 bytes sort by score descending (MaxScore - score is in [0, 2^48], and
// big-endian bytes of fixed width compare like the numbers), the next 6 by reach time
// ascending, and the rest by member id in byte order: lexicographic order is exactly the
// ranking (higher score, then earlier reach, then smaller id), with no rounding anywhere. A
// hash beside it maps each member id to its entry's 13-byte prefix, to find and remove a
// member's entry. The sorted set and its hash share a hash tag, so one script updates both
// atomically, in a Redis Cluster too.
//
// A board of N shards (board.Board.Shards) is N such pairs; a member lives in shard
// xxhash(member) mod N, and each shard has its own hash tag so that a cluster spreads them.
// The number of shards of a board must not change while its keys live: the reader would look
// for members in the wrong shard.
//
// Memory: see docs/scores.md ("Exact ranking in Redis") for the bytes per member measured on
// the real server.

// entryPrefix is the length of an entry before the member id.
const entryPrefix = 7 + 6

// maxReachedMs bounds reach times: 6 bytes of milliseconds.
const maxReachedMs = 1<<48 - 1

// ErrEntryRange rejects a score or reach time the encoding cannot hold exactly.
var ErrEntryRange = errors.New("redis: score board entry out of range")

// BoardRef names one board of a period and scope: what the read API asks for and a write
// goes to.
type BoardRef struct {
	Board    string
	Period   board.Period
	PeriodID string // ignored for total
	Scope    string // "": the global board
	Shards   int    // the board's shards, 1..board.MaxShards
}

// ShardOf returns the shard of member on a board of n shards.
func ShardOf(member string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(xxhash.Sum64String(member) % uint64(n))
}

// EncodeEntry returns the sorted-set member of (member, score, reached).
func EncodeEntry(member string, score, reachedMs int64) (string, error) {
	p, err := entryPrefixOf(score, reachedMs)
	if err != nil {
		return "", err
	}
	return p + member, nil
}

func entryPrefixOf(score, reachedMs int64) (string, error) {
	if score < -board.MaxScore || score > board.MaxScore {
		return "", fmt.Errorf("%w: score %d not in [-%d, %d]", ErrEntryRange, score, board.MaxScore, board.MaxScore)
	}
	if reachedMs < 0 || reachedMs > maxReachedMs {
		return "", fmt.Errorf("%w: reach time %d ms not in [0, 2^48)", ErrEntryRange, reachedMs)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(board.MaxScore-score)<<8) // bytes 0-6
	binary.BigEndian.PutUint64(b[7:15], uint64(reachedMs)<<16)          // bytes 7-12
	return string(b[:entryPrefix]), nil
}

// DecodeEntry returns what EncodeEntry encoded.
func DecodeEntry(e string) (member string, score, reachedMs int64, err error) {
	if len(e) < entryPrefix {
		return "", 0, 0, fmt.Errorf("%w: entry of %d bytes", ErrEntryRange, len(e))
	}
	var b [16]byte
	copy(b[:], e[:entryPrefix])
	score = board.MaxScore - int64(binary.BigEndian.Uint64(b[0:8])>>8)
	reachedMs = int64(binary.BigEndian.Uint64(b[7:15]) >> 16)
	return e[entryPrefix:], score, reachedMs, nil
}

// writeEntries applies writes to the shard KEYS[1] (sorted set) / KEYS[2] (hash), in order:
// ARGV[2], ARGV[3], ... are pairs of a member and its entry prefix, which replaces the
// member's previous entry, or "" to take the member off. Then, when ARGV[1] is not '0', both
// keys expire at ARGV[1] (unix seconds). Writing the same entries again changes nothing. One
// call carries up to maxEntriesPerCall members: a script's cost is mostly its call, so a
// batch per shard costs Redis a fraction of a call per member.
var writeEntries = goredis.NewScript(`
local z, h = KEYS[1], KEYS[2]
for i = 2, #ARGV, 2 do
  local m, p = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', h, m)
  if p == '' then
    if old then
      redis.call('ZREM', z, old .. m)
      redis.call('HDEL', h, m)
    end
  elseif old ~= p then
    if old then redis.call('ZREM', z, old .. m) end
    redis.call('ZADD', z, 0, p .. m)
    redis.call('HSET', h, m, p)
  end
end
if ARGV[1] ~= '0' then
  redis.call('EXPIREAT', z, ARGV[1])
  redis.call('EXPIREAT', h, ARGV[1])
end
return 0`)

// maxEntriesPerCall bounds the members of one writeEntries call (Redis runs one script at a
// time: about a millisecond for this many).
const maxEntriesPerCall = 256

// BoardWrite is one absolute write to a score board: the member's entry, or its removal.
type BoardWrite struct {
	Ref       BoardRef
	Member    string
	Present   bool // false: remove the member
	Score     int64
	ReachedMs int64
	// ExpireAt is when the board's keys expire (zero: never, for total).
	ExpireAt time.Time
}

// BoardWriter writes score boards. Every write is absolute (the member's entry, or its
// absence), so writing a batch again, after a failure or a redelivery, gives the same boards.
type BoardWriter struct{ rdb goredis.UniversalClient }

// NewBoardWriter returns a writer on rdb (Open bounds its calls).
func NewBoardWriter(rdb goredis.UniversalClient) *BoardWriter { return &BoardWriter{rdb: rdb} }

// Write applies the writes in order, in one pipeline of one script call per shard (and per
// maxEntriesPerCall of its writes, in order). It checks every write before sending any: an entry out of range (ErrEntryRange) is a permanent error and nothing is written. A
// failed pipeline may have applied a part of the writes: writing the whole batch again is
// harmless.
func (w *BoardWriter) Write(ctx context.Context, writes []BoardWrite) error {
	// The writes of one shard, in order, with the expiry of the last entry set there (every
	// entry of a shard has its period's; a removal sets none).
	type shardWrites struct {
		keys []string
		args []any // expiry, then member and prefix pairs
	}
	var shards []*shardWrites
	byKey := map[string]*shardWrites{}
	for _, x := range writes {
		if x.Ref.Shards < 1 || x.Ref.Shards > board.MaxShards {
			return fmt.Errorf("redis: score board %s: %d shards", x.Ref.Board, x.Ref.Shards)
		}
		shard := ShardOf(x.Member, x.Ref.Shards)
		key := ScoreBoardKey(x.Ref, shard)
		sw := byKey[key]
		if sw == nil || len(sw.args) == 1+2*maxEntriesPerCall {
			sw = &shardWrites{keys: []string{key, ScoreBoardMembersKey(x.Ref, shard)}, args: []any{int64(0)}}
			byKey[key] = sw
			shards = append(shards, sw)
		}
		if !x.Present {
			sw.args = append(sw.args, x.Member, "")
			continue
		}
		p, err := entryPrefixOf(x.Score, x.ReachedMs)
		if err != nil {
			return fmt.Errorf("redis: score board %s member %q: %w", key, x.Member, err)
		}
		exp := int64(0)
		if !x.ExpireAt.IsZero() {
			exp = x.ExpireAt.Unix()
		}
		sw.args[0] = exp
		sw.args = append(sw.args, x.Member, p)
	}
	exec := func() error {
		pipe := w.rdb.Pipeline()
		for _, sw := range shards {
			writeEntries.EvalSha(ctx, pipe, sw.keys, sw.args...)
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	err := exec()
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") { // not loaded yet, or Redis lost its script cache
		if lerr := writeEntries.Load(ctx, w.rdb).Err(); lerr != nil {
			return fmt.Errorf("redis: load score board script: %w", lerr)
		}
		err = exec()
	}
	if err != nil {
		return fmt.Errorf("redis: write %d score board entries: %w", len(writes), err)
	}
	return nil
}

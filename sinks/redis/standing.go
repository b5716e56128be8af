package redis

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

// standingScript reads a member's standing on one sorted set in one call, so atomically: the
// member's position, the set's size and the entries from n positions before it to n after
// it. KEYS[1] is the sorted set; ARGV[1] the member; ARGV[2] n.
//
//   - A steps board (KEYS[1] alone): position by ZREVRANK, entries by ZREVRANGE WITHSCORES,
//     member and score pairs. Scores stay the bulk strings Redis gives a script (every bit of
//     the double, "%.17g"), never Lua numbers (which tostring cuts to 14 digits).
//   - A score board shard (KEYS[2], its hash of entry prefixes, in the same slot): the member's
//     entry is its prefix and id; position by ZRANK (every score is 0: byte order), entries by
//     ZRANGE.
//
// The reply is nil when the member is not on the set (a hash naming an entry the set lacks
// counts as not on it), else {position (0-based), size, entries}.
//
// It runs by EVALSHA_RO (Redis 7.0 or newer), under which Redis refuses any write and which a
// read-only replica runs. It has no "#!lua flags=no-writes" line: miniredis (`rankstream dev`)
// cannot compile one, and a script without it runs by EVALSHA_RO on a read-only replica
// just the same (checked on redis-server 7.0.15).
var standingScript = goredis.NewScript(`
local z, m, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
if KEYS[2] then
  local p = redis.call('HGET', KEYS[2], m)
  if not p then return false end
  local r = redis.call('ZRANK', z, p .. m)
  if not r then return false end
  return {r, redis.call('ZCARD', z), redis.call('ZRANGE', z, math.max(0, r - n), r + n)}
end
local r = redis.call('ZREVRANK', z, m)
if not r then return false end
return {r, redis.call('ZCARD', z), redis.call('ZREVRANGE', z, math.max(0, r - n), r + n, 'WITHSCORES')}`)

// standing is what standingScript read.
type standing struct {
	pos     int64 // the member's position (0-based) in the set's order
	card    int64 // the set's size
	first   int64 // the position of entries[0]: max(0, pos-n)
	entries []any // strings; on a steps board member and score pairs
}

// standing reads the standing of member on keys (standingScript) with n entries on each side,
// in one round trip (a batched Reader shares it), loading the script first when Redis does
// not have it (the first read, or after a restart or SCRIPT FLUSH). Its error is redis.Nil
// when the member is not on the set.
func (r *Reader) standing(ctx context.Context, keys []string, member string, n int) (standing, error) {
	run := func() (*goredis.Cmd, error) {
		pipe := r.pipeline()
		cmd := standingScript.EvalShaRO(ctx, pipe, keys, member, n)
		return cmd, r.exec(ctx, pipe)
	}
	cmd, err := run()
	if goredis.HasErrorPrefix(err, "NOSCRIPT") { // not loaded yet, or Redis lost its script cache
		if lerr := standingScript.Load(ctx, r.rdb).Err(); lerr != nil {
			return standing{}, fmt.Errorf("redis: load the standing script: %w", lerr)
		}
		cmd, err = run()
	}
	if err != nil { // cmd is not to be read: a batched read that gave up may still get its reply
		return standing{}, err
	}
	v, _ := cmd.Slice()
	if len(v) == 3 {
		pos, ok1 := v[0].(int64)
		card, ok2 := v[1].(int64)
		entries, ok3 := v[2].([]any)
		if ok1 && ok2 && ok3 {
			return standing{pos: pos, card: card, first: max(0, pos-int64(n)), entries: entries}, nil
		}
	}
	return standing{}, fmt.Errorf("redis: standing script replied %v", v)
}

// scoreAt parses the score at entries[i], a bulk string of a double, exactly.
func (s standing) scoreAt(i int) (float64, error) {
	t, _ := s.entries[i].(string)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("redis: standing script: score %q: %w", t, err)
	}
	return v, nil
}

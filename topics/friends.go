package topics

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/segmentio/encoding/json"
)

// Ops of a friendship change (FriendOp.Op).
const (
	OpAdd    = "add"
	OpRemove = "remove"
)

// FriendOp is one change of a friendship (topic friends.changed, key = user id): user_id adds
// or removes friend_id. Friendship is mutual: either side's op applies to both users.
type FriendOp struct {
	UserID   string    `json:"user_id"`
	FriendID string    `json:"friend_id"`
	Op       string    `json:"op"`
	TS       Timestamp `json:"ts"`
}

// FriendRules are the bounds a friendship op's ts must keep against the record's Kafka
// timestamp.
type FriendRules struct {
	// MaxAge: ops whose ts is older than the record's Kafka timestamp minus MaxAge are
	// dead-lettered.
	MaxAge time.Duration
	// FutureSkew: ops whose ts is later than the record's Kafka timestamp plus FutureSkew are
	// dead-lettered. It matters here more than elsewhere: the op with the latest ts decides a
	// pair, so a ts far ahead would make a friendship no later op can end.
	FutureSkew time.Duration
}

// DefaultFriendRules: 7 days of age (as step reports) and 5 minutes of clock skew.
var DefaultFriendRules = FriendRules{MaxAge: 7 * 24 * time.Hour, FutureSkew: 5 * time.Minute}

// MaxFriendTSMillis is the latest ts of a friendship op, in epoch milliseconds (48 bits, as
// score ops).
const MaxFriendTSMillis = 1<<48 - 1

// DecodeFriendOp decodes and validates one friends.changed record. recordTime is the Kafka
// record's timestamp: the ts bounds are measured against it, not the wall clock, so a replay
// decides the same.
//
// A record is rejected, with an error wrapping ErrInvalid that says why, when the value or
// key breaks the rules every input shares (checkValue, checkKey); when user_id or friend_id
// is missing or not a valid id; when the key differs from user_id; when friend_id equals
// user_id; when op is neither add nor remove; when ts is missing, malformed, outside
// [0, MaxFriendTSMillis], older than MaxAge or later than FutureSkew against recordTime.
func DecodeFriendOp(key string, value []byte, recordTime time.Time, rules FriendRules) (*FriendOp, error) {
	if err := checkValue(value); err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var o FriendOp
	if err := json.Unmarshal(value, &o); err != nil {
		return nil, invalid("json: %v", err)
	}
	if err := checkID("user_id", o.UserID); err != nil {
		return nil, err
	}
	if err := checkID("friend_id", o.FriendID); err != nil {
		return nil, err
	}
	if key != o.UserID {
		return nil, invalid("key %q does not match user_id %q", shorten(key, 64), shorten(o.UserID, 64))
	}
	if o.FriendID == o.UserID {
		return nil, invalid("friend_id: %q is the user itself", shorten(o.FriendID, 64))
	}
	switch o.Op {
	case OpAdd, OpRemove:
	case "":
		return nil, invalid("op: missing")
	default:
		return nil, invalid("op: unknown %q, want add or remove", shorten(o.Op, 32))
	}
	if o.TS.IsZero() {
		return nil, invalid("ts: missing")
	}
	if ms := o.TS.UnixMilli(); ms < 0 || ms > MaxFriendTSMillis {
		return nil, invalid("ts: %s is outside 1970-01-01 .. year 10889", formatTime(o.TS.Time))
	}
	if err := checkTime(o.TS.Time, recordTime, rules.MaxAge, rules.FutureSkew); err != nil {
		return nil, err
	}
	return &o, nil
}

// FriendLoopKind is the first byte of a record of the friends group's loop topic
// (Names.Loop(FriendsGroup)); it doubles as the format's version.
type FriendLoopKind byte

// The kinds of loop record. Both are keyed by the user whose side they change.
const (
	// FriendMirror carries an input op to the other user of the pair.
	FriendMirror FriendLoopKind = 1
	// FriendReply carries a side's decision on a pair back to the other side when it differs
	// from what that side sent (a later op it knew, or a refused add).
	FriendReply FriendLoopKind = 2
)

// FriendLoopRecord is the value of a record of the friends group's loop topic: the pair's op
// as the sending side decided it, for the receiving side (the record's key) and Friend (the
// sender).
type FriendLoopRecord struct {
	Kind   FriendLoopKind
	Add    bool // false: remove
	TSMs   int64
	Friend string
}

// ErrBadFriendLoopRecord is the error of a loop record Encode did not make.
var ErrBadFriendLoopRecord = errors.New("friends: malformed loop record")

// Encode returns kind, add (0 or 1), ts (int64 little-endian), then the friend's id.
func (r FriendLoopRecord) Encode() []byte {
	b := make([]byte, 0, 10+len(r.Friend))
	add := byte(0)
	if r.Add {
		add = 1
	}
	b = append(b, byte(r.Kind), add)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.TSMs))
	return append(b, r.Friend...)
}

// DecodeFriendLoopRecord reads a record written by Encode; anything else fails with
// ErrBadFriendLoopRecord.
func DecodeFriendLoopRecord(b []byte) (FriendLoopRecord, error) {
	if len(b) < 11 || (FriendLoopKind(b[0]) != FriendMirror && FriendLoopKind(b[0]) != FriendReply) || b[1] > 1 {
		return FriendLoopRecord{}, ErrBadFriendLoopRecord
	}
	r := FriendLoopRecord{Kind: FriendLoopKind(b[0]), Add: b[1] == 1, TSMs: int64(binary.LittleEndian.Uint64(b[2:])), Friend: string(b[10:])}
	if r.TSMs < 0 || r.TSMs > MaxFriendTSMillis || checkID("friend", r.Friend) != nil {
		return FriendLoopRecord{}, ErrBadFriendLoopRecord
	}
	return r, nil
}

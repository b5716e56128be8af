package topics

import (
	"bytes"
	"strconv"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/rankstream/rankstream/board"
)

// Ops of a score update (ScoreOp.Op). Ban, unban and release are the operators' (fair
// play): ban removes the member from every period of the board and refuses their later ops,
// unban lifts a ban, release lifts the freeze a quarantined op left.
const (
	OpSet     = "set"
	OpIncr    = "incr"
	OpDelete  = "delete"
	OpBan     = "ban"
	OpUnban   = "unban"
	OpRelease = "release"
)

// AllBoards is the board an operator op (ban, unban, release) names to act on every declared
// board: the record's key is the member, so one record carries it in one partition.
const AllBoards = "*"

// MaxReasonTextBytes bounds an operator op's reason.
const MaxReasonTextBytes = 512

// IsOperatorOp tells whether op is ban, unban or release.
func IsOperatorOp(op string) bool { return op == OpBan || op == OpUnban || op == OpRelease }

// GlobalScope is the name the read API gives a board's global ranking; no op may name it as
// its scope.
const GlobalScope = "global"

// ScoreRules are the bounds a score op's ts must keep against the record's Kafka timestamp,
// whatever its board; the processor then applies its board's own retention (at most MaxAge).
type ScoreRules struct {
	// MaxAge: ops whose ts is older than the record's Kafka timestamp minus MaxAge are
	// dead-lettered.
	MaxAge time.Duration
	// FutureSkew: ops whose ts is later than the record's Kafka timestamp plus FutureSkew are
	// dead-lettered.
	FutureSkew time.Duration
}

// DefaultScoreRules: the longest retention a board may declare (board.MaxRetention) and, as
// for steps, 5 minutes of clock skew.
var DefaultScoreRules = ScoreRules{MaxAge: board.MaxRetention, FutureSkew: 5 * time.Minute}

// MaxScoreTSMillis is the latest ts of a score op, in epoch milliseconds: boards keep reach
// times in 48 bits of milliseconds (until the year 10889), and none before 1970.
const MaxScoreTSMillis = 1<<48 - 1

// scoreWire is a score op as it is decoded: score stays raw, so that a missing, null or
// misshapen score is told apart from 0.
type scoreWire struct {
	RequestID string          `json:"request_id"`
	Board     string          `json:"board"`
	Member    string          `json:"member"`
	Op        string          `json:"op"`
	Score     json.RawMessage `json:"score"`
	TS        Timestamp       `json:"ts"`
	Scope     string          `json:"scope"`
	By        string          `json:"by"`
	Reason    string          `json:"reason"`
}

// DecodeScoreOp decodes and validates one scores.updated record. recordTime is the Kafka
// record's timestamp: the ts bounds are measured against it, not the wall clock, so a replay
// decides the same. Whether the board exists (and its own retention) is the processor's to
// check: this package does not know the boards file.
//
// A record is rejected, with an error wrapping ErrInvalid that says why, when the value or
// key breaks the rules every input shares (checkValue, checkKey); when request_id or member
// is missing or not a valid id; when the key differs from member; when board is missing or
// not [a-z0-9_-]{1,64} (or AllBoards for ban, unban and release); when op is none of set, incr,
// delete, ban, unban, release; when an operator op lacks by (a valid id) or has a scope, or its
// reason is over MaxReasonTextBytes or not text; when by or reason come with
// another op; when score is missing, null or
// not a plain integer (a string, a fraction, an exponent) for set and incr, or given and not
// a plain integer for delete, ban, unban and release (whose score is ignored); when a set's score is outside
// [-board.MaxScore, board.MaxScore] or an incr's outside twice that (the state refuses an incr
// that would leave the range); when ts is missing, malformed, older than MaxAge or later than
// FutureSkew against recordTime or outside [0, MaxScoreTSMillis]; when scope is given and not a valid region-like token (at
// most MaxRegionBytes) or is GlobalScope.
func DecodeScoreOp(key string, value []byte, recordTime time.Time, rules ScoreRules) (*ScoreOp, error) {
	if err := checkValue(value); err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var w scoreWire
	if err := json.Unmarshal(value, &w); err != nil {
		return nil, invalid("json: %v", err)
	}
	if err := checkID("request_id", w.RequestID); err != nil {
		return nil, err
	}
	if err := checkID("member", w.Member); err != nil {
		return nil, err
	}
	if key != w.Member {
		return nil, invalid("key %q does not match member %q", shorten(key, 64), shorten(w.Member, 64))
	}
	switch {
	case w.Board == "":
		return nil, invalid("board: missing")
	case w.Board == AllBoards && IsOperatorOp(w.Op):
	case !board.ValidName(w.Board):
		return nil, invalid("board: %q is not [a-z0-9_-]{1,64}", shorten(w.Board, 64))
	}
	var score int64
	switch w.Op {
	case "":
		return nil, invalid("op: missing")
	case OpSet, OpIncr:
		limit := board.MaxScore
		if w.Op == OpIncr {
			limit = 2 * board.MaxScore
		}
		var err error
		if score, err = signedInt("score", w.Score, limit); err != nil {
			return nil, err
		}
	case OpBan, OpUnban, OpRelease:
		if err := checkID("by", w.By); err != nil {
			return nil, err
		}
		if len(w.Reason) > MaxReasonTextBytes {
			return nil, invalid("reason: %d bytes, longer than %d", len(w.Reason), MaxReasonTextBytes)
		}
		if err := checkText("reason", w.Reason); err != nil {
			return nil, err
		}
		if err := ignoredScore(w.Score); err != nil {
			return nil, err
		}
		if w.Scope != "" {
			return nil, invalid("scope: an op %s carries no scope", w.Op)
		}
	case OpDelete:
		if err := ignoredScore(w.Score); err != nil {
			return nil, err
		}
	default:
		return nil, invalid("op: unknown %q, want set, incr, delete, ban, unban or release", shorten(w.Op, 32))
	}
	if !IsOperatorOp(w.Op) && (w.By != "" || w.Reason != "") {
		return nil, invalid("by, reason: only ban, unban and release carry them")
	}
	if w.TS.IsZero() {
		return nil, invalid("ts: missing")
	}
	if ms := w.TS.UnixMilli(); ms < 0 || ms > MaxScoreTSMillis {
		return nil, invalid("ts: %s is outside 1970-01-01 .. year 10889, the reach times a board holds", formatTime(w.TS.Time))
	}
	if err := checkTime(w.TS.Time, recordTime, rules.MaxAge, rules.FutureSkew); err != nil {
		return nil, err
	}
	if w.Scope != "" {
		if err := CheckScope(w.Scope); err != nil {
			return nil, err
		}
		if w.Scope == GlobalScope {
			return nil, invalid("scope: %q names the global board; leave scope out", GlobalScope)
		}
	}
	return &ScoreOp{RequestID: w.RequestID, Board: w.Board, Member: w.Member, Op: w.Op, Score: score,
		TS: w.TS, Scope: w.Scope, By: w.By, Reason: w.Reason}, nil
}

// ignoredScore checks the score of an op that has none (delete, ban, unban, release): absent,
// null or an integer of an incr's range, which the op ignores.
func ignoredScore(raw json.RawMessage) error {
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && string(raw) != "null" {
		if _, err := signedInt("score", raw, 2*board.MaxScore); err != nil {
			return err
		}
	}
	return nil
}

// signedInt reads a required JSON integer in [-limit, limit] written plainly: an optional
// minus and digits, no fraction or exponent (the JSON grammar already forbids leading zeros).
func signedInt(field string, raw json.RawMessage, limit int64) (int64, error) {
	raw = bytes.TrimSpace(raw)
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	switch {
	case len(raw) == 0:
		return 0, invalid("%s: missing", field)
	case string(raw) == "null":
		return 0, invalid("%s: null, want an integer", field)
	case len(digits) == 0 || digits[0] < '0' || digits[0] > '9':
		return 0, invalid("%s: %s, want an integer", field, shorten(string(raw), 32))
	case bytes.ContainsAny(digits, ".eE"):
		return 0, invalid("%s: %s is not an integer", field, shorten(string(raw), 32))
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > limit || n < -limit {
		return 0, invalid("%s: %s is outside [-%d, %d]", field, shorten(string(raw), 32), limit, limit)
	}
	return n, nil
}

// ScoreOpBoard returns the board of boards (by name) that o names (not AllBoards), or why the
// scores processor refuses o whatever the member's state: its board is not declared, or, unless
// o is an operator's op, its ts is older
// than the board's retention before recordTime (the Kafka record's timestamp), or the board's
// only period is season and no season holds its ts. The scores processor dead-letters such an
// op; the write gateway refuses it with 400. What depends on the member's state (an incr
// leaving the range, a ts older than the ids the member forgot) only the processor can tell.
func ScoreOpBoard(o *ScoreOp, boards map[string]*board.Board, recordTime time.Time) (*board.Board, error) {
	b, ok := boards[o.Board]
	switch {
	case !ok:
		return nil, invalid("board: %q is not declared in the boards file", o.Board)
	case IsOperatorOp(o.Op): // acts on the member whatever its ts: no period, no retention
		return b, nil
	case len(b.Periods) == 1 && b.Periods[0] == board.PeriodSeason:
		if _, ok := b.Window(board.PeriodSeason, o.TS.Time); !ok {
			return nil, invalid("ts: %s is in no season of board %q", formatTime(o.TS.Time), b.Name)
		}
	}
	if o.TS.Millis() < recordTime.UnixMilli()-b.Retention.Milliseconds() {
		return nil, invalid("ts: %s is older than the board's retention (%s on board %q)", formatTime(o.TS.Time), b.Retention, b.Name)
	}
	return b, nil
}

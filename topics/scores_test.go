package topics

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rankstream/rankstream/board"
)

func TestDecodeScoreOp(t *testing.T) {
	rec := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	good := `{"request_id":"r1","board":"arena","member":"m1","op":"set","score":1234,"ts":"2026-11-30T19:59:00+08:00","scope":"eu"}`
	with := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	op := func(fields string) string {
		return `{"request_id":"r1","member":"m1","ts":"2026-11-30T19:59:00+08:00",` + fields + `}`
	}
	tests := []struct {
		name   string
		key    string
		value  string
		want   ScoreOp // checked when reason is ""
		reason string  // "" = valid
	}{
		{"valid set", "m1", good, ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Score: 1234, Scope: "eu"}, ""},
		{"valid incr, negative", "m1", with(`"set","score":1234`, `"incr","score":-7`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "incr", Score: -7, Scope: "eu"}, ""},
		{"valid delete without score", "m1", with(`"set","score":1234`, `"delete"`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "delete", Scope: "eu"}, ""},
		{"delete ignores its score", "m1", with(`"set","score":1234`, `"delete","score":5`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "delete", Scope: "eu"}, ""},
		{"delete with a null score", "m1", with(`"set","score":1234`, `"delete","score":null`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "delete", Scope: "eu"}, ""},
		{"no scope", "m1", with(`,"scope":"eu"`, ``), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Score: 1234}, ""},
		{"epoch millis", "m1", with(`"2026-11-30T19:59:00+08:00"`, `1796039940000`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Score: 1234, Scope: "eu"}, ""},
		{"set at the top of the range", "m1", with("1234", "140737488355328"), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Score: board.MaxScore, Scope: "eu"}, ""},
		{"set at the bottom of the range", "m1", with("1234", "-140737488355328"), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Score: -board.MaxScore, Scope: "eu"}, ""},
		{"set above the range", "m1", with("1234", "140737488355329"), ScoreOp{}, "score: 140737488355329 is outside [-140737488355328, 140737488355328]"},
		{"set below the range", "m1", with("1234", "-140737488355329"), ScoreOp{}, "is outside"},
		{"incr of twice the range", "m1", with(`"set","score":1234`, `"incr","score":-281474976710656`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "incr", Score: -2 * board.MaxScore, Scope: "eu"}, ""},
		{"incr beyond twice the range", "m1", with(`"set","score":1234`, `"incr","score":281474976710657`), ScoreOp{}, "is outside [-281474976710656"},
		{"score over int64", "m1", with("1234", "9223372036854775808"), ScoreOp{}, "is outside"},
		{"negative zero is zero", "m1", with("1234", "-0"), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Scope: "eu"}, ""},
		{"fractional score", "m1", with("1234", "12.5"), ScoreOp{}, "score: 12.5 is not an integer"},
		{"score with a fraction of zero", "m1", with("1234", "1234.0"), ScoreOp{}, "is not an integer"},
		{"score with an exponent", "m1", with("1234", "1e3"), ScoreOp{}, "score: 1e3 is not an integer"},
		{"negative exponent", "m1", with("1234", "-1E3"), ScoreOp{}, "is not an integer"},
		{"score as a string", "m1", with("1234", `"1234"`), ScoreOp{}, `score: "1234", want an integer`},
		{"score as a bool", "m1", with("1234", "true"), ScoreOp{}, "score: true, want an integer"},
		{"score as an object", "m1", with("1234", `{"n":1}`), ScoreOp{}, "want an integer"},
		{"missing score", "m1", with(`"score":1234,`, ""), ScoreOp{}, "score: missing"},
		{"null score", "m1", with("1234", "null"), ScoreOp{}, "score: null"},
		{"delete with a bad score", "m1", with(`"set","score":1234`, `"delete","score":"x"`), ScoreOp{}, "score:"},
		{"leading zero", "m1", with("1234", "01234"), ScoreOp{}, "json:"},
		{"unknown op", "m1", with(`"set"`, `"freeze"`), ScoreOp{}, `op: unknown "freeze", want set, incr, delete, ban, unban or release`},
		{"ban of every board", "m1", op(`"board":"*","op":"ban","by":"alice","reason":"spikes"`), ScoreOp{RequestID: "r1", Board: "*", Member: "m1", Op: "ban", By: "alice", Reason: "spikes"}, ""},
		{"unban without a reason", "m1", op(`"board":"arena","op":"unban","by":"ops-bot"`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "unban", By: "ops-bot"}, ""},
		{"release", "m1", op(`"board":"arena","op":"release","by":"alice","reason":"checked: a real run"`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "release", By: "alice", Reason: "checked: a real run"}, ""},
		{"ban without by", "m1", op(`"board":"arena","op":"ban","reason":"x"`), ScoreOp{}, "by: missing"},
		{"ban by a name with a space", "m1", op(`"board":"arena","op":"ban","by":"a b"`), ScoreOp{}, "by: contains U+0020"},
		{"ban ignores its score", "m1", op(`"board":"arena","op":"ban","by":"a","score":0`), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "ban", By: "a"}, ""},
		{"ban with a fractional score", "m1", op(`"board":"arena","op":"ban","by":"a","score":0.5`), ScoreOp{}, "score: 0.5 is not an integer"},
		{"ban with a scope", "m1", op(`"board":"arena","op":"ban","by":"a","scope":"eu"`), ScoreOp{}, "scope: an op ban carries no scope"},
		{"ban reason too long", "m1", op(`"board":"arena","op":"ban","by":"a","reason":"` + strings.Repeat("x", 513) + `"`), ScoreOp{}, "reason: 513 bytes, longer than 512"},
		{"ban reason with a control character", "m1", op(`"board":"arena","op":"ban","by":"a","reason":"x\u0007"`), ScoreOp{}, "reason: contains the control"},
		{"every board for a set", "m1", with(`"board":"arena"`, `"board":"*"`), ScoreOp{}, `board: "*" is not`},
		{"by on a set", "m1", with(`"scope":"eu"`, `"scope":"eu","by":"alice"`), ScoreOp{}, "by, reason: only ban, unban and release carry them"},
		{"op in capitals", "m1", with(`"set"`, `"SET"`), ScoreOp{}, "op: unknown"},
		{"missing op", "m1", with(`"op":"set",`, ""), ScoreOp{}, "op: missing"},
		{"op as a number", "m1", with(`"set"`, `1`), ScoreOp{}, "json:"},
		{"missing board", "m1", with(`"board":"arena",`, ""), ScoreOp{}, "board: missing"},
		{"board in capitals", "m1", with("arena", "Arena"), ScoreOp{}, `board: "Arena" is not`},
		{"board with a colon", "m1", with("arena", "a:b"), ScoreOp{}, "board:"},
		{"board of 65 bytes", "m1", with("arena", strings.Repeat("a", 65)), ScoreOp{}, "board:"},
		{"missing request id", "m1", with(`"request_id":"r1",`, ""), ScoreOp{}, "request_id: missing"},
		{"request id with a space", "m1", with(`"r1"`, `"r 1"`), ScoreOp{}, "request_id: contains U+0020"},
		{"request id of 129 bytes", "m1", with(`"r1"`, `"`+strings.Repeat("r", 129)+`"`), ScoreOp{}, "request_id: 129 bytes"},
		{"lone surrogate in request id", "m1", with(`"r1"`, `"r\udc001"`), ScoreOp{}, "request_id: contains U+FFFD"},
		{"missing member", "m1", with(`"member":"m1",`, ""), ScoreOp{}, "member: missing"},
		{"member with a colon", "m:1", with(`"m1"`, `"m:1"`), ScoreOp{}, "member: contains U+003A"},
		{"zero-width space in member", "m\u200b1", with(`"m1"`, "\"m\u200b1\""), ScoreOp{}, "member: contains U+200B"},
		{"key does not match", "m2", good, ScoreOp{}, `key "m2" does not match member "m1"`},
		{"duplicate member, the last wins", "m2", with(`{`, `{"member":"m2",`), ScoreOp{}, "does not match"},
		{"invalid UTF-8 in the key", "m\xff", good, ScoreOp{}, "key: not valid UTF-8"},
		{"missing ts", "m1", with(`"ts":"2026-11-30T19:59:00+08:00",`, ""), ScoreOp{}, "ts: missing"},
		{"null ts", "m1", with(`"2026-11-30T19:59:00+08:00"`, "null"), ScoreOp{}, "ts: missing"},
		{"ts without offset", "m1", with("+08:00", ""), ScoreOp{}, "json:"},
		{"ts as a float", "m1", with(`"2026-11-30T19:59:00+08:00"`, "1796040000000.0"), ScoreOp{}, "json:"},
		{"ts too far in the future", "m1", with("19:59:00+08:00", "20:06:00+08:00"), ScoreOp{}, "after the record time"},
		{"ts within the skew", "m1", with("19:59:00+08:00", "20:04:00+08:00"), ScoreOp{RequestID: "r1", Board: "arena", Member: "m1", Op: "set", Score: 1234, Scope: "eu"}, ""},
		{"ts older than any board keeps", "m1", with("2026-11-30T19", "2016-11-01T19"), ScoreOp{}, "older than the retention"},
		{"ts far in the past as ms", "m1", with(`"2026-11-30T19:59:00+08:00"`, "-9223372036854775808"), ScoreOp{}, "is outside 1970-01-01"},
		{"ts before 1970", "m1", with(`"2026-11-30T19:59:00+08:00"`, "-1"), ScoreOp{}, "ts: 1969-12-31T23:59:59Z is outside 1970-01-01"},
		{"ts after year 10889", "m1", with(`"2026-11-30T19:59:00+08:00"`, "281474976710656"), ScoreOp{}, "is outside 1970-01-01"},
		{"scope global", "m1", with(`"eu"`, `"global"`), ScoreOp{}, `scope: "global" names the global board`},
		{"scope with a space", "m1", with(`"eu"`, `"e u"`), ScoreOp{}, "scope: contains U+0020"},
		{"scope of 65 bytes", "m1", with(`"eu"`, `"`+strings.Repeat("e", 65)+`"`), ScoreOp{}, "scope: 65 bytes"},
		{"tombstone", "m1", "\x00null", ScoreOp{}, "tombstone"},
		{"empty value", "m1", "", ScoreOp{}, "json:"},
		{"not an object", "m1", `[1]`, ScoreOp{}, "json:"},
		{"1 MB value", "m1", `{"request_id":"` + strings.Repeat("x", 1_000_000) + `"}`, ScoreOp{}, "over the limit"},
		{"deeply nested unknown field", "m1", with(`{`, `{"x":`+strings.Repeat("[", 32)+strings.Repeat("]", 32)+`,`), ScoreOp{}, "nested deeper than 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := []byte(tt.value)
			if tt.value == "\x00null" {
				value = nil
			}
			op, err := DecodeScoreOp(tt.key, value, rec, DefaultScoreRules)
			if tt.reason != "" {
				requireInvalid(t, err, tt.reason)
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			tt.want.TS = op.TS // checked below
			if *op != tt.want {
				t.Fatalf("decoded %+v, want %+v", *op, tt.want)
			}
			if want := time.Date(2026, 11, 30, 11, 59, 0, 0, time.UTC); !op.TS.Equal(want) && !strings.Contains(tt.name, "skew") {
				t.Fatalf("ts %v, want %v", op.TS, want)
			}
		})
	}
}

func TestScoreOpBoundsAreMeasuredAgainstTheRecordTime(t *testing.T) {
	v := []byte(`{"request_id":"r","board":"b","member":"m","op":"incr","score":1,"ts":"2020-01-01T00:00:00Z"}`)
	rules := ScoreRules{MaxAge: 24 * time.Hour, FutureSkew: time.Minute}
	for _, tc := range []struct {
		rec time.Time
		ok  bool
	}{
		{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), true}, // exactly MaxAge old
		{time.Date(2020, 1, 2, 0, 0, 0, 1e6, time.UTC), false},
		{time.Date(2019, 12, 31, 23, 59, 0, 0, time.UTC), true}, // exactly the skew ahead
		{time.Date(2019, 12, 31, 23, 58, 59, 999e6, time.UTC), false},
	} {
		if _, err := DecodeScoreOp("m", v, tc.rec, rules); (err == nil) != tc.ok {
			t.Errorf("record time %v: err %v, want accepted %v", tc.rec, err, tc.ok)
		}
	}
}

// FuzzDecodeScoreOp: any record is either rejected with a reason or accepted with every field
// within the rules: ids valid without U+FFFD, control or format characters or ':', the key
// equal to member, a valid board name, a known op, a score in its range (0 for delete), ts
// within the bounds of the record time, scope valid and not "global".
func FuzzDecodeScoreOp(f *testing.F) {
	f.Add("m1", []byte(`{"request_id":"r1","board":"arena","member":"m1","op":"set","score":1234,"ts":"2026-11-30T19:59:00+08:00","scope":"eu"}`), int64(1796040000000))
	f.Add("m1", []byte(`{"request_id":"r1","board":"arena","member":"m1","op":"incr","score":-281474976710656,"ts":1796040000000}`), int64(1796040000000))
	f.Add("m1", []byte(`{"request_id":"r\udc00","board":"a","member":"m1","op":"delete","score":-0,"ts":1796040000000}`), int64(1796040000000))
	f.Add("m\xff", []byte("{\"request_id\":\"r\xff\",\"member\":\"m\xff\",\"score\":1e3}"), int64(0))
	f.Fuzz(func(t *testing.T, key string, value []byte, recordMs int64) {
		rec := time.UnixMilli(recordMs)
		op, err := DecodeScoreOp(key, value, rec, DefaultScoreRules)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason == "" {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		limit := board.MaxScore
		switch op.Op {
		case OpIncr:
			limit *= 2
		case OpDelete:
			limit = 0
		case OpSet:
		default:
			t.Fatalf("accepted op %q", op.Op)
		}
		if op.Member != key || !board.ValidName(op.Board) || op.Score > limit || op.Score < -limit || op.Scope == GlobalScope || op.TS.UnixMilli() < 0 || op.TS.UnixMilli() > MaxScoreTSMillis ||
			op.TS.Before(rec.Add(-DefaultScoreRules.MaxAge)) || op.TS.After(rec.Add(DefaultScoreRules.FutureSkew)) {
			t.Fatalf("accepted %+v from %q", op, value)
		}
		for _, s := range []string{op.RequestID, op.Member, op.Scope} {
			if !utf8.ValidString(s) || strings.ContainsFunc(s, func(c rune) bool {
				return c == utf8.RuneError || c == ':' || unicode.IsSpace(c) || unicode.In(c, unicode.Cc, unicode.Cf)
			}) {
				t.Fatalf("accepted the id %q from %q", s, value)
			}
		}
		if op.RequestID == "" || op.Member == "" {
			t.Fatalf("accepted %+v without ids", op)
		}
	})
}

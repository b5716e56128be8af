package topics

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecodeFriendOp(t *testing.T) {
	rec := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	good := `{"user_id":"u1","friend_id":"u2","op":"add","ts":"2026-11-30T19:59:00+08:00"}`
	with := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	for _, tc := range []struct {
		name, key, value string
		reason           string // "" = valid
	}{
		{"valid add", "u1", good, ""},
		{"valid remove, epoch millis", "u1", with(`"add","ts":"2026-11-30T19:59:00+08:00"`, `"remove","ts":1796039940000`), ""},
		{"key differs from user_id", "u2", good, `key "u2" does not match user_id "u1"`},
		{"friend is the user", "u1", with(`"u2"`, `"u1"`), "is the user itself"},
		{"missing friend", "u1", with(`"friend_id":"u2",`, ""), "friend_id: missing"},
		{"friend with a colon", "u1", with(`"u2"`, `"u:2"`), "friend_id: contains U+003A"},
		{"friend of 129 bytes", "u1", with(`"u2"`, `"`+strings.Repeat("f", 129)+`"`), "friend_id: 129 bytes"},
		{"missing user", "u1", with(`"user_id":"u1",`, ""), "user_id: missing"},
		{"unknown op", "u1", with(`"add"`, `"block"`), `op: unknown "block", want add or remove`},
		{"missing op", "u1", with(`"op":"add",`, ""), "op: missing"},
		{"missing ts", "u1", with(`,"ts":"2026-11-30T19:59:00+08:00"`, ""), "ts: missing"},
		{"ts too old", "u1", with("2026-11-30T19:59:00+08:00", "2026-11-20T00:00:00Z"), "older than the retention"},
		{"ts too far ahead", "u1", with("2026-11-30T19:59:00+08:00", "2026-11-30T12:06:00Z"), "after the record time"},
		{"negative ts", "u1", with(`"2026-11-30T19:59:00+08:00"`, "-1"), "outside 1970-01-01"},
		{"ts as a bool", "u1", with(`"2026-11-30T19:59:00+08:00"`, "true"), "json:"},
		{"not JSON", "u1", "add u2", "json:"},
		{"a NUL byte", "u1", "\x00", "json:"},
		{"invalid UTF-8", "u1", "\xff", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := DecodeFriendOp(tc.key, []byte(tc.value), rec, DefaultFriendRules)
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.UserID != "u1" || o.FriendID != "u2" || o.TS.UnixMilli() != 1796039940000 {
					t.Fatalf("decoded %+v", o)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %v, want one saying %q", err, tc.reason)
			}
		})
	}
	if _, err := DecodeFriendOp("u1", nil, rec, DefaultFriendRules); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a null value: %v", err)
	}
}

func TestFriendLoopRecordRoundTrips(t *testing.T) {
	for _, r := range []FriendLoopRecord{
		{Kind: FriendMirror, Add: true, TSMs: 1796039940000, Friend: "u2"},
		{Kind: FriendReply, TSMs: 0, Friend: strings.Repeat("é", 64)},
		{Kind: FriendReply, Add: true, TSMs: MaxFriendTSMillis, Friend: "x"},
	} {
		got, err := DecodeFriendLoopRecord(r.Encode())
		if err != nil || got != r {
			t.Fatalf("%+v decoded as %+v, %v", r, got, err)
		}
	}
	good := FriendLoopRecord{Kind: FriendMirror, Add: true, TSMs: 5, Friend: "u2"}.Encode()
	for name, b := range map[string][]byte{
		"empty":        nil,
		"no friend":    good[:10],
		"unknown kind": append([]byte{3}, good[1:]...),
		"add of 2":     append([]byte{1, 2}, good[2:]...),
		"bad friend":   append(append([]byte{}, good[:10]...), "u 2"...),
		"negative ts":  append([]byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "u2"...),
	} {
		if _, err := DecodeFriendLoopRecord(b); !errors.Is(err, ErrBadFriendLoopRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

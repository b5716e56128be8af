package api

import (
	"testing"
	"time"
)

func TestParseHistoryQuery(t *testing.T) {
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		raw    string
		want   historyQuery
		reason string // a prefix of the 400's reason; "" for none
	}{
		{"at=2026-11-30T08:00:00Z", historyQuery{at, 10}, ""},
		{"at=2026-11-30T09:00:00%2B01:00&k=3", historyQuery{at, 3}, ""},
		{"at=2026-11-30T08:00:00Z&k=100", historyQuery{at, 100}, ""},
		{"at=2026-11-30T08:00:00Z&k=101", historyQuery{at, MaxHistoryK}, ""},
		{"at=2026-11-30T08:00:00Z&k=99999999999999999999999", historyQuery{at, MaxHistoryK}, ""},
		{"at=2026-11-30T08:00:00Z&k=", historyQuery{at, 10}, ""},
		{"", historyQuery{}, "at: required"},
		{"k=3", historyQuery{}, "at: required"},
		{"at=yesterday", historyQuery{}, `at: "yesterday" is not`},
		{"at=2026-11-30T08:00:00", historyQuery{}, "at: "},
		{"at=2026-11-30T08:00:00Z&at=2026-11-30T08:00:00Z", historyQuery{}, "at: given more than once"},
		{"at=2026-11-30T08:00:00Z&k=0", historyQuery{}, `k: "0"`},
		{"at=2026-11-30T08:00:00Z&k=-1", historyQuery{}, `k: "-1"`},
		{"at=2026-11-30T08:00:00Z&k=%2B1", historyQuery{}, `k: "+1"`},
		{"at=2026-11-30T08:00:00Z&k=1&k=2", historyQuery{}, "k: given more than once"},
		{"at=%zz", historyQuery{}, "query string: "},
	} {
		got, reason := parseHistoryQuery(tc.raw)
		if tc.reason == "" && (reason != "" || !got.At.Equal(tc.want.At) || got.K != tc.want.K) {
			t.Errorf("%q: got %+v %q, want %+v", tc.raw, got, reason, tc.want)
		}
		if tc.reason != "" && (len(reason) < len(tc.reason) || reason[:len(tc.reason)] != tc.reason) {
			t.Errorf("%q: reason %q, want it to start with %q", tc.raw, reason, tc.reason)
		}
	}
}

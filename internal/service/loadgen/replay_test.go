package loadgen

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

func TestReplay(t *testing.T) {
	in := "2026-11-30T08:00:00+08:00\tWeather  Today\r\n" +
		"\n" +
		"1796040000123\tsnow\tstorm\n" +
		"2026-11-30T00:00:01.5Z\t\n"
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewReplay(strings.NewReader(in))
	want := []struct {
		key, query string
		ts         int64
	}{
		{"1", "Weather  Today", 1795996800000},
		{"3", "snow\tstorm", 1796040000123},
		{"4", "", 1795996801500},
	}
	for i, w := range want {
		recs := p.Next(now)
		if len(recs) != 1 {
			t.Fatalf("record %d: got %d records (err %v)", i, len(recs), p.Err())
		}
		var q topics.SearchQuery
		if err := json.Unmarshal(recs[0].Value, &q); err != nil {
			t.Fatal(err)
		}
		if recs[0].Key != w.key || q.Query != w.query || q.TS.Millis() != w.ts || q.UserID != "" || !recs[0].Time.Equal(time.UnixMilli(w.ts)) {
			t.Errorf("record %d: key %q, %+v at %s; want key %q query %q ts %d", i, recs[0].Key, q, recs[0].Time, w.key, w.query, w.ts)
		}
	}
	if recs := p.Next(now); len(recs) != 0 || p.Err() != nil {
		t.Fatalf("after the last line: %d records, err %v", len(recs), p.Err())
	}
}

func TestReplayStopsAtAMalformedLine(t *testing.T) {
	for name, tt := range map[string]struct{ in, says string }{
		"no tab":         {"1796040000000\tok\n1796040000000 weather\n", "line 2: no tab"},
		"bad time":       {"yesterday\tweather\n", "line 1: time \"yesterday\""},
		"time no offset": {"2026-11-30T08:00:00\tweather\n", "neither RFC 3339"},
		"line too long":  {"1\t" + strings.Repeat("x", maxReplayLine) + "\n", "after line 0"},
	} {
		p := NewReplay(strings.NewReader(tt.in))
		n := 0
		for len(p.Next(time.Now())) == 1 {
			n++
		}
		if p.Err() == nil || !strings.Contains(p.Err().Error(), tt.says) {
			t.Errorf("%s: err %v after %d records, want one saying %q", name, p.Err(), n, tt.says)
		}
		if len(p.Next(time.Now())) != 0 {
			t.Errorf("%s: records after the error", name)
		}
	}
}

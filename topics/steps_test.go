package topics

import (
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	fastjson "github.com/segmentio/encoding/json"
)

func TestDecodeStepReport(t *testing.T) {
	rec := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	good := `{"request_id":"r1","user_id":"u1","device_id":"d1","steps":1234,"ts":"2026-11-30T19:59:00+08:00","tz":"Asia/Shanghai","region":"cn-east"}`
	tests := []struct {
		name   string
		key    string
		value  string
		reason string // "" = valid
	}{
		{"valid RFC 3339", "u1", good, ""},
		{"valid epoch millis", "u1", `{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`, ""},
		{"zero steps", "u1", `{"request_id":"r1","user_id":"u1","steps":0,"ts":1796040000000,"tz":"UTC"}`, ""},
		{"malformed JSON", "u1", `{"request_id":`, "json:"},
		{"not an object", "u1", `[1,2]`, "json:"},
		{"negative steps", "u1", strings.Replace(good, "1234", "-5", 1), "steps: negative"},
		{"absurd steps", "u1", strings.Replace(good, "1234", "999999999", 1), "plausible maximum"},
		{"fractional steps", "u1", strings.Replace(good, "1234", "12.5", 1), "json:"},
		{"unknown zone", "u1", strings.Replace(good, "Asia/Shanghai", "Mars/Olympus", 1), "tz: unknown zone"},
		{"Local zone", "u1", strings.Replace(good, "Asia/Shanghai", "Local", 1), "tz: unknown zone"},
		{"missing zone", "u1", strings.Replace(good, `"tz":"Asia/Shanghai",`, "", 1), "tz: missing"},
		{"missing request id", "u1", strings.Replace(good, `"request_id":"r1",`, "", 1), "request_id: missing"},
		{"missing user id", "u1", strings.Replace(good, `"user_id":"u1",`, "", 1), "user_id: missing"},
		{"key does not match", "u2", good, "does not match"},
		{"user id with a colon", "u:1", strings.Replace(good, `"u1"`, `"u:1"`, 1), "user_id: contains"},
		{"region with a space", "u1", strings.Replace(good, "cn-east", "cn east", 1), "region: contains"},
		{"missing ts", "u1", strings.Replace(good, `"ts":"2026-11-30T19:59:00+08:00",`, "", 1), "ts: missing"},
		{"ts without offset", "u1", strings.Replace(good, "+08:00", "", 1), "json:"},
		{"ts older than retention", "u1", strings.Replace(good, "2026-11-30T19", "2026-11-22T19", 1), "older than the retention"},
		{"ts too far in the future", "u1", strings.Replace(good, "19:59:00+08:00", "20:06:00+08:00", 1), "after the record time"},
		{"ts within the skew", "u1", strings.Replace(good, "19:59:00+08:00", "20:04:00+08:00", 1), ""},
		{"1 MB value", "u1", `{"request_id":"` + strings.Repeat("x", 1_000_000) + `"}`, "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, loc, err := DecodeStepReport(tt.key, []byte(tt.value), rec, DefaultStepRules)
			if tt.reason == "" {
				if err != nil || r == nil || loc == nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			requireInvalid(t, err, tt.reason)
		})
	}
}

func TestRetentionIsMeasuredAgainstTheRecordTime(t *testing.T) {
	v := []byte(`{"request_id":"r","user_id":"u","steps":1,"ts":"2020-01-01T00:00:00Z","tz":"UTC"}`)
	// A replay years later decides as the first run did: only the record time matters.
	if _, _, err := DecodeStepReport("u", v, time.Date(2020, 1, 1, 0, 1, 0, 0, time.UTC), DefaultStepRules); err != nil {
		t.Fatalf("fresh record rejected: %v", err)
	}
	if _, _, err := DecodeStepReport("u", v, time.Date(2020, 1, 8, 0, 0, 1, 0, time.UTC), DefaultStepRules); err == nil {
		t.Fatal("record older than the retention accepted")
	}
}

func TestTimestampJSON(t *testing.T) {
	var ts Timestamp
	for _, in := range []string{`"2026-11-30T08:00:00+08:00"`, `1795996800000`, `"2026-11-30T00:00:00Z"`} {
		if err := ts.UnmarshalJSON([]byte(in)); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if ts.Millis() != 1795996800000 {
			t.Fatalf("%s = %d", in, ts.Millis())
		}
		out, _ := ts.MarshalJSON()
		if string(out) != "1795996800000" {
			t.Fatalf("marshal = %s", out)
		}
	}
	for _, in := range []string{`"yesterday"`, `1.5`, `"2026-11-30T08:00:00"`, `true`} {
		if err := ts.UnmarshalJSON([]byte(in)); err == nil {
			t.Fatalf("%s accepted", in)
		}
	}
}

// FuzzStepReportJSONMatchesStdlib: the fast JSON decoder accepts exactly what encoding/json
// accepts for a step report, with the same values.
func FuzzStepReportJSONMatchesStdlib(f *testing.F) {
	f.Add([]byte(`{"request_id":"r1","user_id":"u1","steps":1234,"ts":"2026-11-30T19:59:00+08:00","tz":"Asia/Shanghai"}`))
	f.Add([]byte(`{"request_id":"r\u0031","user_id":"u1","steps":1e3,"ts":1796040000000,"tz":"UTC","x":[1,{"y":null}]}`))
	f.Add([]byte(`{"steps":12.5}`))
	f.Add([]byte(`{"steps":"12"}`))
	f.Add([]byte(`{"request_id":"a","request_id":"b"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, std StepReport
		errFast := fastjson.Unmarshal(data, &fast)
		errStd := stdjson.Unmarshal(data, &std)
		if (errFast == nil) != (errStd == nil) {
			t.Fatalf("fast decoder err %v, encoding/json err %v, on %q", errFast, errStd, data)
		}
		if errStd == nil && !reflect.DeepEqual(fast, std) {
			t.Fatalf("fast %+v, encoding/json %+v, on %q", fast, std, data)
		}
	})
}

// requireInvalid fails unless err is an InvalidError whose reason contains reason.
func requireInvalid(t *testing.T, err error, reason string) {
	t.Helper()
	var ie *InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want an InvalidError", err)
	}
	if !strings.Contains(ie.Reason, reason) {
		t.Fatalf("reason %q does not say %q", ie.Reason, reason)
	}
}

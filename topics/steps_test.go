package topics

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

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
		{"fractional steps", "u1", strings.Replace(good, "1234", "12.5", 1), "steps: 12.5 is not an integer"},
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
		{"tombstone", "u1", "\x00null", "tombstone"},
		{"empty value", "u1", "", "json:"},
		{"missing steps", "u1", strings.Replace(good, `"steps":1234,`, "", 1), "steps: missing"},
		{"null steps", "u1", strings.Replace(good, "1234", "null", 1), "steps: null"},
		{"steps as a string", "u1", strings.Replace(good, "1234", `"1234"`, 1), `steps: "1234", want an integer`},
		{"steps as a bool", "u1", strings.Replace(good, "1234", "true", 1), "steps: true, want an integer"},
		{"steps as an object", "u1", strings.Replace(good, "1234", `{"n":1}`, 1), "want an integer"},
		{"steps with an exponent", "u1", strings.Replace(good, "1234", "1e3", 1), "steps: 1e3 is not an integer"},
		{"steps with a fraction of zero", "u1", strings.Replace(good, "1234", "1234.0", 1), "is not an integer"},
		{"negative zero steps", "u1", strings.Replace(good, "1234", "-0", 1), "steps: negative (-0)"},
		{"huge steps", "u1", strings.Replace(good, "1234", strings.Repeat("9", 400), 1), "over the plausible maximum"},
		{"steps over int64", "u1", strings.Replace(good, "1234", "9223372036854775808", 1), "over the plausible maximum"},
		{"leading zero", "u1", strings.Replace(good, "1234", "01234", 1), "json:"},
		{"ts far in the future as text", "u1", strings.Replace(good, "2026-11-30T19:59:00+08:00", "9999-12-31T23:59:59Z", 1), "after the record time"},
		{"ts far in the future as ms", "u1", strings.Replace(good, `"2026-11-30T19:59:00+08:00"`, "9223372036854775807", 1), "after the record time"},
		{"ts far in the past as ms", "u1", strings.Replace(good, `"2026-11-30T19:59:00+08:00"`, "-9223372036854775808", 1), "older than the retention"},
		{"ts at epoch 0", "u1", strings.Replace(good, `"2026-11-30T19:59:00+08:00"`, "0", 1), "older than the retention"},
		{"ts as a float", "u1", strings.Replace(good, `"2026-11-30T19:59:00+08:00"`, "1796040000000.0", 1), "json:"},
		{"null ts", "u1", strings.Replace(good, `"2026-11-30T19:59:00+08:00"`, "null", 1), "ts: missing"},
		{"invalid UTF-8 in request_id", "u1", strings.Replace(good, `"r1"`, "\"r\xff1\"", 1), "value: not valid UTF-8"},
		{"invalid UTF-8 in an unknown field", "u1", strings.Replace(good, `{`, "{\"x\":\"\xfe\",", 1), "value: not valid UTF-8"},
		{"lone surrogate in request_id", "u1", strings.Replace(good, `"r1"`, `"r\udc001"`, 1), "request_id: contains U+FFFD"},
		{"U+FFFD in user_id", "u\uFFFD", strings.ReplaceAll(good, `"u1"`, "\"u\uFFFD\""), "user_id: contains U+FFFD"},
		{"invalid UTF-8 in the key", "u\xff", good, "key: not valid UTF-8"},
		{"1 MB key", strings.Repeat("k", 1_000_000), good, "key: 1000000 bytes"},
		{"NUL in user_id", "u\x001", strings.ReplaceAll(good, `"u1"`, `"u\u00001"`), "user_id: contains U+0000"},
		{"bidi override in request_id", "u1", strings.Replace(good, `"r1"`, `"r\u202e1"`, 1), "request_id: contains U+202E"},
		{"zero-width space in user_id", "u\u200b1", strings.ReplaceAll(good, `"u1"`, "\"u\u200b1\""), "user_id: contains U+200B"},
		{"no-break space in device_id", "u1", strings.Replace(good, `"d1"`, `"d\u00a01"`, 1), "device_id: contains U+00A0"},
		{"C1 control in region", "u1", strings.Replace(good, "cn-east", `cn\u0080east`, 1), "region: contains U+0080"},
		{"NUL in tz", "u1", strings.Replace(good, "Asia/Shanghai", `UTC\u0000`, 1), "tz: unknown zone"},
		{"path in tz", "u1", strings.Replace(good, "Asia/Shanghai", `../../../etc/passwd`, 1), "tz: unknown zone"},
		{"byte order mark before the object", "u1", "\ufeff" + good, "json:"},
		{"duplicate user_id, the last wins", "u2", strings.Replace(good, `{`, `{"user_id":"u2",`, 1), "does not match"},
		{"nested unknown field", "u1", strings.Replace(good, `{`, `{"x":`+strings.Repeat("[", 31)+strings.Repeat("]", 31)+`,`, 1), ""},
		{"deeply nested unknown field", "u1", strings.Replace(good, `{`, `{"x":`+strings.Repeat("[", 32)+strings.Repeat("]", 32)+`,`, 1), "nested deeper than 32"},
		{"brackets inside strings do not nest", "u1", strings.Replace(good, `{`, `{"x":"\"`+strings.Repeat("[", 100)+`",`, 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := []byte(tt.value)
			if tt.value == "\x00null" {
				value = nil
			}
			r, loc, err := DecodeStepReport(tt.key, value, rec, DefaultStepRules)
			if tt.reason == "" {
				if err != nil || r.UserID == "" || loc == nil {
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

// FuzzStepReportJSONMatchesStdlib: within MaxJSONDepth (checked first), the fast JSON decoder
// accepts exactly what encoding/json accepts for a step report (its wire form, steps kept
// raw), with the same values.
func FuzzStepReportJSONMatchesStdlib(f *testing.F) {
	f.Add([]byte(`{"request_id":"r1","user_id":"u1","steps":1234,"ts":"2026-11-30T19:59:00+08:00","tz":"Asia/Shanghai"}`))
	f.Add([]byte(`{"request_id":"r\u0031","user_id":"u1","steps":1e3,"ts":1796040000000,"tz":"UTC","x":[1,{"y":null}]}`))
	f.Add([]byte(`{"steps":12.5}`))
	f.Add([]byte(`{"steps":"12"}`))
	f.Add([]byte(`{"request_id":"a","request_id":"b"}`))
	f.Add([]byte(`{"steps":null}`))
	f.Add([]byte(`{"steps": -0 }`))
	f.Add([]byte("{\"request_id\":\"r\\udc00\",\"user_id\":\"\xff\"}"))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"x":` + strings.Repeat("[", 15000) + strings.Repeat("]", 15000) + `}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !shallow(data, MaxJSONDepth) {
			return
		}
		var fast, std stepWire
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

// FuzzStepReportScanMatchesDecoder: DecodeStepReport (scanStepWire first) and the JSON
// decoder alone give every record the same report and zone, or the same reason.
func FuzzStepReportScanMatchesDecoder(f *testing.F) {
	good := `{"request_id":"r1","user_id":"u1","device_id":"d1","steps":1234,"ts":"2026-11-30T19:59:00+08:00","tz":"Asia/Shanghai","region":"cn-east"}`
	for _, v := range []string{good,
		`{"request_id":"r7-1a","user_id":"u1","device_id":"d-u1","steps":12345,"ts":1796040000000,"tz":"Asia/Shanghai","region":"cn-east"}`,
		" {\"request_id\" :\t\"r1\",\n\"user_id\":\"u1\" , \"steps\":0,\"ts\":-0,\"tz\":\"UTC\"}\r\n",
		`{}`, `{"steps":-5}`, `{"steps":01}`, `{"steps":1.5}`, `{"steps":1e3}`, `{"steps":"1"}`, `{"steps":null}`,
		`{"ts":9223372036854775808}`, `{"ts":"2026-11-30T19:59:00"}`, `{"ts":"0001-01-01T00:00:00Z"}`, `{"ts":null}`,
		`{"user_id":"u1","user_id":"u2"}`, `{"User_ID":"u1"}`, `{"user_id":"u\u0031"}`, `{"x":1}`, `{"region":"a"}x`,
		`{"region":"a",}`, `{"region" "a"}`, "{\"region\":\"a\x01\"}", "{\"region\":\"\u00e9\u2028\x7f\"}",
		// what the scan's checks decide (UTF-8 of the whole value, token bytes, the key, integers)
		"{\"request_id\":\"r1\",\"user_id\":\"u1\",\"steps\":1,\"ts\":1796040000000,\"tz\":\"UTC\",\"region\":\"e\xffu\"}",
		"{\"request_id\":\"r1\",\"user_id\":\"u1\",\"steps\":1,\"ts\":1796040000000,\"tz\":\"UTC\",\"region\":\"\xe6\x9d\xb1\"}",
		`{"request_id":"r:1","user_id":"u1","device_id":"d 1","steps":1,"ts":1796040000000,"tz":"UTC","region":"a\u007f"}`,
		`{"request_id":"` + strings.Repeat("r", 129) + `","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","device_id":"","steps":200000,"ts":1796040000000,"tz":"UTC","region":""}`,
		`{"request_id":"r1","user_id":"u1","steps":200001,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":-0,"ts":-1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1234567890123456789,"ts":1796040000000123456,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":123456789012345678,"ts":-9223372036854775808,"tz":"UTC"}`,
	} {
		f.Add("u1", []byte(v), int64(1796040000000))
	}
	long := strings.Repeat("u", 129)
	f.Add(long, []byte(`{"request_id":"r1","user_id":"`+long+`","steps":1,"ts":1796040000000,"tz":"UTC"}`), int64(1796040000000))
	f.Add("u\xff", []byte("{\"request_id\":\"r1\",\"user_id\":\"u\xff\",\"steps\":1,\"ts\":1796040000000,\"tz\":\"UTC\"}"), int64(1796040000000))
	f.Add("u2", []byte(`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`), int64(1796040000000))
	f.Fuzz(func(t *testing.T, key string, value []byte, recordMs int64) {
		rec := time.UnixMilli(recordMs)
		r1, loc1, err1 := decodeStepReport(key, value, rec, DefaultStepRules, true)
		r2, loc2, err2 := decodeStepReport(key, value, rec, DefaultStepRules, false)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(r1, r2) || loc1 != loc2 {
			t.Fatalf("on %q (key %q): with the scan %+v %v %v, without %+v %v %v", value, key, r1, loc1, err1, r2, loc2, err2)
		}
	})
}

// TestScanStepWireTakesTheCommonShapes: the reports producers send (loadgen's, the contract's
// examples, with white space) decode without the JSON decoder.
func TestScanStepWireTakesTheCommonShapes(t *testing.T) {
	for _, v := range []string{
		`{"request_id":"r7-1a","user_id":"u1","device_id":"d-u1","steps":12345,"ts":1796040000000,"tz":"Asia/Shanghai","region":"cn-east"}`,
		`{"request_id":"r1","user_id":"u1","steps":0,"ts":"2026-11-30T19:59:00.123+08:00","tz":"UTC"}`,
		"{ \"request_id\": \"r1\",\n  \"user_id\": \"用户\",\n  \"steps\": 7,\n  \"ts\": \"2026-11-30T19:59:00Z\",\n  \"tz\": \"UTC\"\n}\n",
	} {
		var w stepWire
		var o flatObject
		if !scanStepWire([]byte(v), &o, &w) {
			t.Errorf("scanStepWire gave up on %s", v)
		}
	}
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

// FuzzDecodeStepReport: any record is either rejected with a reason or accepted with every
// field within the rules: ids valid UTF-8 without U+FFFD or control characters, the key equal
// to user_id, steps in [0, MaxSteps], ts within retention and skew of the record time.
func FuzzDecodeStepReport(f *testing.F) {
	f.Add("u1", []byte(`{"request_id":"r1","user_id":"u1","device_id":"d1","steps":1234,"ts":"2026-11-30T19:59:00+08:00","tz":"Asia/Shanghai","region":"cn-east"}`), int64(1796040000000))
	f.Add("u1", []byte(`{"request_id":"r\udc00","user_id":"u1","steps":-0,"ts":1796040000000,"tz":"UTC"}`), int64(1796040000000))
	f.Add("u1", []byte(`{"request_id":"r","user_id":"u1","steps":null,"ts":253402300799000,"tz":"UTC"}`), int64(253402300799000))
	f.Add("u\xff", []byte("{\"request_id\":\"r\xff\",\"user_id\":\"u\xff\",\"steps\":1e3}"), int64(0))
	f.Fuzz(func(t *testing.T, key string, value []byte, recordMs int64) {
		rec := time.UnixMilli(recordMs)
		r, loc, err := DecodeStepReport(key, value, rec, DefaultStepRules)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason == "" {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		if loc == nil || r.UserID != key || r.Steps < 0 || r.Steps > DefaultStepRules.MaxSteps ||
			r.TS.Before(rec.Add(-DefaultStepRules.Retention)) || r.TS.After(rec.Add(DefaultStepRules.FutureSkew)) {
			t.Fatalf("accepted %+v from %q", r, value)
		}
		for _, s := range []string{r.RequestID, r.UserID, r.DeviceID, r.Region} {
			if !utf8.ValidString(s) || strings.ContainsFunc(s, func(c rune) bool {
				return c == utf8.RuneError || c == ':' || unicode.IsSpace(c) || unicode.In(c, unicode.Cc, unicode.Cf)
			}) {
				t.Fatalf("accepted the id %q from %q", s, value)
			}
		}
	})
}

// FuzzTimestamp: an event time in any text never panics the parsers; one that parses is
// written as epoch milliseconds that read back to the same millisecond.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{`"2026-11-30T08:00:00+08:00"`, `1795996800000`, `-9223372036854775808`, `"9999-12-31T23:59:59.999999999Z"`, `null`, `1e3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseTime(s)
		var ts Timestamp
		if err := ts.UnmarshalJSON([]byte(s)); err != nil || ts.IsZero() {
			return
		}
		out, err := ts.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Timestamp
		if err := back.UnmarshalJSON(out); err != nil || back.Millis() != ts.Millis() {
			t.Fatalf("%s → %s → %d (%v), want %d", s, out, back.Millis(), err, ts.Millis())
		}
	})
}

// FuzzSmallIntMatchesParseInt: what smallInt reads (the scan's and count's shortcut) is what
// strconv.ParseInt reads.
func FuzzSmallIntMatchesParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "007", "123456789012345678", "-123456789012345678", "1234567890123456789", "-", "", "1-", "+1", "1e3", "９"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := smallInt(s)
		if !ok {
			return
		}
		if want, err := strconv.ParseInt(s, 10, 64); err != nil || n != want {
			t.Fatalf("smallInt(%q) = %d, ParseInt: %d, %v", s, n, want, err)
		}
		if nb, okb := smallInt([]byte(s)); !okb || nb != n {
			t.Fatalf("smallInt of the bytes of %q = %d, %v", s, nb, okb)
		}
	})
}

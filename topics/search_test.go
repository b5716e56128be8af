package topics

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// searchRecordTime is the record time of the test queries: 1796040000000 ms.
var searchRecordTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestDecodeSearchQuery(t *testing.T) {
	long := strings.Repeat("a", MaxQueryBytes)
	tests := []struct {
		name   string
		value  string
		term   string // the normalised query when valid
		reason string // "" = valid
	}{
		{"valid RFC 3339", `{"query":"weather","ts":"2026-11-30T08:00:00+08:00","user_id":"u1"}`, "weather", ""},
		{"valid epoch millis, no user", `{"query":"weather","ts":1796040000000}`, "weather", ""},
		{"normalised", `{"query":"  Snow \t STORM\n","ts":1796040000000}`, "snow storm", ""},
		{"case folding", `{"query":"STRASSE Straße","ts":1796040000000}`, "strasse strasse", ""},
		{"256 bytes", `{"query":"` + long + `","ts":1796040000000}`, long, ""},
		{"256 bytes after collapsing spaces", `{"query":"  ` + long[:100] + `     ` + long[:155] + ` ","ts":1796040000000}`, long[:100] + " " + long[:155], ""},
		{"257 bytes", `{"query":"` + long + `b","ts":1796040000000}`, "", "over the limit of 256"},
		{"grows over 256 bytes by folding", `{"query":"` + strings.Repeat("\u0390", 50) + `","ts":1796040000000}`, "", "300 bytes after normalisation"},
		{"missing query", `{"ts":1796040000000}`, "", "query: missing"},
		{"only white space", `{"query":" \t\u00a0 ","ts":1796040000000}`, "", "empty after normalisation"},
		{"invalid UTF-8 bytes", "{\"query\":\"a\xffb\",\"ts\":1796040000000}", "", "not valid UTF-8"},
		{"lone surrogate escape", `{"query":"a\udc00b","ts":1796040000000}`, "", "U+FFFD"},
		{"missing ts", `{"query":"weather"}`, "", "ts: missing"},
		{"null ts", `{"query":"weather","ts":null}`, "", "ts: missing"},
		{"ts without offset", `{"query":"weather","ts":"2026-11-30T08:00:00"}`, "", "json:"},
		{"query not a string", `{"query":42,"ts":1796040000000}`, "", "json:"},
		{"not an object", `["weather"]`, "", "json:"},
		{"oversized value", `{"query":"` + strings.Repeat("x", MaxValueBytes) + `"}`, "", "over the limit of 65536"},
		{"tombstone", "\x00null", "", "tombstone"},
		{"empty value", "", "", "json:"},
		{"ts far in the future as text", `{"query":"x","ts":"9999-12-31T23:59:59Z"}`, "", "after the record time"},
		{"ts far in the future as ms", `{"query":"x","ts":253402300799000}`, "", "after the record time"},
		{"ts at the largest ms", `{"query":"x","ts":9223372036854775807}`, "", "after the record time"},
		{"ts 6 minutes ahead", `{"query":"x","ts":1796040360000}`, "", "after the record time"},
		{"ts 5 minutes ahead", `{"query":"x","ts":1796040300000}`, "x", ""},
		{"ts far in the past as text", `{"query":"x","ts":"0001-01-02T00:00:00Z"}`, "", "older than the retention"},
		{"ts at epoch 0", `{"query":"x","ts":0}`, "", "older than the retention"},
		{"ts at the smallest ms", `{"query":"x","ts":-9223372036854775808}`, "", "older than the retention"},
		{"ts 15 days old", `{"query":"x","ts":1794744000000}`, "", "older than the retention"},
		{"ts 13 days old", `{"query":"x","ts":1794916800000}`, "x", ""},
		{"ts as a float", `{"query":"x","ts":1796040000000.5}`, "", "json:"},
		{"ts with an exponent", `{"query":"x","ts":1.79604e12}`, "", "json:"},
		{"ts as a string of digits", `{"query":"x","ts":"1796040000000"}`, "", "json:"},
		{"ts as an object", `{"query":"x","ts":{}}`, "", "json:"},
		{"NUL", `{"query":"a\u0000b","ts":1796040000000}`, "", "U+0000"},
		{"escape character", `{"query":"a\u001bb","ts":1796040000000}`, "", "U+001B"},
		{"C1 control", `{"query":"a\u0080b","ts":1796040000000}`, "", "U+0080"},
		{"next line is white space", `{"query":"a\u0085b","ts":1796040000000}`, "a b", ""},
		{"right-to-left override", `{"query":"a\u202eb","ts":1796040000000}`, "", "U+202E"},
		{"bidi isolate", `{"query":"a\u2066b","ts":1796040000000}`, "", "U+2066"},
		{"zero-width space", `{"query":"a\u200bb","ts":1796040000000}`, "", "U+200B"},
		{"byte order mark inside", `{"query":"a\ufeffb","ts":1796040000000}`, "", "U+FEFF"},
		{"soft hyphen", `{"query":"a\u00adb","ts":1796040000000}`, "", "U+00AD"},
		{"zero-width joiner in an emoji", `{"query":"👨\u200d👩","ts":1796040000000}`, "👨‍👩", ""},
		{"zero-width non-joiner", `{"query":"می\u200cخواهم","ts":1796040000000}`, "می\u200cخواهم", ""},
		{"tab and newline collapse", `{"query":"a\tb\nc","ts":1796040000000}`, "a b c", ""},
		{"U+FFFD sent as such", `{"query":"a�b","ts":1796040000000}`, "", "U+FFFD"},
		{"user id with invalid UTF-8", "{\"query\":\"x\",\"ts\":1796040000000,\"user_id\":\"u\xff\"}", "", "not valid UTF-8"},
		{"user id with a lone surrogate", `{"query":"x","ts":1796040000000,"user_id":"u\udc00"}`, "", "user_id: contains U+FFFD"},
		{"user id with a bidi control", `{"query":"x","ts":1796040000000,"user_id":"u\u202e1"}`, "", "user_id: contains U+202E"},
		{"duplicate key, the last wins", `{"query":"a","query":"b","ts":1796040000000}`, "b", ""},
		{"byte order mark before the object", "\ufeff{\"query\":\"x\",\"ts\":1796040000000}", "", "json:"},
		{"deeply nested unknown field", `{"query":"x","ts":1796040000000,"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "", "nested deeper than 32"},
		{"nested unknown field", `{"query":"x","ts":1796040000000,"x":[[{"y":[]}]]}`, "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := []byte(tt.value)
			if tt.value == "\x00null" {
				value = nil
			}
			q, term, err := DecodeSearchQuery("u1", value, searchRecordTime)
			if tt.reason == "" {
				if err != nil || q == nil {
					t.Fatalf("rejected: %v", err)
				}
				if term != tt.term {
					t.Fatalf("term %q, want %q", term, tt.term)
				}
				return
			}
			requireInvalid(t, err, tt.reason)
		})
	}
}

func TestDecodeSearchQueryKeepsTheRawQuery(t *testing.T) {
	q, term, err := DecodeSearchQuery("u7", []byte(`{"query":" Black  Friday ","ts":"2026-11-27T09:00:00Z","user_id":"u7"}`), searchRecordTime)
	if err != nil {
		t.Fatal(err)
	}
	if q.Query != " Black  Friday " || term != "black friday" || q.UserID != "u7" || q.TS.Millis() != 1795770000000 {
		t.Fatalf("decoded %+v, term %q", q, term)
	}
}

func TestDecodeSearchQueryKey(t *testing.T) {
	v := []byte(`{"query":"x","ts":1796040000000}`)
	for key, reason := range map[string]string{
		"":                             "",
		"any key at all":               "",
		"k\xff":                        "key: not valid UTF-8",
		strings.Repeat("k", 129):       "key: 129 bytes",
		strings.Repeat("k", 1_000_000): "key: 1000000 bytes",
	} {
		_, _, err := DecodeSearchQuery(key, v, searchRecordTime)
		if reason == "" {
			if err != nil {
				t.Errorf("key %.20q rejected: %v", key, err)
			}
			continue
		}
		requireInvalid(t, err, reason)
	}
}

// FuzzDecodeSearchQuery: any record is either rejected with a reason or accepted with a term
// that is the query normalised, valid UTF-8 without control or format characters (but the
// joiners and tags), at most MaxQueryBytes, and ts within SearchMaxAge and SearchFutureSkew of
// the record time.
func FuzzDecodeSearchQuery(f *testing.F) {
	f.Add("u1", []byte(`{"query":"  Snow \t STORM\n","ts":1796040000000,"user_id":"u1"}`), int64(1796040000000))
	f.Add("", []byte(`{"query":"a\u202eb\u0000","ts":"9999-12-31T23:59:59Z"}`), int64(1796040000000))
	f.Add("k", []byte("{\"query\":\"\xff\",\"ts\":-9223372036854775808}"), int64(-9223372036854775808))
	f.Fuzz(func(t *testing.T, key string, value []byte, recordMs int64) {
		rec := time.UnixMilli(recordMs)
		q, term, err := DecodeSearchQuery(key, value, rec)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason == "" {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		if term == "" || len(term) > MaxQueryBytes || term != Normalize(q.Query) || !utf8.ValidString(term) ||
			q.TS.Before(rec.Add(-SearchMaxAge)) || q.TS.After(rec.Add(SearchFutureSkew)) {
			t.Fatalf("accepted %+v, term %q, from %q", q, term, value)
		}
		for _, c := range term {
			if c == utf8.RuneError || unicode.Is(unicode.Cc, c) ||
				unicode.Is(unicode.Cf, c) && c != 0x200C && c != 0x200D && !(0xE0020 <= c && c <= 0xE007F) {
				t.Fatalf("accepted the term %q (%U) from %q", term, c, value)
			}
		}
	})
}

// FuzzSearchQueryScanMatchesDecoder: DecodeSearchQuery (scanSearchQuery first) and the JSON
// decoder alone give every record the same query and term, or the same reason.
func FuzzSearchQueryScanMatchesDecoder(f *testing.F) {
	for _, v := range []string{
		`{"query":"  Black Friday  Deals ","ts":1796040000000,"user_id":"u123456"}`,
		`{"query":"weather","ts":"2026-11-30T08:00:00+08:00","user_id":"u1"}`,
		" {\"query\" :\t\"Snow\",\n\"ts\":-0 , \"user_id\":\"\"}\r\n",
		`{}`, `{"query":""}`, `{"query":"x","ts":null}`, `{"query":null,"ts":1}`, `{"query":1,"ts":1}`,
		`{"query":"x","ts":9223372036854775808}`, `{"query":"x","ts":-9223372036854775808}`, `{"query":"x","ts":1.5}`,
		`{"query":"x","ts":1e3}`, `{"query":"x","ts":01}`, `{"query":"x","ts":"2026-11-30T08:00:00"}`, `{"query":"x","ts":"1796040000000"}`,
		`{"query":"a","query":"b","ts":1796040000000}`, `{"Query":"x","ts":1796040000000}`, `{"query":"\u0041","ts":1796040000000}`,
		`{"query":"x","ts":1796040000000,"x":1}`, `{"query":"x","ts":1796040000000}x`, `{"query":"x",}`, `{"query" "x"}`,
		"{\"query\":\"a\x01\",\"ts\":1796040000000}", "{\"query\":\"\u00e9\u2028\x7f\u202e\u200b\ufffd\",\"ts\":1796040000000}",
		`{"query":"x","ts":1796040000000,"user_id":"u:1"}`, `{"query":"x","ts":1796040000000,"user_id":"u 1"}`,
		`{"query":"x","ts":"9999-12-31T23:59:59Z"}`, `{"query":"STRASSE Straße","ts":1796040000000}`,
		`{"query":"Pizza \t Weather\n","ts":1796040000000}`, `{"query":"\"a\" \\ \/ \b \f \r","ts":1796040000000}`,
		`{"query":"a\u0009b","ts":1796040000000}`, `{"query":"a\xb","ts":1796040000000}`, `{"query":"a\","ts":1796040000000}`,
		`{"query":"\t","ts":1796040000000}`, `{"query":"x","ts":1796040000000,"user_id":"u\t1"}`, "{\"query\":\"a\x7fb\",\"ts\":1796040000000}",
		`{"query":"x","user_id":"u1","user_id":"u 1","ts":1796040000000}`, `{"query":"ok","query":"a\u0000","ts":1796040000000}`,
	} {
		f.Add("u1", []byte(v), int64(1796040000000))
	}
	f.Fuzz(func(t *testing.T, key string, value []byte, recordMs int64) {
		rec := time.UnixMilli(recordMs)
		var q1, q2 SearchQuery
		term1, err1 := decodeSearchQuery(key, value, rec, true, &q1)
		term2, err2 := decodeSearchQuery(key, value, rec, false, &q2)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || err1 == nil && !reflect.DeepEqual(q1, q2) || term1 != term2 {
			t.Fatalf("on %q (key %q): with the scan %+v %q %v, without %+v %q %v", value, key, q1, term1, err1, q2, term2, err2)
		}
	})
}

// TestScanSearchQueryTakesTheCommonShapes: the queries producers send (loadgen's, the
// contract's examples, with white space and non-ASCII text) decode without the JSON decoder.
func TestScanSearchQueryTakesTheCommonShapes(t *testing.T) {
	for _, v := range []string{
		`{"query":"  Black Friday  Deals ","ts":1796040000000,"user_id":"u123456"}`,
		`{"query":"weather","ts":"2026-11-30T08:00:00.123+08:00"}`,
		"{ \"query\": \"天气 预报\",\n  \"ts\": 1796040000000,\n  \"user_id\": \"用户\"\n}\n",
	} {
		var o flatObject
		var q SearchQuery
		if !scanSearchQuery([]byte(v), &o, &q) {
			t.Errorf("scanSearchQuery gave up on %s", v)
		}
	}
}

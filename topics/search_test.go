package topics

import (
	"strings"
	"testing"
)

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
		{"lone surrogate escape", `{"query":"a\udc00b","ts":1796040000000}`, "", "not valid UTF-8"},
		{"missing ts", `{"query":"weather"}`, "", "ts: missing"},
		{"null ts", `{"query":"weather","ts":null}`, "", "ts: missing"},
		{"ts without offset", `{"query":"weather","ts":"2026-11-30T08:00:00"}`, "", "json:"},
		{"query not a string", `{"query":42,"ts":1796040000000}`, "", "json:"},
		{"not an object", `["weather"]`, "", "json:"},
		{"oversized value", `{"query":"` + strings.Repeat("x", MaxValueBytes) + `"}`, "", "over the limit of 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, term, err := DecodeSearchQuery([]byte(tt.value))
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
	q, term, err := DecodeSearchQuery([]byte(`{"query":" Black  Friday ","ts":"2026-11-27T09:00:00Z","user_id":"u7"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.Query != " Black  Friday " || term != "black friday" || q.UserID != "u7" || q.TS.Millis() != 1795770000000 {
		t.Fatalf("decoded %+v, term %q", q, term)
	}
}

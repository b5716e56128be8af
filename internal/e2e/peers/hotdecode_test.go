//go:build peers

package peers

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// TestHotPeerDecodesLikeTopics is the differential test of the Kafka Streams hot-search peer's
// validation and normalisation: hand-picked records and 20,000 random mutations of valid
// queries (white space of every kind, letters whose case folding is special, control and
// format characters, JSON edge cases) go through topics.DecodeSearchQuery and through the
// peer's decoder (its HotDecodeCheck main), and both must accept the same records with the
// same term, query, user and time, and reject the others with the same reason (a reason
// quoting the JSON decoder only needs to be one on both sides). It needs the peer's jar (`make
// bench-peers` builds it and runs this test first).
func TestHotPeerDecodesLikeTopics(t *testing.T) {
	jar := peerJar(t, hotProject)
	rec := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	good := `{"query":"  Black   FRIDAY ","ts":"2026-11-30T11:59:00+08:00","user_id":"u1"}`
	var inputs []decodeInput
	for _, v := range []string{
		good,
		`{"query":"weather","ts":1796040000000}`,
		`{"Query":"weather","TS":1796040000000,"USER_ID":"u1"}`,
		`{"query":"a","query":"b","ts":1796040000000,"ts":null}`,
		`{"query":"a","ts":1796040000000,"user_id":null}`,
		`{"query":"a","ts":1796040000000,"user_id":""}`,
		`{"query":"a","ts":1796040000000,"user_id":"u:1"}`,
		`{"query":"a","ts":1796040000000,"user_id":"` + strings.Repeat("u", 129) + `"}`,
		`{"query":"","ts":1796040000000}`,
		`{"ts":1796040000000}`,
		`{"query":"a"}`,
		`{"query":" \t\n ","ts":1796040000000}`,
		`{"query":"a\u0000b","ts":1796040000000}`,
		`{"query":"a\u200bb","ts":1796040000000}`,
		`{"query":"a\u200db","ts":1796040000000}`,
		`{"query":"a\udc00b","ts":1796040000000}`,
		`{"query":"a\u0085b\u00a0c\u2003d\u3000e","ts":1796040000000}`,
		`{"query":"Straße STRASSE ẞ","ts":1796040000000}`,
		`{"query":"İstanbul ıi","ts":1796040000000}`,
		`{"query":"ΣΊΣΥΦΟΣ σίσυφος ς","ts":1796040000000}`,
		`{"query":"ꭰᏸ Ꭰ","ts":1796040000000}`,
		`{"query":"ﬀ ǅ Ω K ſ ŉ ǰ ᾳ ΐ","ts":1796040000000}`,
		`{"query":"` + strings.Repeat("a", 256) + `","ts":1796040000000}`,
		`{"query":"` + strings.Repeat("a", 257) + `","ts":1796040000000}`,
		`{"query":"` + strings.Repeat("ß", 128) + `","ts":1796040000000}`,
		`{"query":"` + strings.Repeat("é", 129) + `","ts":1796040000000}`,
		`{"query":"a","ts":"2026-11-16T12:00:00Z"}`,
		`{"query":"a","ts":"2026-11-16T11:59:59.999Z"}`,
		`{"query":"a","ts":"2026-11-30T12:05:00Z"}`,
		`{"query":"a","ts":"2026-11-30T12:05:00.000000001Z"}`,
		`{"query":"a","ts":"0001-01-01T00:00:00Z"}`,
		`{"query":"a","ts":"yesterday"}`,
		`{"query":1,"ts":1796040000000}`,
		`{"query":"a","ts":1796040000000,"x":[1,{"y":null}]}`,
		`{"query":"a","ts":1796040000000,"ſ":1,"quеry":"cyrillic e"}`,
		"\ufeff" + good, "", "null", "[]", `{"query":`, good + " x", good + "\n",
		"{\"query\":\"a\xffb\",\"ts\":1796040000000}",
	} {
		inputs = append(inputs, decodeInput{"u1", []byte(v), rec})
	}
	inputs = append(inputs, decodeInput{"u1", nil, rec}, decodeInput{"", []byte(good), rec},
		decodeInput{"u\xff", []byte(good), rec}, decodeInput{strings.Repeat("k", 129), []byte(good), rec})

	rng := rand.New(rand.NewPCG(19, 23))
	pieces := []string{`{`, `}`, `[`, `]`, `"`, `:`, `,`, `\`, ` `, "\t", `\t`, `\n`, `0`, `1`, `9`, `.`, `-`, `Z`,
		`null`, `\u0000`, `\udc00`, `\u00a0`, "\u00a0", "\u0085", "\u2003", "\u3000", "\u200b", "\u200d", "\u2028",
		"\xff", "é", "É", "ß", "ẞ", "ſ", "K", "İ", "ı", "Σ", "ς", "Ω", "ﬀ", "ǅ", "Ꭰ", "ꭰ", "ᏸ", "ΐ", "ᾳ",
		"\U0001F600", "\U00010400", "\U00010428", "\u0301", `"query":`, `"ts":`, `"user_id":"u2"`, `+08:00`, `.5`, `""`}
	seeds := []string{good, `{"query":"Pizza  Weather","ts":1796040000000}`,
		`{"query":"Ärger über Öl","ts":"2026-11-30T11:04:59.5+00:00","user_id":"u7"}`}
	for range 20_000 {
		v := []byte(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(v) + 1)
			switch rng.IntN(3) {
			case 0:
				v = append(v[:at:at], append([]byte(pieces[rng.IntN(len(pieces))]), v[at:]...)...)
			case 1:
				if at < len(v) {
					v = append(v[:at:at], append([]byte(pieces[rng.IntN(len(pieces))]), v[at+1:]...)...)
				}
			default:
				if at < len(v) {
					v = append(v[:at:at], v[at+1:]...)
				}
			}
		}
		inputs = append(inputs, decodeInput{"u1", v, rec})
	}

	lines := runDecodeCheck(t, jar, "io.rankstream.peers.hot.HotDecodeCheck", inputs)
	bad, valid := 0, 0
	for i, in := range inputs {
		got := decodeHotPeerLine(t, lines[i])
		want := "invalid\t"
		q, term, err := topics.DecodeSearchQuery(in.key, in.value, in.rec)
		if err == nil {
			valid++
			want = strings.Join([]string{"ok", term, q.Query, q.UserID, strconv.FormatInt(q.TS.Millis(), 10)}, "\t")
		} else {
			want += err.Error()
		}
		const jsonReason = "invalid\tinvalid event: json: "
		if got == want || strings.HasPrefix(got, jsonReason) && strings.HasPrefix(want, jsonReason) {
			continue
		}
		if bad++; bad <= 20 {
			t.Errorf("key %q value %q:\n ours: %q\n peer: %q", in.key, in.value, want, got)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d records decoded differently", bad, len(inputs))
	}
	t.Logf("%d records, %d valid", len(inputs), valid)
}

// decodeHotPeerLine turns a HotDecodeCheck line back into text, fields separated by tabs.
func decodeHotPeerLine(t *testing.T, line string) string {
	f := strings.Split(line, "\t")
	dec := func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("HotDecodeCheck line %q: %v", line, err)
		}
		return string(b)
	}
	switch {
	case f[0] == "invalid" && len(f) == 2:
		return "invalid\t" + dec(f[1])
	case f[0] == "ok" && len(f) == 5:
		return strings.Join([]string{"ok", dec(f[1]), dec(f[2]), dec(f[3]), f[4]}, "\t")
	}
	t.Fatalf("HotDecodeCheck line %q", line)
	return ""
}

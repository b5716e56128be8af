//go:build peers

package peers

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// TestStepsPeerDecodesLikeTopics is the differential test of the Kafka Streams peer's
// validation: hand-picked hostile records, reports at the edges of local days (zones far from
// UTC, daylight saving time) and 20,000 random mutations of valid ones go through
// topics.DecodeStepReport and through the peer's decoder (its DecodeCheck main), and both must
// accept the same records with the same fields and local day, and reject the others with the
// same reason (a reason quoting the JSON decoder only needs to be one on both sides). It needs
// the peer's jar (`make bench-peers` builds it and runs this test first); the tests build only with -tags peers.
func TestStepsPeerDecodesLikeTopics(t *testing.T) {
	jar := peerJar(t, stepsProject)
	rec := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	type input = decodeInput
	var inputs []input
	good := `{"request_id":"r1","user_id":"u1","device_id":"d1","steps":1234,"ts":"2026-11-30T19:59:00+08:00","tz":"Asia/Shanghai","region":"cn-east"}`
	for _, v := range []string{
		good,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":0,"ts":1796040000000,"tz":"Pacific/Kiritimati"}`,
		`{"request_id":"r1","user_id":"u1","steps":0,"ts":1796040000000,"tz":"Pacific/Pago_Pago"}`,
		`{"Request_ID":"r1","USER_ID":"u1","Steps":1,"TS":1796040000000,"Tz":"UTC"}`,
		`{"request_id":"a","request_id":"b","user_id":"u1","steps":1,"steps":2,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","ts":null}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T11:59:59.123456789Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T12:05:00.000000001Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T12:05:00Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-23T12:00:00Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-23T11:59:59.999Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T12:00:00.1234567891Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-02-30T12:00:00Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T12:00:00+24:00","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"0001-01-01T00:00:00Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":-62135596800000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","x":[1,{"y":null}],"z":"\u0000"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"Local"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"+01:00"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC+1"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"Etc/GMT+5"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"EST5EDT"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":""}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"America//New_York"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"./Asia/Tokyo"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"Asia/Tokyo/"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"Asia/../Asia/Tokyo"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"/Asia/Tokyo"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"posix/Europe/Berlin"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"EST"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"US/Eastern"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000}`,
		`{"request_id":"","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r\u202e1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r\udc001","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","device_id":"d\u00a01","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","region":"cn\u0080east"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","region":"` + strings.Repeat("é", 33) + `"}`,
		`{"request_id":"` + strings.Repeat("x", 129) + `","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":200000,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":200001,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":-0,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1e3,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1234.0,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":` + strings.Repeat("9", 400) + `,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":true,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":{"n":1},"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":"12","ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":null,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":01,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000.0,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":9223372036854775807,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":-9223372036854775808,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"9999-12-31T23:59:59Z","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T12:00:00","tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","x":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","x":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`,
		"\ufeff" + good, "", "null", "[]", `{"request_id":`, good + " x", good + "\n", " \t" + good,
		"{\"request_id\":\"r\xff1\",\"user_id\":\"u1\"}",
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":"2026-11-30T12:00:00Z","tz":"UTC","ſteps":7}`,
	} {
		inputs = append(inputs, input{"u1", []byte(v), time.Time{}})
	}
	inputs = append(inputs, input{"u1", nil, time.Time{}}, input{"u2", []byte(good), time.Time{}},
		input{"u\xff", []byte(good), time.Time{}}, input{strings.Repeat("k", 129), []byte(good), time.Time{}},
		input{"", []byte(good), time.Time{}})
	// Local days at the edges: the zones furthest from UTC, and the days daylight saving time
	// makes 23 or 25 hours long, in both zone databases.
	for _, c := range []struct{ at, zone string }{
		{"2026-11-30T09:59:59.999Z", "Pacific/Kiritimati"}, {"2026-11-30T10:00:00Z", "Pacific/Kiritimati"},
		{"2026-12-01T10:59:59.999Z", "Pacific/Pago_Pago"}, {"2026-12-01T11:00:00Z", "Pacific/Pago_Pago"},
		{"2026-03-08T04:59:59.999Z", "America/New_York"}, {"2026-03-08T05:00:00Z", "America/New_York"},
		{"2026-03-09T03:59:59.999Z", "America/New_York"}, {"2026-03-09T04:00:00Z", "America/New_York"},
		{"2026-11-02T04:59:59.999Z", "America/New_York"}, {"2026-11-02T05:00:00Z", "America/New_York"},
		{"2026-03-28T22:59:59.999Z", "Europe/Berlin"}, {"2026-03-28T23:00:00Z", "Europe/Berlin"},
		{"2026-10-25T22:59:59.999Z", "Europe/Berlin"}, {"2026-10-25T23:00:00Z", "Europe/Berlin"},
		{"2026-10-03T15:59:59.999Z", "Australia/Sydney"}, {"2026-10-03T16:00:00Z", "Australia/Sydney"},
		{"2026-04-04T12:59:59.999Z", "Australia/Lord_Howe"}, {"2026-04-04T13:00:00Z", "Australia/Lord_Howe"},
		{"2026-11-30T18:29:59.999Z", "Asia/Kolkata"}, {"2026-11-30T18:30:00Z", "Asia/Kathmandu"},
		{"1970-01-01T00:00:00Z", "UTC"}, {"1969-12-31T23:59:59.999Z", "Asia/Tokyo"},
	} {
		at, err := time.Parse(time.RFC3339Nano, c.at)
		if err != nil {
			t.Fatal(err)
		}
		v := fmt.Sprintf(`{"request_id":"r1","user_id":"u1","steps":1,"ts":%d,"tz":%q}`, at.UnixMilli(), c.zone)
		inputs = append(inputs, input{"u1", []byte(v), at})
	}

	// Random mutations of valid reports: characters that matter to JSON, times and ids,
	// inserted, replaced or deleted.
	rng := rand.New(rand.NewPCG(13, 17))
	pieces := []string{`{`, `}`, `[`, `]`, `"`, `:`, `,`, `\`, ` `, `0`, `1`, `9`, `.`, `-`, `+`, `e`, `E`, `T`, `Z`,
		`null`, `true`, `\u0000`, `\udc00`, `\/`, "\u00a0", "\u200b", "\xff", "é", "ſ", "K", `"ts":`, `"steps":`,
		`"tz":"Europe/Berlin"`, `"region":"r"`, `+08:00`, `.5`, `""`}
	seeds := []string{good,
		`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","region":"eu-west"}`,
		`{"request_id":"r2","user_id":"u1","steps":77,"ts":"2026-11-30T12:04:59.5+00:00","tz":"America/New_York"}`}
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
		inputs = append(inputs, input{"u1", v, time.Time{}})
	}

	for i := range inputs {
		if inputs[i].rec.IsZero() {
			inputs[i].rec = rec
		}
	}
	lines := runDecodeCheck(t, jar, "io.rankstream.peers.steps.DecodeCheck", inputs)
	bad, valid := 0, 0
	for i, in := range inputs {
		got := decodePeerLine(t, lines[i])
		want := "invalid\t"
		r, loc, err := topics.DecodeStepReport(in.key, in.value, in.rec, topics.DefaultStepRules)
		if err == nil {
			valid++
			y, m, d := r.TS.Time.In(loc).Date()
			want = strings.Join([]string{"ok", r.RequestID, r.UserID, strconv.FormatInt(r.Steps, 10),
				strconv.FormatInt(r.TS.Millis(), 10), strconv.Itoa(y*10000 + int(m)*100 + d), r.Region}, "\t")
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

// decodeInput is a record for a peer's decoder.
type decodeInput struct {
	key   string
	value []byte    // nil: a tombstone
	rec   time.Time // the record's timestamp
}

// runDecodeCheck runs the records through a peer's decoder, the main class of the jar that
// reads base64(key) TAB base64(value) or "-" TAB the record time in ms per line, and returns
// its answer to each, a line.
func runDecodeCheck(t *testing.T, jar, class string, inputs []decodeInput) []string {
	var stdin bytes.Buffer
	b64 := base64.StdEncoding
	for _, in := range inputs {
		value := "-"
		if in.value != nil {
			value = b64.EncodeToString(in.value)
		}
		fmt.Fprintf(&stdin, "%s\t%s\t%d\n", b64.EncodeToString([]byte(in.key)), value, in.rec.UnixMilli())
	}
	cmd := exec.Command("java", "-cp", jar, class)
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", class, err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != len(inputs) {
		t.Fatalf("%s answered %d of %d records", class, len(lines), len(inputs))
	}
	return lines
}

// decodePeerLine turns a DecodeCheck line back into text, fields separated by tabs.
func decodePeerLine(t *testing.T, line string) string {
	f := strings.Split(line, "\t")
	dec := func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("DecodeCheck line %q: %v", line, err)
		}
		return string(b)
	}
	switch {
	case f[0] == "invalid" && len(f) == 2:
		return "invalid\t" + dec(f[1])
	case f[0] == "ok" && len(f) == 7:
		return strings.Join([]string{"ok", dec(f[1]), dec(f[2]), f[3], f[4], f[5], dec(f[6])}, "\t")
	}
	t.Fatalf("DecodeCheck line %q", line)
	return ""
}

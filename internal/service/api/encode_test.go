package api

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// randString returns a string of runes that need every kind of JSON escape: quotes,
// backslashes, control characters, HTML characters, U+2028/U+2029, multi-byte runes and
// invalid UTF-8.
func randString(rng *rand.Rand) string {
	pieces := []string{"a", "Z", "9", "_", "-", `"`, `\`, "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"<", ">", "&", "\u2028", "\u2029", "é", "日本", "😀", "\xff", "\xe2\x80", " ", "/"}
	n := rng.IntN(12)
	var b []byte
	for range n {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}

func randTime(rng *rand.Rand) time.Time {
	// Every millisecond of years 0..9999 (time.Time's MarshalJSON refuses others), plus whole
	// seconds, which have no fraction, and nanoseconds (the general formatter's path).
	if rng.IntN(8) == 0 {
		return time.Unix(0, rng.Int64()-rng.Int64()/2).UTC()
	}
	ms := rng.Int64N(253402300800000+62135596800000) - 62135596800000
	if rng.IntN(4) == 0 {
		ms -= ms % 1000
	}
	return time.UnixMilli(ms).UTC()
}

func randEntries(rng *rand.Rand) []Entry {
	if rng.IntN(5) == 0 {
		return nil
	}
	es := make([]Entry, rng.IntN(4))
	for i := range es {
		es[i] = randEntry(rng)
	}
	return es
}

func randEntry(rng *rand.Rand) Entry {
	return Entry{Rank: rng.Int64() - rng.Int64(), Member: randString(rng), Score: rng.Int64() - rng.Int64(), ReachedAt: randTime(rng)}
}

func randStale(rng *rand.Rand) staleness {
	if rng.IntN(2) == 0 {
		return staleness{}
	}
	return staleBy(time.Duration(rng.Int64N(int64(time.Hour))))
}

func randEnd(rng *rand.Rand) *time.Time {
	if rng.IntN(3) == 0 {
		return nil
	}
	t := randTime(rng)
	return &t
}

// TestFastJSONMatchesEncodingJSON: every response's hand-written JSON is byte for byte what
// json.Encoder writes for the same value, on random values with strings needing every escape.
func TestFastJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		var vs []jsonAppender
		switch i % 4 {
		case 0:
			vs = append(vs, Page{Board: randString(rng), Day: randString(rng), Region: randString(rng), Total: rng.Int64(),
				Offset: rng.IntN(2000) - 1000, Items: randEntries(rng), staleness: randStale(rng)})
		case 1:
			vs = append(vs, Standing{Board: randString(rng), Day: randString(rng), Region: randString(rng), Member: randEntry(rng),
				Above: randEntries(rng), Below: randEntries(rng), Total: rng.Int64(), staleness: randStale(rng)})
		case 2:
			vs = append(vs, BoardPage{Board: randString(rng), Period: randString(rng), Scope: randString(rng), PeriodEnd: randEnd(rng),
				Total: rng.Int64(), Offset: rng.Int(), Items: randEntries(rng), staleness: randStale(rng)})
		case 3:
			vs = append(vs, BoardStanding{Board: randString(rng), Period: randString(rng), Scope: randString(rng), PeriodEnd: randEnd(rng),
				Member: randEntry(rng), Above: randEntries(rng), Below: randEntries(rng), Total: rng.Int64(), staleness: randStale(rng)})
		}
		for _, v := range vs {
			if got, want := writtenAndEncoded(t, v); got != want {
				t.Fatalf("%T:\n got %s\nwant %s", v, got, want)
			}
		}
	}
}

// TestHotAnswerJSON: the hot-search answer is the snapshot's JSON, with stale and
// stale_age_ms last when it is a stale copy.
func TestHotAnswerJSON(t *testing.T) {
	snap := topics.TopKSnapshot{Stream: "search", WindowStart: time.Unix(0, 0), WindowEnd: time.Unix(3600, 0),
		GeneratedAt: time.Unix(3601, 0), Items: []topics.TopKItem{{Item: "a<b", Count: 3}}}
	js, err := snap.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(hotAnswer{Snapshot: snap}.appendJSON(nil)); got != string(js) {
		t.Fatalf("fresh: got %s, want %s", got, js)
	}
	got := string(hotAnswer{Snapshot: snap}.stale(1500 * time.Millisecond).appendJSON(nil))
	want := string(js[:len(js)-1]) + `,"stale":true,"stale_age_ms":1500}`
	if got != want {
		t.Fatalf("stale: got %s, want %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["stale"] != true || back["stale_age_ms"] != 1500.0 {
		t.Fatalf("stale answer decodes to %v (%v)", back, err)
	}
}

// TestCivilDate: appendTime's date arithmetic gives time's own date for every day of years
// 0..9999 and of a stretch before year 0.
func TestCivilDate(t *testing.T) {
	first := time.Date(-400, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400
	last := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() / 86400
	for days := first; days <= last; days++ {
		y, m, d := time.Unix(days*86400, 0).UTC().Date()
		if gy, gm, gd := civilDate(days); gy != int64(y) || gm != int(m) || gd != d {
			t.Fatalf("day %d: got %d-%d-%d, want %d-%d-%d", days, gy, gm, gd, y, m, d)
		}
	}
}

// TestPageCutFromEncodedRows: a page cut from a cached Top-100's encoding (every offset and
// limit, empty pages included) is written byte for byte as encoding/json writes the page.
func TestPageCutFromEncodedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		rows := make([]Entry, rng.IntN(8))
		for i := range rows {
			rows[i] = randEntry(rng)
		}
		enc := encodeRows(rows)
		for lo := 0; lo <= len(rows); lo++ {
			for hi := lo; hi <= len(rows); hi++ {
				for _, v := range []jsonAppender{
					Page{Board: "steps", Day: "20261201", Total: 9, Offset: lo, Items: rows[lo:hi], itemsJSON: enc.items(lo, hi)},
					BoardPage{Board: "b", Period: "total", Scope: "global", Total: 9, Offset: lo, Items: rows[lo:hi], itemsJSON: enc.items(lo, hi),
						staleness: randStale(rng)},
				} {
					if got, want := writtenAndEncoded(t, v); got != want {
						t.Fatalf("rows %d..%d of %d:\n got %s\nwant %s", lo, hi, len(rows), got, want)
					}
				}
			}
		}
	}
}

// writtenAndEncoded returns v's body as writeJSON writes it and as encoding/json's Encoder
// writes it.
func writtenAndEncoded(t *testing.T, v jsonAppender) (got, want string) {
	t.Helper()
	var enc bytes.Buffer
	if err := json.NewEncoder(&enc).Encode(v); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	writeJSON(rec, 200, v)
	return rec.Body.String(), enc.String()
}

package pipelinee2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/topics"
)

// hostileCase is one record a hostile or broken producer may send, and the words the reason of
// its dead letter must contain.
type hostileCase struct {
	name    string
	key     string
	value   []byte // nil: a tombstone
	headers []kgo.RecordHeader
	reason  string
}

// maxRSS is the bound the process's peak resident memory must stay under.
const maxRSS = 400 << 20

// TestHostileInput: every kind of garbage a producer can write to the inputs (values of 3 and
// 15 MB that snappy squeezes through the topics' 1 MiB limit, event times in year 9999 and
// 1970 as text and as numbers, invalid UTF-8 in every string field and in keys, NUL, control,
// bidi and zero-width characters, tombstones, missing and null fields, numbers in every wrong
// shape, 1 MB keys, a thousand headers) goes into one running `rankstream process`, each case
// followed by a valid record. For every case: the record is in the dead-letter topic with its
// reason (a value or key too large cut, with its size and SHA-256), the valid record after it
// is processed (its steps in Redis, its term in the hot group's loop topic), the process stays
// up and its resident memory under maxRSS, and every record is counted. On the real broker, a
// zstd decompression bomb is refused at the door (topics.InputCompression).
func TestHostileInput(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		r := e2e.NewRun(t, brokers, "hostile")
		kc, rdb := r.Kafka, r.Redis
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		httpAddr := testenv.FreeAddr(t)
		proc := r.Start("processor", "--http", httpAddr)

		// A hostile producer: franz-go's defaults (snappy), batches allowed up to 32 MiB before
		// compression, so that what the broker checks (the compressed batch) fits its limit.
		cl, err := kc.KgoClient(kgo.ProducerBatchMaxBytes(32 << 20))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		now := time.Now()
		day := now.UTC().Format("20060102")
		type sent struct {
			c   hostileCase
			rec *kgo.Record
		}
		var all []sent
		produce := func(topic goka.Stream, c hostileCase) *kgo.Record {
			t.Helper()
			r := &kgo.Record{Topic: string(kc.Names.Stream(topic)), Key: []byte(c.key), Value: c.value, Headers: c.headers}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", c.name, err)
			}
			return r
		}
		stepsCases, searchCases := stepsHostile(now), searchHostile(now)
		for i, c := range stepsCases {
			all = append(all, sent{c, produce(topics.StepsReported, c)})
			user := "ok-" + strconv.Itoa(i)
			produce(topics.StepsReported, hostileCase{key: user, value: stepReport(user, i+1, now)})
		}
		for i, c := range searchCases {
			all = append(all, sent{c, produce(topics.SearchQueries, c)})
			produce(topics.SearchQueries, hostileCase{key: "ok", value: searchQuery(fmt.Sprint("valid ", i), now)})
		}
		began := time.Now()
		t.Logf("produced %d hostile records, each followed by a valid one", len(all))
		if strings.HasSuffix(t.Name(), "/real") { // kfake does not recompress
			// A decompression bomb: 64 MB of zeros is a few KB in zstd. The broker recompresses
			// it to the inputs' snappy, which is over the topic's limit, and refuses it.
			bomb, err := kc.KgoClient(kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.ProducerBatchMaxBytes(80<<20))
			if err != nil {
				t.Fatal(err)
			}
			for _, topic := range []goka.Stream{topics.StepsReported, topics.SearchQueries} {
				err := bomb.ProduceSync(ctx, &kgo.Record{Topic: string(kc.Names.Stream(topic)), Key: []byte("u1"), Value: make([]byte, 64<<20)}).FirstErr()
				if !errors.Is(err, kerr.MessageTooLarge) {
					t.Errorf("a 64 MB zstd value to %s: %v, want %v", topic, err, kerr.MessageTooLarge)
				}
			}
			bomb.Close()
		}

		// Every valid record after a hostile one is processed.
		testenv.WaitFor(t, 2*time.Minute, "the valid step reports in Redis", func() bool {
			if err := proc.Exited(); err != nil {
				t.Fatalf("process %v\n%s", err, proc.Output())
			}
			for i := range stepsCases {
				if v, _ := rdb.Get(ctx, "step:"+day+":ok-"+strconv.Itoa(i)).Result(); v != strconv.Itoa(i+1) {
					return false
				}
			}
			return true
		})
		t.Logf("valid step reports in Redis after %s", time.Since(began).Round(time.Millisecond))
		terms := loopTerms(t, ctx, kc, len(searchCases))
		t.Logf("valid queries routed after %s", time.Since(began).Round(time.Millisecond))
		for i := range searchCases {
			if !terms[fmt.Sprint("valid ", i)] {
				t.Errorf("the valid query after %q was not routed by the hot group", searchCases[i].name)
			}
		}

		// Every hostile record is dead-lettered with its reason; what was too large, cut.
		letters := deadLetters(t, ctx, kc, len(all))
		t.Logf("dead letters read after %s", time.Since(began).Round(time.Millisecond))
		for _, s := range all {
			dl, ok := letters[fmt.Sprintf("%s/%d/%d", s.rec.Topic, s.rec.Partition, s.rec.Offset)]
			if !ok {
				t.Errorf("%s: not in the dead-letter topic", s.c.name)
				continue
			}
			info, err := topics.ParseDeadLetter(headerMap(dl.Headers))
			if err != nil {
				t.Errorf("%s: %v", s.c.name, err)
				continue
			}
			if !strings.Contains(info.Reason, s.c.reason) {
				t.Errorf("%s: reason %q does not say %q", s.c.name, info.Reason, s.c.reason)
			}
			checkKept(t, s.c.name+": value", s.c.value, dl.Value, info.ValueBytes, info.ValueSHA256, topics.MaxDeadLetterValueBytes)
			checkKept(t, s.c.name+": key", s.rec.Key, dl.Key, info.KeyBytes, info.KeySHA256, topics.MaxDeadLetterKeyBytes)
		}

		// Counted: every record (tombstones too) is an event in; every hostile one a dead letter.
		metrics := scrape(t, "http://"+httpAddr+"/metrics")
		for topic, n := range map[goka.Stream]int{topics.StepsReported: len(stepsCases), topics.SearchQueries: len(searchCases)} {
			label := fmt.Sprintf(`topic="%s"`, kc.Names.Stream(topic))
			if got := sumSeries(metrics, "rankstream_events_in_total", label); got != float64(2*n) {
				t.Errorf("rankstream_events_in_total{%s} = %v, want %d (each hostile record and the valid one after it)", label, got, 2*n)
			}
			if got := sumSeries(metrics, "rankstream_dead_lettered_total", label); got != float64(n) {
				t.Errorf("rankstream_dead_lettered_total{%s} summed over its reasons = %v, want %d", label, got, n)
			}
		}
		// Logged at warn too, with a rate limit (kafka.TestDeadLetterCountsAndLogsWithRateLimit).
		logged := map[string]bool{}
		for _, line := range strings.Split(proc.Output(), "\n") {
			if strings.Contains(line, `level=WARN msg="record dead-lettered"`) {
				for _, f := range strings.Fields(line) {
					if topic, ok := strings.CutPrefix(f, "topic="); ok {
						logged[topic] = true
					}
				}
			}
		}
		for _, topic := range []goka.Stream{topics.StepsReported, topics.SearchQueries} {
			if !logged[string(kc.Names.Stream(topic))] {
				t.Errorf("no dead letter of %s in the process's log", kc.Names.Stream(topic))
			}
		}
		if err := proc.Exited(); err != nil {
			t.Fatalf("process %v\n%s", err, proc.Output())
		}
		max := peakRSS(t, kc.Names.Prefix)
		t.Logf("process stayed up; peak RSS (VmHWM) %.1f MiB (bound %d MiB)", float64(max)/(1<<20), maxRSS>>20)
		if max >= maxRSS {
			t.Errorf("peak RSS %d bytes, over %d", max, maxRSS)
		}
	})
}

// stepsHostile are the step reports of the suite.
func stepsHostile(now time.Time) []hostileCase {
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	report := func(fields string) []byte {
		return []byte(`{"request_id":"r1","user_id":"u1","steps":100,"ts":` + ms + `,"tz":"UTC"` + fields + `}`)
	}
	with := func(old, new string) []byte { return bytes.Replace(report(""), []byte(old), []byte(new), 1) }
	big := func(n int) []byte {
		return []byte(`{"request_id":"` + strings.Repeat("x", n) + `","user_id":"u1","steps":1,"ts":` + ms + `,"tz":"UTC"}`)
	}
	manyHeaders := make([]kgo.RecordHeader, 1000)
	for i := range manyHeaders {
		manyHeaders[i] = kgo.RecordHeader{Key: fmt.Sprint("h", i), Value: bytes.Repeat([]byte("v"), 1000)}
	}
	return []hostileCase{
		{name: "3 MB compressible value", key: "u1", value: big(3_000_000), reason: "value: 3000"},
		{name: "15 MB compressible value", key: "u1", value: big(15_000_000), reason: "value: 15000"},
		{name: "1 MB key", key: strings.Repeat("k", 1_000_000), value: report(""), reason: "key: 1000000 bytes"},
		{name: "tombstone", key: "u1", value: nil, reason: "tombstone"},
		{name: "empty value", key: "u1", value: []byte{}, reason: "json:"},
		{name: "ts in 9999 as text", key: "u1", value: with(ms, `"9999-12-31T23:59:59Z"`), reason: "after the record time"},
		{name: "ts in 9999 as ms", key: "u1", value: with(ms, "253402300799000"), reason: "after the record time"},
		{name: "ts at the largest ms", key: "u1", value: with(ms, "9223372036854775807"), reason: "after the record time"},
		{name: "ts in 1970 as text", key: "u1", value: with(ms, `"1970-01-01T00:00:00Z"`), reason: "older than the retention"},
		{name: "ts at epoch 0", key: "u1", value: with(ms, "0"), reason: "older than the retention"},
		{name: "ts at the smallest ms", key: "u1", value: with(ms, "-9223372036854775808"), reason: "older than the retention"},
		{name: "ts as a float", key: "u1", value: with(ms, ms+".5"), reason: "json:"},
		{name: "ts as a digit string", key: "u1", value: with(ms, `"`+ms+`"`), reason: "json:"},
		{name: "ts null", key: "u1", value: with(ms, "null"), reason: "ts: missing"},
		{name: "invalid UTF-8 in request_id", key: "u1", value: with(`"r1"`, "\"r\xff1\""), reason: "not valid UTF-8"},
		{name: "invalid UTF-8 in user_id and key", key: "u\xff", value: with(`"u1"`, "\"u\xff\""), reason: "not valid UTF-8"},
		{name: "invalid UTF-8 in device_id", key: "u1", value: report(",\"device_id\":\"d\xfe\""), reason: "not valid UTF-8"},
		{name: "invalid UTF-8 in region", key: "u1", value: report(",\"region\":\"r\xc0\""), reason: "not valid UTF-8"},
		{name: "invalid UTF-8 in tz", key: "u1", value: with(`"UTC"`, "\"UT\xffC\""), reason: "not valid UTF-8"},
		{name: "lone surrogate in request_id", key: "u1", value: with(`"r1"`, `"r\udc001"`), reason: "request_id: contains U+FFFD"},
		{name: "NUL in user_id", key: "u\x001", value: with(`"u1"`, `"u\u00001"`), reason: "user_id: contains U+0000"},
		{name: "escape character in request_id", key: "u1", value: with(`"r1"`, `"r\u001b[31m"`), reason: "request_id: contains U+001B"},
		{name: "bidi override in user_id", key: "u\u202e1", value: with(`"u1"`, `"u\u202e1"`), reason: "user_id: contains U+202E"},
		{name: "zero-width space in region", key: "u1", value: report(`,"region":"eu\u200bwest"`), reason: "region: contains U+200B"},
		{name: "steps missing", key: "u1", value: with(`"steps":100,`, ""), reason: "steps: missing"},
		{name: "steps null", key: "u1", value: with("100", "null"), reason: "steps: null"},
		{name: "steps a string", key: "u1", value: with("100", `"100"`), reason: "want an integer"},
		{name: "steps a float", key: "u1", value: with("100", "100.5"), reason: "not an integer"},
		{name: "steps with an exponent", key: "u1", value: with("100", "1e2"), reason: "not an integer"},
		{name: "steps negative zero", key: "u1", value: with("100", "-0"), reason: "negative"},
		{name: "steps negative", key: "u1", value: with("100", "-100"), reason: "negative"},
		{name: "steps huge", key: "u1", value: with("100", strings.Repeat("9", 1000)), reason: "plausible maximum"},
		{name: "steps an array", key: "u1", value: with("100", "[100]"), reason: "want an integer"},
		{name: "request_id missing", key: "u1", value: with(`"request_id":"r1",`, ""), reason: "request_id: missing"},
		{name: "user_id null", key: "u1", value: with(`"u1"`, "null"), reason: "user_id: missing"},
		{name: "duplicate user_id, the last differs from the key", key: "u1", value: report(`,"user_id":"u2"`), reason: "does not match"},
		{name: "byte order mark", key: "u1", value: append([]byte("\ufeff"), report("")...), reason: "json:"},
		{name: "not an object", key: "u1", value: []byte(`[1,2,3]`), reason: "json:"},
		{name: "deep nesting over 64 KiB", key: "u1", value: report(`,"x":` + strings.Repeat("[", 40000) + strings.Repeat("]", 40000)), reason: "over the limit"},
		{name: "deep nesting within 64 KiB", key: "u1", value: report(`,"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000)), reason: "nested deeper than 32"},
		{name: "a thousand headers, no user", key: "u1", value: with(`"user_id":"u1",`, ""), headers: manyHeaders, reason: "user_id: missing"},
	}
}

// searchHostile are the search queries of the suite.
func searchHostile(now time.Time) []hostileCase {
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	query := func(q string) []byte { return []byte(`{"query":"` + q + `","ts":` + ms + `,"user_id":"u1"}`) }
	with := func(old, new string) []byte { return bytes.Replace(query("weather"), []byte(old), []byte(new), 1) }
	cases := []hostileCase{
		{name: "3 MB compressible query", key: "u1", value: query(strings.Repeat("ab ", 1_000_000)), reason: "value: 3000"},
		{name: "15 MB compressible query", key: "u1", value: query(strings.Repeat("abc", 5_000_000)), reason: "value: 15000"},
		{name: "1 MB key", key: strings.Repeat("k", 1_000_000), value: query("weather"), reason: "key: 1000000 bytes"},
		{name: "tombstone", key: "u1", value: nil, reason: "tombstone"},
		{name: "ts in 9999 as text", key: "u1", value: with(ms, `"9999-12-31T23:59:59Z"`), reason: "after the record time"},
		{name: "ts in 9999 as ms", key: "u1", value: with(ms, "253402300799000"), reason: "after the record time"},
		{name: "ts in 1970 as text", key: "u1", value: with(ms, `"1970-01-01T00:00:00Z"`), reason: "older than the retention"},
		{name: "ts at the smallest ms", key: "u1", value: with(ms, "-9223372036854775808"), reason: "older than the retention"},
		{name: "ts 15 days old", key: "u1", value: with(ms, strconv.FormatInt(now.Add(-15*24*time.Hour).UnixMilli(), 10)), reason: "older than the retention"},
		{name: "ts as a float", key: "u1", value: with(ms, ms+".0"), reason: "json:"},
		{name: "ts missing", key: "u1", value: with(`,"ts":`+ms, ""), reason: "ts: missing"},
		{name: "invalid UTF-8 in the query", key: "u1", value: query("we\xffather"), reason: "not valid UTF-8"},
		{name: "invalid UTF-8 in user_id", key: "u1", value: with(`"u1"`, "\"u\xfe\""), reason: "not valid UTF-8"},
		{name: "invalid UTF-8 in the key", key: "k\xff", value: query("weather"), reason: "key: not valid UTF-8"},
		{name: "lone surrogate in the query", key: "u1", value: query(`we\udc00ather`), reason: "U+FFFD"},
		{name: "NUL in the query", key: "u1", value: query(`we\u0000ather`), reason: "U+0000"},
		{name: "control character in the query", key: "u1", value: query(`we\u0007ather`), reason: "U+0007"},
		{name: "bidi override in the query", key: "u1", value: query(`\u202eweather`), reason: "U+202E"},
		{name: "zero-width space in the query", key: "u1", value: query(`wea\u200bther`), reason: "U+200B"},
		{name: "bidi control in user_id", key: "u1", value: with(`"u1"`, `"u\u2066"`), reason: "user_id: contains U+2066"},
		{name: "query missing", key: "u1", value: with(`"query":"weather",`, ""), reason: "query: missing"},
		{name: "query null", key: "u1", value: with(`"weather"`, "null"), reason: "query: missing"},
		{name: "query a number", key: "u1", value: with(`"weather"`, "42"), reason: "json:"},
		{name: "query of white space only", key: "u1", value: query(`\u00a0\t `), reason: "empty after normalisation"},
		{name: "deep nesting", key: "u1", value: with(`"user_id"`, `"x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`,"user_id"`), reason: "nested deeper than 32"},
	}
	// Year 9999 on every input partition: the windows close at the smallest partition's
	// watermark, so this is what would make every partition close windows up to year 9999.
	seen := map[int32]bool{}
	for i := 0; len(seen) < 8; i++ {
		key := fmt.Sprint("far-", i)
		if p := kafka.PartitionOf(key, 8); !seen[p] {
			seen[p] = true
			cases = append(cases, hostileCase{name: fmt.Sprintf("ts in 9999 on partition %d", p), key: key,
				value: with(ms, "253402300799000"), reason: "after the record time"})
		}
	}
	return cases
}

func stepReport(user string, steps int, now time.Time) []byte {
	return fmt.Appendf(nil, `{"request_id":"ok","user_id":%q,"steps":%d,"ts":%d,"tz":"UTC"}`, user, steps, now.UnixMilli())
}

func searchQuery(q string, now time.Time) []byte {
	return fmt.Appendf(nil, `{"query":%q,"ts":%d}`, q, now.UnixMilli())
}

// checkKept checks a dead letter's key or value: whole when it fits, else its first limit bytes
// with the original's size and digest.
func checkKept(t *testing.T, what string, orig, got []byte, size int64, sum [sha256.Size]byte, limit int) {
	t.Helper()
	switch {
	case orig == nil && got != nil:
		t.Errorf("%s: a tombstone became %d bytes", what, len(got))
	case len(orig) <= limit && (!bytes.Equal(orig, got) || size != -1):
		t.Errorf("%s: %d bytes not kept whole (%d kept, size header %d)", what, len(orig), len(got), size)
	case len(orig) > limit && (!bytes.Equal(orig[:limit], got) || size != int64(len(orig)) || sum != sha256.Sum256(orig)):
		t.Errorf("%s: %d bytes cut to %d, size header %d, digest %x", what, len(orig), len(got), size, sum)
	}
}

func headerMap(hs []kgo.RecordHeader) map[string][]byte {
	m := make(map[string][]byte, len(hs))
	for _, h := range hs {
		m[h.Key] = h.Value
	}
	return m
}

// deadLetters reads the dead-letter topic until it holds want records, keyed by their source
// "topic/partition/offset".
func deadLetters(t *testing.T, ctx context.Context, kc kafka.Config, want int) map[string]*kgo.Record {
	t.Helper()
	cl, err := kc.KgoClient(kgo.ConsumeTopics(string(kc.Names.Stream(topics.DLQ))), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out := map[string]*kgo.Record{}
	for len(out) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			h := headerMap(r.Headers)
			out[fmt.Sprintf("%s/%s/%s", h[topics.HeaderSourceTopic], h[topics.HeaderSourcePartition], h[topics.HeaderSourceOffset])] = r
		})
	}
	if len(out) != want {
		t.Errorf("%d dead letters, want %d", len(out), want)
	}
	return out
}

// loopTerms reads the hot group's loop topic until it holds n terms "valid <i>".
func loopTerms(t *testing.T, ctx context.Context, kc kafka.Config, n int) map[string]bool {
	t.Helper()
	cl, err := kc.KgoClient(kgo.ConsumeTopics(string(kc.Names.Loop(hot.Group))), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	terms := map[string]bool{}
	for len(terms) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			lr, err := topics.DecodeHotLoopRecord(r.Value)
			if err != nil {
				t.Errorf("loop record at %d/%d: %v", r.Partition, r.Offset, err)
				return
			}
			for _, e := range lr.Terms {
				if strings.HasPrefix(e.Term, "valid ") {
					terms[e.Term] = true
				}
			}
		})
	}
	return terms
}

// scrape reads a Prometheus text page into "name{labels}" → value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// sumSeries sums the series of metric name (scrape's keys) that carry the label pair label
// (`topic="x"`).
func sumSeries(metrics map[string]float64, name, label string) float64 {
	var sum float64
	for k, v := range metrics {
		if labels, ok := strings.CutPrefix(k, name+"{"); ok && slices.Contains(strings.Split(strings.TrimSuffix(labels, "}"), ","), label) {
			sum += v
		}
	}
	return sum
}

// peakRSS returns the peak resident memory (VmHWM in /proc/<pid>/status) of the one process
// whose command line holds arg.
func peakRSS(t *testing.T, arg string) int64 {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					t.Fatalf("%s/status: %q", dir, line)
				}
				return kb << 10
			}
		}
	}
	t.Fatalf("no process with %q in its command line", arg)
	return 0
}

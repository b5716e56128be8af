package hote2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/topics"
)

// TestHotSearchDelayedPartition: live queries (event time = now) on every input partition but
// the delayed ones, which receive a few queries a second dated two hours ago (a lagging
// mirror, a producer's clock two hours slow), from a fresh group on, with default flags. The
// delayed partitions never go idle, yet they hold nothing back: every other partition's
// committed offset reaches its end offset within a few seconds, hot:search:latest stays within
// the lateness, a slide and a second of now, and every delayed query is dropped as late,
// counted in rankstream_hot_dropped_total{reason="late"}. A delayed partition that catches up
// to live holds the windows again, and its queries count.
func TestHotSearchDelayedPartition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		delayed []int32
		catchUp bool // the delayed partition's queries are dated now from halfway on
	}{
		{name: "one", delayed: []int32{5}},
		{name: "two", delayed: []int32{2, 5}},
		{name: "catches up", delayed: []int32{5}, catchUp: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testenv.EachKafka(t, func(t *testing.T, brokers []string) {
				t.Parallel()
				delayedRun(t, brokers, c.delayed, c.catchUp)
			})
		})
	}
}

// delayedSample is what the test sees once a second.
type delayedSample struct {
	at   time.Time
	age  time.Duration   // now less the end of hot:search:latest's window (-1: none yet)
	lag  map[int32]int64 // by input partition, the end offset less the committed one
	ends map[int32]int64
	done map[int32]int64 // committed offsets
	late float64
}

func delayedRun(t *testing.T, brokers []string, delayed []int32, catchUp bool) {
	const (
		partitions  = 8
		traffic     = 30 * time.Second
		settle      = 12 * time.Second // from the start: the process up, every partition heard, a first window
		catchUpTerm = "caught up term"
	)
	r := e2e.NewRun(t, brokers, "hotdelay", e2e.WithPartitions(partitions))
	kc, rdb := r.Kafka, r.Redis
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	metrics := testenv.FreeAddr(t)
	proc := r.Start("processor", "--http", metrics)
	cl, err := kc.KgoClient(kgo.ProducerLinger(5 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic, group := string(kc.Names.Stream(topics.SearchQueries)), string(kc.Names.Group(hot.Group))
	users := usersByPartition(partitions, 20)
	rng := rand.New(rand.NewPCG(7, 8))
	offsets := func() (ends, done map[int32]int64) {
		ends, done = endOffsets(t, ctx, cl, topic), map[int32]int64{}
		if fetched, err := adm.FetchOffsets(ctx, group); err == nil {
			fetched.Each(func(o kadm.OffsetResponse) {
				if o.Topic == topic {
					done[o.Partition] = o.At
				}
			})
		}
		return ends, done
	}

	var samples []delayedSample
	old, caughtUp := 0, 0 // delayed queries dated two hours ago; the delayed partition's queries dated now
	var lastCaughtUp time.Time
	began := time.Now()
	// Caught up, the delayed partition sends a term of its own, then (the last 10 s: windows
	// closing past its last one) live terms like the others.
	switchAt, liveAt := began.Add(traffic/2), began.Add(traffic-10*time.Second)
	nextSample := began
	for now := time.Now(); now.Sub(began) < traffic; now = time.Now() {
		if err := proc.Exited(); err != nil {
			t.Fatalf("processor %v\n%s", err, proc.Output())
		}
		for part := range int32(partitions) {
			user := users[part][rng.IntN(len(users[part]))]
			switch {
			case !slices.Contains(delayed, part) || catchUp && now.After(liveAt):
				v := searchQuery(fmt.Sprint("live term ", rng.IntN(20)), now.UnixMilli(), user)
				cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: v}, nil)
			case rng.IntN(4) > 0: // a few a second
			case catchUp && now.After(switchAt):
				cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: searchQuery(catchUpTerm, now.UnixMilli(), user)}, nil)
				caughtUp, lastCaughtUp = caughtUp+1, now
			default:
				v := searchQuery("delayed term", now.Add(-2*time.Hour).UnixMilli(), user)
				cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: v}, nil)
				old++
			}
		}
		if now.After(nextSample) {
			nextSample = nextSample.Add(time.Second)
			s := delayedSample{at: now, age: -1, lag: map[int32]int64{}, late: droppedLate(t, metrics)}
			if latest := latestSnapshot(t, ctx, rdb); !latest.WindowEnd.IsZero() {
				s.age = now.Sub(latest.WindowEnd)
			}
			s.ends, s.done = offsets()
			for part, end := range s.ends {
				s.lag[part] = end - s.done[part]
			}
			samples = append(samples, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if i%5 == 0 || i == len(samples)-1 {
			t.Logf("%4.0fs: snapshot age %v, commit lag by partition %v, late drops %.0f", s.at.Sub(began).Seconds(), s.age.Round(100*time.Millisecond), s.lag, s.late)
		}
	}

	// Every partition's commits keep up: each one's committed offset reaches, within 3 s, the
	// end offset it had then (the delayed partitions' too: their queries are dropped, not held).
	lateness, slide := hot.DefaultConfig().Lateness, hot.DefaultConfig().Slide
	for i, s := range samples {
		if s.at.Sub(began) < settle {
			continue
		}
		if s.age < 0 || s.age > lateness+slide+time.Second {
			t.Errorf("%.0f s in: hot:search:latest is %v old, want at most %v (lateness + slide + 1 s)", s.at.Sub(began).Seconds(), s.age, lateness+slide+time.Second)
		}
		later := i + 3
		if later >= len(samples) {
			continue
		}
		for part, end := range s.ends {
			if done := samples[later].done[part]; done < end {
				t.Errorf("%.0f s in: partition %d committed %d three seconds after its end offset was %d", s.at.Sub(began).Seconds(), part, done, end)
			}
		}
	}

	// Once everything is committed, the late drops are the delayed queries, exactly.
	testenv.WaitCommitted(t, adm, group, topic, r.Count(topic), time.Minute)
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("%d late drops", old), func() bool { return droppedLate(t, metrics) >= float64(old) })
	if late := droppedLate(t, metrics); late != float64(old) {
		t.Fatalf("%v queries dropped as late, want the %d dated two hours ago", late, old)
	}
	// And in the windows' dropped (a snapshot's is the sum of its partials'): one query on each
	// partition dated past the lateness and a slide closes the windows up to now, whose partials
	// then carry every drop.
	closing := time.Now().Add(lateness + slide + time.Second)
	for part := range int32(partitions) {
		user := users[part][0]
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: searchQuery("closing term", closing.UnixMilli(), user)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("%d drops in the partials", old), func() bool { return partialsDropped(t, ctx, r.Admin) >= uint64(old) })
	if n := partialsDropped(t, ctx, r.Admin); n != uint64(old) {
		t.Fatalf("the partials report %d queries dropped, want the %d dated two hours ago", n, old)
	}
	if catchUp {
		// The caught-up partition's queries count: the window ending after the last of them
		// holds every one.
		testenv.WaitFor(t, 30*time.Second, "a window past the last caught-up query", func() bool {
			return latestSnapshot(t, ctx, rdb).WindowEnd.After(lastCaughtUp)
		})
		latest := latestSnapshot(t, ctx, rdb)
		i := slices.IndexFunc(latest.Items, func(it topics.TopKItem) bool { return it.Item == catchUpTerm })
		if i < 0 || latest.Items[i].Count != uint64(caughtUp) {
			t.Fatalf("hot:search:latest (window ending %s) holds %+v of %q, want a count of %d", latest.WindowEnd, latest.Items[max(i, 0):max(i+1, 0)], catchUpTerm, caughtUp)
		}
	}
	t.Logf("%d delayed queries dropped as late, %d counted after catching up", old, caughtUp)
	stop(t, proc)
}

// partialsDropped sums the dropped field of every partial in hot.partials.
func partialsDropped(t *testing.T, ctx context.Context, cl *kafka.Client) (n uint64) {
	t.Helper()
	for _, byPart := range readPartials(t, ctx, cl) {
		for _, p := range byPart {
			n += p.Dropped
		}
	}
	return n
}

// droppedLate reads rankstream_hot_dropped_total{reason="late"} from the /metrics of the
// process listening on addr (0 until exported).
func droppedLate(t *testing.T, addr string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0 // not listening yet
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, found := strings.Cut(sc.Text(), " ")
		if found && strings.HasPrefix(name, "rankstream_hot_dropped_total{") && strings.Contains(name, `reason="late"`) {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	return 0
}

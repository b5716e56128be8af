package hot

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/topics"
)

// sent is what a loopBuffer handed to its producer: records with their acknowledgements, which
// the test gives in the order it chooses.
type sent struct {
	mu   sync.Mutex
	recs []*kgo.Record
	done []func(*kgo.Record, error)
}

func (s *sent) produce(_ context.Context, r *kgo.Record, done func(*kgo.Record, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
	s.done = append(s.done, done)
}

func (s *sent) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// ack acknowledges record i with err.
func (s *sent) ack(i int, err error) {
	s.mu.Lock()
	r, done := s.recs[i], s.done[i]
	s.mu.Unlock()
	done(r, err)
}

// committed records which input offsets' commits were deferred, and the deferred commits
// called, in order.
type committed struct {
	mu       sync.Mutex
	deferred []int64
	offs     []int64
	errs     []error
}

// commit is input record offset's goka.Context.DeferCommit.
func (c *committed) commit(offset int64) func() func(error) {
	return func() func(error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.deferred = append(c.deferred, offset)
		return func(err error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.offs = append(c.offs, offset)
			c.errs = append(c.errs, err)
		}
	}
}

func (c *committed) get() ([]int64, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.offs), slices.Clone(c.errs)
}

func (c *committed) getDeferred() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.deferred)
}

const testLoopPartitions = 4

// le is a loop record's entry.
func le(term string, ms, offset int64) topics.HotLoopEntry {
	return topics.HotLoopEntry{Term: term, Ms: ms, Offset: offset}
}

func newTestBuffer(t *testing.T) (*loopBuffer, *sent, context.CancelFunc) {
	t.Helper()
	session, end := context.WithCancel(context.Background())
	t.Cleanup(end)
	s := &sent{}
	b := newLoopBuffer(context.Background(), s.produce, "loop", markerKeys(testLoopPartitions), 2, newLoopMetrics())
	b.grace = 50 * time.Millisecond
	go b.run(session)
	return b, s, end
}

// terms returns the terms of the HotLoopTerms records among recs, by loop partition.
func terms(t *testing.T, recs []*kgo.Record) map[int32][]topics.HotLoopEntry {
	t.Helper()
	out := map[int32][]topics.HotLoopEntry{}
	for _, r := range recs {
		lr, err := topics.DecodeHotLoopRecord(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if lr.Kind != topics.HotLoopTerms {
			continue
		}
		if lr.Partition != 2 {
			t.Fatalf("a record of input partition %d, want 2", lr.Partition)
		}
		q := kafka.PartitionOf(string(r.Key), testLoopPartitions)
		out[q] = append(out[q], lr.Terms...)
	}
	return out
}

// TestLoopBufferCommitsInOrder: the first input record of a flush, and only it, defers its
// commit (goka's ordered commits hold the records after it behind it); it is committed once
// every record of the flush and of the flushes before it is acknowledged, oldest first,
// whatever the order of the acknowledgements; a record that routes nothing (a dead letter)
// waits for the terms before it.
func TestLoopBufferCommitsInOrder(t *testing.T) {
	b, s, _ := newTestBuffer(t)
	var c committed
	add := func(offset int64, term string) {
		b.add(kafka.PartitionOf(term, testLoopPartitions), term, 1000+offset, offset, c.commit(offset))
	}
	add(0, "snow")
	add(1, "black friday")
	add(2, "snow")
	b.flush(flushTime) // flush 1
	first := s.len()
	b.add(0, "", 0, 0, c.commit(3)) // a dead letter
	add(4, "rain")
	b.flush(flushTime) // flush 2
	b.add(0, "", 0, 0, c.commit(5))
	b.flush(flushTime) // flush 3: no record, only a commit
	if want := map[int32][]topics.HotLoopEntry{
		kafka.PartitionOf("snow", testLoopPartitions):         {le("snow", 1000, 0), le("snow", 1002, 2)},
		kafka.PartitionOf("black friday", testLoopPartitions): {le("black friday", 1001, 1)},
	}; !reflect.DeepEqual(terms(t, s.recs[:first]), want) {
		t.Fatalf("flush 1 wrote %v, want %v", terms(t, s.recs[:first]), want)
	}
	if s.len() != first+1 {
		t.Fatalf("%d records after flush 2, want %d", s.len(), first+1)
	}
	s.ack(first, nil) // flush 2's only record, before flush 1's
	if offs, _ := c.get(); len(offs) != 0 {
		t.Fatalf("committed %v before flush 1 was acknowledged", offs)
	}
	for i := first - 1; i > 0; i-- {
		s.ack(i, nil)
	}
	if offs, _ := c.get(); len(offs) != 0 {
		t.Fatalf("committed %v with a record of flush 1 unacknowledged", offs)
	}
	s.ack(0, nil)
	offs, errs := c.get()
	if !slices.Equal(offs, []int64{0, 3, 5}) || slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		t.Fatalf("committed %v with errors %v, want the flushes' first records 0, 3 and 5 in order without errors", offs, errs)
	}
	if d := c.getDeferred(); !slices.Equal(d, offs) {
		t.Fatalf("deferred the commits of %v, want those of the flushes' first records only, %v", d, offs)
	}
}

// TestLoopBufferFailure: a record that fails fails the commits of its flush and of every later
// flush, even acknowledged ones: nothing after it is ever committed.
func TestLoopBufferFailure(t *testing.T) {
	b, s, _ := newTestBuffer(t)
	var c committed
	boom := errors.New("boom")
	for i := range int64(3) {
		b.add(0, fmt.Sprint("t", i), 0, i, c.commit(i))
		b.flush(flushTime)
	}
	s.ack(2, nil)
	s.ack(1, boom)
	s.ack(0, nil)
	offs, errs := c.get()
	if !slices.Equal(offs, []int64{0, 1, 2}) || errs[0] != nil || !errors.Is(errs[1], boom) || !errors.Is(errs[2], boom) {
		t.Fatalf("committed %v with %v; want 0 committed, 1 and 2 failed", offs, errs)
	}
}

// TestLoopBufferFlushes: a marker goes after the terms buffered before it in every loop
// partition; the buffer flushes by itself on size and on time; the session's end flushes it,
// and so does every record added after it.
func TestLoopBufferFlushes(t *testing.T) {
	t.Run("marker", func(t *testing.T) {
		b, s, _ := newTestBuffer(t)
		var c committed
		b.add(1, "snow", 5, 7, c.commit(7))
		marker := topics.HotLoopRecord{Kind: topics.HotLoopMarker, Ms: 5, Partition: 2}.Encode()
		var markers []*kgo.Record
		for _, k := range markerKeys(testLoopPartitions) {
			markers = append(markers, &kgo.Record{Topic: "loop", Key: []byte(k), Value: marker})
		}
		b.flush(flushMarker, markers...)
		if s.len() != 1+testLoopPartitions || !reflect.DeepEqual(terms(t, s.recs[:1]), map[int32][]topics.HotLoopEntry{1: {le("snow", 5, 7)}}) {
			t.Fatalf("sent %d records, want the terms then %d markers", s.len(), testLoopPartitions)
		}
		for i := range testLoopPartitions {
			s.ack(1+i, nil)
		}
		if offs, _ := c.get(); len(offs) != 0 {
			t.Fatalf("committed %v with the terms unacknowledged", offs)
		}
		s.ack(0, nil)
		if offs, _ := c.get(); !slices.Equal(offs, []int64{7}) {
			t.Fatalf("committed %v, want 7", offs)
		}
	})
	t.Run("size", func(t *testing.T) {
		b, s, _ := newTestBuffer(t)
		var c committed
		term := string(make([]byte, topics.MaxQueryBytes))
		n := 0
		for s.len() == 0 {
			b.add(int32(n%testLoopPartitions), term, 0, int64(n), c.commit(int64(n)))
			n++
			if n > flushBytes {
				t.Fatal("no flush")
			}
		}
		if size := n * (topics.MaxQueryBytes + 4); size < flushBytes || size > flushBytes+2*(topics.MaxQueryBytes+4) {
			t.Fatalf("flushed after %d terms (%d bytes), want about %d bytes", n, size, flushBytes)
		}
		for _, r := range s.recs {
			if len(r.Value) > flushBytes {
				t.Fatalf("a record of %d bytes", len(r.Value))
			}
		}
	})
	t.Run("time", func(t *testing.T) {
		b, s, _ := newTestBuffer(t)
		var c committed
		b.add(0, "snow", 0, 0, c.commit(0))
		deadline := time.Now().Add(time.Minute)
		for s.len() == 0 && time.Now().Before(deadline) {
			time.Sleep(flushEvery / 5)
		}
		if s.len() != 1 {
			t.Fatalf("%d records a minute after a term was buffered, want 1", s.len())
		}
	})
	t.Run("end", func(t *testing.T) {
		b, s, end := newTestBuffer(t)
		var c committed
		b.add(0, "snow", 0, 0, c.commit(0))
		end()
		deadline := time.Now().Add(time.Minute)
		for s.len() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		b.add(0, "rain", 0, 1, c.commit(1)) // after the end: flushed at once
		if s.len() != 2 || !reflect.DeepEqual(terms(t, s.recs), map[int32][]topics.HotLoopEntry{0: {le("snow", 0, 0), le("rain", 0, 1)}}) {
			t.Fatalf("sent %d records, want the term buffered at the end, then the one after it", s.len())
		}
		s.ack(0, nil)
		s.ack(1, nil)
		if offs, _ := c.get(); !slices.Equal(offs, []int64{0, 1}) {
			t.Fatalf("committed %v, want 0 and 1 (each flushed alone)", offs)
		}
		// The records' context ends a grace after the session: the client then fails those
		// still unacknowledged instead of retrying them forever.
		select {
		case <-b.ctx.Done():
		case <-time.After(time.Minute):
			t.Fatal("the records' context still runs a minute after the session ended")
		}
	})
}

// TestTimeUntilDue: the buffer's goroutine wakes when its oldest record has waited flushEvery,
// not later (a ticker of half of it flushed records up to 1.5 times flushEvery old).
func TestTimeUntilDue(t *testing.T) {
	now := time.Unix(1_000, 0)
	for _, c := range []struct {
		name     string
		buffered bool
		age      time.Duration // of the oldest record
		want     time.Duration
	}{
		{"nothing buffered: the next regular wake", false, 0, flushEvery},
		{"nothing buffered, an old since ignored", false, time.Hour, flushEvery},
		{"just buffered", true, 0, flushEvery},
		{"buffered a while: the rest of its wait", true, flushEvery / 5, flushEvery - flushEvery/5},
		{"due to the nanosecond", true, flushEvery, 0},
		{"overdue", true, 3 * flushEvery, 0},
	} {
		if got := timeUntilDue(c.buffered, now.Add(-c.age), now); got != c.want {
			t.Errorf("%s: timeUntilDue = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestInflight: a checkpoint's wait for the partials returns once all are acknowledged, with
// the first failure, or when its context ends first.
func TestInflight(t *testing.T) {
	var f inflight
	if err := f.wait(context.Background()); err != nil {
		t.Fatalf("wait with nothing in flight: %v", err)
	}
	f.add()
	f.add()
	f.done(nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := f.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with a partial in flight: %v, want the context's end", err)
	}
	boom := errors.New("boom")
	waited := make(chan error, 1)
	go func() { waited <- f.wait(context.Background()) }()
	f.done(nil, boom)
	if err := <-waited; !errors.Is(err, boom) {
		t.Fatalf("wait: %v, want the failure", err)
	}
	f.add()
	f.done(nil, nil)
	if err := f.failed(); !errors.Is(err, boom) {
		t.Fatalf("failed: %v, want the first failure kept", err)
	}
}

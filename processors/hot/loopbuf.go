package hot

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// When an input partition's buffered terms are flushed to the loop topic (loopBuffer).
const (
	// flushEvery is the longest a term waits in the buffer. A window never waits for it: the
	// marker that closes a window flushes its partition's terms first.
	flushEvery = 50 * time.Millisecond
	// flushBytes is the buffered size (all loop partitions together) that flushes at once: a
	// loop record stays below it, well under the loop topic's max.message.bytes.
	flushBytes = 256 << 10
	// endGrace is how long the loop records of a session may wait for Kafka after the session
	// ended (the broker gone): then their context ends and the client fails those it can (not
	// one a request awaiting an answer carries), their input records are not committed, and
	// goka stops the processor instead of waiting for them (it waits up to 60 s).
	endGrace = 10 * time.Second
)

// Why a buffer was flushed: the label of rankstream_hot_loop_flushes_total.
const (
	flushSize   = "size"   // flushBytes buffered
	flushTime   = "time"   // its oldest record waited flushEvery
	flushMarker = "marker" // a watermark marker goes after the terms
	flushIdle   = "idle"   // an idle marker goes after the terms (idle.go)
	flushEnd    = "end"    // the session ended (revoked, stopping)
)

// produceFunc hands a record to Kafka and calls done once it was acknowledged or failed
// (kafka.Client.Produce).
type produceFunc func(ctx context.Context, r *kgo.Record, done func(*kgo.Record, error))

// loopBuffer gathers the terms one input partition routes (route) into one HotLoopTerms record
// per loop partition, and writes them to the loop topic when flushBytes are buffered, when the
// oldest waited flushEvery, before a watermark or idle marker and when the goka session ends. The input
// records are committed only once the loop records of their flush, and of every flush before
// it, are acknowledged, so that no commit covers a query not yet in the loop topic (the commit
// is a high-water mark): the commit of a flush's first input record is deferred (goka's
// DeferCommit) and called then, in flush order. The records after it in the flush are
// committed by goka as soon as their callbacks return, and that is enough: goka's commits go
// through the processor options' offset-ordered commits (kafka.Config.ProcessorOptions, the
// only options hot.Run is given), which pass a record's commit on to Kafka only once every
// record before it is committed, so they wait for the first one. One deferred commit a flush
// instead of one a query: goka's DeferCommit costs allocations and keeps the record's context
// alive until the flush is acknowledged.
//
// route's goroutine adds and flushes; a goroutine of the buffer flushes on time and at the
// session's end; the producer's goroutines acknowledge.
type loopBuffer struct {
	produce produceFunc
	ctx     context.Context // the records': outlives the session by grace, so that the last flush goes out
	cancel  context.CancelFunc
	grace   time.Duration
	topic   string
	keys    []string // a key of each loop partition
	input   int32
	metrics *loopMetrics

	mu      sync.Mutex
	terms   []topics.HotLoopTermsWriter // one per loop partition
	commit  func(error)                 // the deferred commit of the first input record since the last flush (nil: none since)
	queries int                         // terms buffered
	size    int                         // their bytes
	since   time.Time                   // when the first input record since the last flush came
	shown   int                         // of queries, those in rankstream_hot_loop_pending_queries (updated every tick)
	closed  bool                        // the session ended: every record is flushed at once
	next    int64                       // the input offset after the last record added (-1: none yet)
	idled   bool                        // an idle marker went after the last term: the next term sends a marker first

	acks ackQueue
}

// newLoopBuffer returns input partition input's buffer for a goka session; run it (run) until
// the session ends. ctx is the producer's context.
func newLoopBuffer(ctx context.Context, produce produceFunc, topic string, keys []string, input int32, m *loopMetrics) *loopBuffer {
	b := &loopBuffer{produce: produce, topic: topic, keys: keys, input: input, metrics: m, grace: endGrace,
		terms: make([]topics.HotLoopTermsWriter, len(keys)), next: -1}
	b.ctx, b.cancel = context.WithCancel(ctx)
	for q := range b.terms {
		b.terms[q].Reset(input, nil)
	}
	b.acks.metrics = m
	return b
}

// run flushes the buffer when its oldest record waited flushEvery, and once more when the
// session ends; grace (endGrace) later, the records still unacknowledged fail. It wakes every
// flushEvery, and in between at the moment the oldest record is due (timeUntilDue), so that
// no record waits longer than flushEvery (a ticker of half of it let records wait up to 1.5
// times as long).
func (b *loopBuffer) run(session context.Context) {
	t := time.NewTimer(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-session.Done():
			b.mu.Lock()
			b.closed = true
			b.flushLocked(flushEnd)
			b.mu.Unlock()
			time.AfterFunc(b.grace, b.cancel)
			return
		case now := <-t.C:
			b.mu.Lock()
			wait := timeUntilDue(b.commit != nil, b.since, now)
			if wait == 0 {
				b.flushLocked(flushTime)
				wait = flushEvery
			} else {
				b.metrics.pending.Add(float64(b.queries - b.shown))
				b.shown = b.queries
			}
			b.mu.Unlock()
			t.Reset(wait)
		}
	}
}

// timeUntilDue is how long after now the buffer's oldest record, buffered since since, has
// waited flushEvery: 0 when it has, flushEvery when nothing is buffered.
func timeUntilDue(buffered bool, since, now time.Time) time.Duration {
	if !buffered {
		return flushEvery
	}
	return max(since.Add(flushEvery).Sub(now), 0)
}

// add buffers the term of input record offset for loop partition q (term "": a record that
// routes nothing, a dead letter). deferCommit is the record's goka.Context.DeferCommit: add
// calls it if the record is the first since the last flush (see loopBuffer), under the lock
// that a flush on time takes too. After an idle marker, a watermark marker at the term's
// event time goes first: the partition holds the windows back again in every loop partition
// before its term arrives in one.
func (b *loopBuffer) add(q int32, term string, ms, offset int64, deferCommit func() func(error)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next = offset + 1
	if b.idled && term != "" {
		b.idled = false
		b.flushLocked(flushMarker, b.markers(topics.HotLoopRecord{Kind: topics.HotLoopMarker, Ms: ms, Partition: b.input})...)
	}
	if b.commit == nil {
		b.since = time.Now()
		b.commit = deferCommit()
	}
	if term != "" {
		w := &b.terms[q]
		before := w.Size()
		w.Add(term, ms, offset)
		b.size += w.Size() - before
		b.queries++
	}
	switch {
	case b.closed:
		b.flushLocked(flushEnd)
	case b.size >= flushBytes:
		b.flushLocked(flushSize)
	}
}

// flush writes the buffered terms, then watermark markers (records of their own, after the
// terms in every loop partition they go to).
func (b *loopBuffer) flush(reason string, markers ...*kgo.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idled = false
	b.flushLocked(reason, markers...)
}

// markers returns the marker r (a watermark or idle marker of this buffer's input partition)
// as one record for each loop partition.
func (b *loopBuffer) markers(r topics.HotLoopRecord) []*kgo.Record {
	return markerRecords(b.topic, b.keys, r)
}

func markerRecords(topic string, keys []string, r topics.HotLoopRecord) []*kgo.Record {
	value := r.Encode()
	recs := make([]*kgo.Record, len(keys))
	for q, k := range keys {
		recs[q] = &kgo.Record{Topic: topic, Key: []byte(k), Value: value}
	}
	return recs
}

// position returns the input offset after the last record added; ok is false before the
// first one and once the session ended (the next session starts from the committed offset).
func (b *loopBuffer) position() (next int64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next, b.next >= 0 && !b.closed
}

// idle writes the buffered terms, then an idle marker for every loop partition, if the session
// is live and no record was added since the one before input offset next (the position the
// watcher judged): every term read is then before the marker.
func (b *loopBuffer) idle(next int64) (sent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.next != next {
		return false
	}
	b.flushLocked(flushIdle, b.markers(topics.HotLoopRecord{Kind: topics.HotLoopIdle, Partition: b.input, Offset: next})...)
	b.idled = true
	return true
}

func (b *loopBuffer) flushLocked(reason string, markers ...*kgo.Record) {
	if b.commit == nil && len(markers) == 0 {
		return
	}
	recs := make([]*kgo.Record, 0, len(b.terms)+len(markers))
	for q := range b.terms {
		w := &b.terms[q]
		if w.Len() == 0 {
			continue
		}
		recs = append(recs, &kgo.Record{Topic: b.topic, Key: []byte(b.keys[q]), Value: w.Bytes()})
		w.Reset(b.input, make([]byte, 0, cap(w.Bytes()))) // the record keeps the old memory
	}
	b.metrics.flushed(reason, b.queries, len(recs), len(markers))
	recs = append(recs, markers...)
	f := &flush{pending: len(recs), commit: b.commit, queries: b.queries}
	b.commit, b.queries, b.size = nil, 0, 0
	b.metrics.pending.Sub(float64(b.shown)) // now in f
	b.shown = 0
	b.acks.push(f)
	for _, r := range recs {
		b.produce(b.ctx, r, func(_ *kgo.Record, err error) { b.acks.done(f, err) })
	}
}

// flush is one flush's records on their way: its input records are committed (its first one's
// deferred commit is called) once all of them and every earlier flush's are acknowledged.
type flush struct {
	pending int         // records not yet acknowledged
	err     error       // the first record's failure
	commit  func(error) // the deferred commit of its first input record (nil: a flush of markers only)
	queries int         // terms in its records
}

// ackQueue holds an input partition's flushes in order and commits their input records in
// order. After a failed flush every later one fails too: its first input record's commit
// fails, so that none of its input records is ever committed (goka stops the processor on the
// failure; the next owner reads them again).
type ackQueue struct {
	mu      sync.Mutex
	q       []*flush
	failed  error
	metrics *loopMetrics
}

func (a *ackQueue) push(f *flush) {
	a.mu.Lock()
	a.q = append(a.q, f)
	a.metrics.pending.Add(float64(f.queries))
	a.mu.Unlock()
	if f.pending == 0 { // nothing to write: committed once the flushes before it are
		a.done(f, nil)
	}
}

// done records that one of f's records was acknowledged (err nil) or failed (a flush without
// records calls it once, from push), and commits the input records of the flushes at the head
// that are complete.
func (a *ackQueue) done(f *flush, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f.pending > 0 {
		f.pending--
	}
	if err != nil && f.err == nil {
		f.err = err
	}
	for len(a.q) > 0 && a.q[0].pending == 0 {
		head := a.q[0]
		a.q[0] = nil
		a.q = a.q[1:]
		if a.failed == nil && head.err != nil {
			a.failed = head.err
		}
		if head.commit != nil {
			head.commit(a.failed)
		}
		a.metrics.pending.Sub(float64(head.queries))
	}
}

// loopMetrics are the loop buffers' metrics (all partitions of a process together).
type loopMetrics struct {
	flushes map[string]prometheus.Counter
	queries prometheus.Observer // terms per flush
	records prometheus.Counter  // loop records written (terms and markers)
	pending prometheus.Gauge    // terms routed and not yet acknowledged
}

func newLoopMetrics() *loopMetrics {
	m := &loopMetrics{flushes: map[string]prometheus.Counter{}, queries: obs.HotLoopFlushQueries,
		records: obs.HotLoopRecords, pending: obs.HotLoopPending}
	for _, r := range []string{flushSize, flushTime, flushMarker, flushIdle, flushEnd} {
		m.flushes[r] = obs.HotLoopFlushes.WithLabelValues(r)
	}
	return m
}

// flushed counts a flush of queries terms in terms records, with markers marker records.
func (m *loopMetrics) flushed(reason string, queries, terms, markers int) {
	m.flushes[reason].Inc()
	m.queries.Observe(float64(queries))
	m.records.Add(float64(terms + markers))
}

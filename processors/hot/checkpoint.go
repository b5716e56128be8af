package hot

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/kafka"
)

// A checkpoint is one loop partition's whole state after the loop record at loopOffset: the
// window, the input offsets already counted, the input watermarks and the last window end
// emitted, and the input partitions' first watermarks (before a window was emitted they fix
// the first one). With the loop records after loopOffset it rebuilds the state exactly.
type checkpoint struct {
	loopOffset int64
	endMs      int64
	dropped    uint64 // events dropped since the window at endMs, for the next partial
	shape      shape
	seen       map[int32]int64
	marks      map[int32]int64
	first      map[int32]int64
	held       []heldTerm // terms beyond the sketch's reach, waiting for the window
	window     []byte     // sketch.Window.MarshalBinary
}

// heldTerm is a term a loop partition holds until the window reaches its event time.
type heldTerm struct {
	ms   int64
	term string
}

// shape is the configuration a checkpoint's window was made with; a checkpoint of another
// shape is not used.
type shape struct{ windowMs, slideMs, lookaheadMs, k int64 }

// checkpointVersion 2 added dropped and held; version 1 is read without them.
const checkpointVersion byte = 2

var errBadCheckpoint = errors.New("hot: malformed checkpoint")

func (c *checkpoint) encode() []byte {
	b := make([]byte, 0, 1+7*8+12*(len(c.seen)+len(c.marks)+len(c.first))+len(c.window))
	b = append(b, checkpointVersion)
	for _, v := range []int64{c.loopOffset, c.endMs, int64(c.dropped), c.shape.windowMs, c.shape.slideMs, c.shape.lookaheadMs, c.shape.k} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, m := range []map[int32]int64{c.seen, c.marks, c.first} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
		for _, part := range slices.Sorted(maps.Keys(m)) {
			b = binary.LittleEndian.AppendUint32(b, uint32(part))
			b = binary.LittleEndian.AppendUint64(b, uint64(m[part]))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.held)))
	for _, t := range c.held {
		b = binary.LittleEndian.AppendUint64(b, uint64(t.ms))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.term)))
		b = append(b, t.term...)
	}
	return append(b, c.window...)
}

func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) < 1+6*8 || b[0] < 1 || b[0] > checkpointVersion || b[0] == 2 && len(b) < 1+7*8 {
		return nil, errBadCheckpoint
	}
	version := b[0]
	b = b[1:]
	next := func() int64 { v := int64(binary.LittleEndian.Uint64(b)); b = b[8:]; return v }
	c := &checkpoint{loopOffset: next(), endMs: next()}
	if version >= 2 {
		c.dropped = uint64(next())
	}
	c.shape = shape{windowMs: next(), slideMs: next(), lookaheadMs: next(), k: next()}
	// count reads a list's length, which must fit in what is left at 12 bytes an entry at least.
	count := func() (int, bool) {
		if len(b) < 4 {
			return 0, false
		}
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		return n, n <= len(b)/12
	}
	for _, m := range []*map[int32]int64{&c.seen, &c.marks, &c.first} {
		n, ok := count()
		if !ok {
			return nil, errBadCheckpoint
		}
		*m = make(map[int32]int64, n)
		for range n {
			(*m)[int32(binary.LittleEndian.Uint32(b))] = int64(binary.LittleEndian.Uint64(b[4:]))
			b = b[12:]
		}
	}
	if version >= 2 {
		n, ok := count()
		if !ok {
			return nil, errBadCheckpoint
		}
		for range n {
			if len(b) < 12 || int(binary.LittleEndian.Uint32(b[8:])) > len(b)-12 {
				return nil, errBadCheckpoint
			}
			ms, size := int64(binary.LittleEndian.Uint64(b)), int(binary.LittleEndian.Uint32(b[8:]))
			c.held = append(c.held, heldTerm{ms: ms, term: string(b[12 : 12+size])})
			b = b[12+size:]
		}
	}
	c.window = b
	return c, nil
}

// kafkaIO writes partials and checkpoints synchronously through the process's Kafka client, so
// that a checkpoint is stored only after every partial emitted before it, and reads a
// partition's latest checkpoint and loop records back.
type kafkaIO struct{ cl *kafka.Client }

// produce stores records and returns once the brokers acknowledged all of them. franz-go
// retries until ctx ends, so a broker that is down holds the partition back (and its offsets
// uncommitted) instead of losing a partial.
func (k *kafkaIO) produce(ctx context.Context, recs ...*kgo.Record) error {
	if err := k.cl.ProduceSync(ctx, recs...); err != nil {
		return fmt.Errorf("hot: %w", err)
	}
	return nil
}

// end returns a partition's end offset (the offset its next record will get).
func (k *kafkaIO) end(ctx context.Context, topic string, partition int32) (int64, error) {
	end, err := k.cl.EndOffset(ctx, topic, partition)
	if err != nil {
		return 0, fmt.Errorf("hot: %w", err)
	}
	return end, nil
}

// latest returns the last record of a partition, or nil when the partition is empty.
func (k *kafkaIO) latest(ctx context.Context, topic string, partition int32) (*kgo.Record, error) {
	end, err := k.end(ctx, topic, partition)
	if err != nil || end == 0 {
		return nil, err // compacted topics keep a partition's last record: only a new one is empty
	}
	var last *kgo.Record
	err = k.read(ctx, topic, partition, end-1, end, func(r *kgo.Record) error { last = r; return nil })
	return last, err
}

// read calls fn for each record of a partition at offsets in [from, to), in order.
func (k *kafkaIO) read(ctx context.Context, topic string, partition int32, from, to int64, fn func(*kgo.Record) error) error {
	if err := k.cl.Read(ctx, topic, map[int32]int64{partition: from}, map[int32]int64{partition: to}, fn); err != nil {
		return fmt.Errorf("hot: read %s/%d: %w", topic, partition, err)
	}
	return nil
}

package merge

import (
	"fmt"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// BenchmarkMergeWindow is the merge group's work for one window of 8 partitions, as its
// callback does it for each partial (goka decodes the partial and the window's table value,
// the callback decides, publishing when complete, and the table value is encoded again),
// without Kafka or the stores: partials of 100 items each, terms of 8-20 bytes.
func BenchmarkMergeWindow(b *testing.B) {
	const parts, k = 8, 100
	r := mergeRules{partitions: parts, k: k, wait: DefaultMergeWait, ttl: mergeTTL, started: mergeT0}
	records := make([][]byte, parts)
	for p := range int32(parts) {
		part := &topics.HotPartial{Partition: p, WindowStart: testWindowEnd - 3_600_000, WindowEnd: testWindowEnd, Dropped: 3}
		for i := range k {
			part.Items = append(part.Items, topics.PartialItem{Item: fmt.Sprintf("term %d of p%d", i*7919%100000, p),
				Count: uint64(100_000 / (i + 1)), Error: uint64(i % 3)})
		}
		v, err := topics.HotPartialCodec{}.Encode(part)
		if err != nil {
			b.Fatal(err)
		}
		records[p] = v
	}
	b.ReportAllocs()
	for b.Loop() {
		var stored []byte
		for i, rec := range records {
			v, err := topics.HotPartialCodec{}.Decode(rec)
			if err != nil {
				b.Fatal(err)
			}
			var st *pending
			if stored != nil {
				s, err := pendingCodec{}.Decode(stored)
				if err != nil {
					b.Fatal(err)
				}
				st = s.(*pending)
			}
			now := mergeT0.Add(time.Duration(i) * time.Millisecond)
			st, _, due := r.onPartial(st, v.(*topics.HotPartial), now)
			if due {
				if snap := r.snapshot(st, now); len(snap.Items) != k {
					b.Fatalf("snapshot of %d items", len(snap.Items))
				}
				r.published(st, now)
			}
			if stored, err = (pendingCodec{}).Encode(st); err != nil {
				b.Fatal(err)
			}
		}
	}
}

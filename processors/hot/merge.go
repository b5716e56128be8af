package hot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// Publisher stores a merged snapshot (Redis, ClickHouse). Publish must be idempotent: after a
// crash the same snapshot can be published again.
type Publisher interface {
	Publish(ctx context.Context, s topics.TopKSnapshot) error
}

// partialCodec is the JSON codec of *Partial.
type partialCodec struct{}

func (partialCodec) Encode(v any) ([]byte, error) {
	p, ok := v.(*Partial)
	if !ok {
		return nil, fmt.Errorf("hot: partial codec: got %T", v)
	}
	return json.Marshal(p)
}

func (partialCodec) Decode(b []byte) (any, error) {
	p := new(Partial)
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("hot: partial codec: %w", err)
	}
	return p, nil
}

// pending is the merge table's value: the partials of one window received so far.
type pending struct {
	Partials []Partial `json:"partials"`
}

type pendingCodec struct{}

func (pendingCodec) Encode(v any) ([]byte, error) { return json.Marshal(v) }

func (pendingCodec) Decode(b []byte) (any, error) {
	p := new(pending)
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("hot: merge state: %w", err)
	}
	return p, nil
}

type merger struct {
	cfg Config
	pub Publisher
}

// MergeGraph returns the merge group's graph: partials are keyed by window end, so all the
// partials of a window meet in one partition; once every partition reported, their lists
// (disjoint, since terms are partitioned) are merged exactly and published.
func MergeGraph(cfg Config, pub Publisher) *goka.GroupGraph {
	cfg.defaults()
	m := &merger{cfg: cfg, pub: pub}
	return goka.DefineGroup(cfg.Names.Group(topics.HotMergeGroup),
		goka.Input(cfg.Names.Stream(topics.HotPartials), partialCodec{}, m.merge),
		goka.Persist(pendingCodec{}),
	)
}

// RunMerge runs the merge group until ctx ends.
func RunMerge(ctx context.Context, cfg Config, pub Publisher, brokers []string, opts ...goka.ProcessorOption) error {
	proc, err := goka.NewProcessor(brokers, MergeGraph(cfg, pub), opts...)
	if err != nil {
		return fmt.Errorf("hot merge: %w", err)
	}
	if err := proc.Run(ctx); err != nil {
		return fmt.Errorf("hot merge: %w", err)
	}
	return nil
}

func (m *merger) merge(ctx goka.Context, msg any) {
	part, ok := msg.(*Partial)
	if !ok {
		return
	}
	st, _ := ctx.Value().(*pending)
	if st == nil {
		st = new(pending)
	}
	i := slices.IndexFunc(st.Partials, func(p Partial) bool { return p.Partition == part.Partition })
	if i >= 0 {
		st.Partials[i] = *part // a partial sent again after a crash: the same content
	} else {
		st.Partials = append(st.Partials, *part)
	}
	if len(st.Partials) < m.cfg.Partitions {
		ctx.SetValue(st)
		return
	}
	lists := make([][]sketch.Item, len(st.Partials))
	for i, p := range st.Partials {
		lists[i] = p.Items
	}
	snap := topics.TopKSnapshot{
		Stream:      topics.SearchStream,
		WindowStart: time.UnixMilli(part.WindowStart).UTC(),
		WindowEnd:   time.UnixMilli(part.WindowEnd).UTC(),
		GeneratedAt: time.Now().UTC(),
		Version:     part.WindowEnd,
		Items:       []topics.TopKItem{},
	}
	for _, it := range sketch.MergeTopK(m.cfg.K, lists...) {
		snap.Items = append(snap.Items, topics.TopKItem{Item: it.Item, Count: it.Count, Error: it.Error})
	}
	m.publish(ctx, snap)
	ctx.Delete()
}

// publish retries with backoff until the snapshot is stored: the record is committed only
// after, so nothing is lost while a store is down.
func (m *merger) publish(ctx goka.Context, snap topics.TopKSnapshot) {
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := m.pub.Publish(ctx.Context(), snap)
		if err == nil {
			return
		}
		m.log().Warn("hot merge: publish failed, retrying", "attempt", attempt, "window_end", snap.WindowEnd, "err", err)
		select {
		case <-ctx.Context().Done():
			ctx.Fail(fmt.Errorf("hot merge: publish %s: %w", snap.WindowEnd, err))
			return
		case <-time.After(wait + rand.N(wait/2)):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (m *merger) log() *slog.Logger {
	if m.cfg.Log != nil {
		return m.cfg.Log
	}
	return slog.Default()
}

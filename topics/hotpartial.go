package topics

import (
	"fmt"

	"github.com/segmentio/encoding/json"

	"github.com/rankstream/rankstream/sketch"
)

// HotPartial is one partition of the hot group's Top-K of one window: the value of a record of
// HotPartials, keyed by the window end (Unix ms, decimal). The merge group merges a window's
// partials (disjoint: terms are partitioned) into its snapshot.
type HotPartial struct {
	Partition   int32         `json:"partition"`
	WindowStart int64         `json:"window_start_ms"`
	WindowEnd   int64         `json:"window_end_ms"`
	Items       []PartialItem `json:"items"`
	// Dropped is how many events this partition dropped (late, or any other reason) since its
	// previous partial: the window's snapshot reports their sum.
	Dropped uint64 `json:"dropped,omitempty"`
}

// PartialItem is one counted term of a HotPartial: its estimate and the estimate's error
// bound. The JSON names are the ones hot.partials has always carried.
type PartialItem struct {
	Item  string `json:"Item"`
	Count uint64 `json:"Count"`
	Error uint64 `json:"Error"`
}

// PartialItems converts a sketch's Top-K to the items of a partial.
func PartialItems(items []sketch.Item) []PartialItem {
	out := make([]PartialItem, len(items))
	for i, it := range items {
		out[i] = PartialItem(it)
	}
	return out
}

// SketchItems returns the partial's items as the sketch's, to merge them (sketch.MergeTopK).
func (p *HotPartial) SketchItems() []sketch.Item { return SketchItems(p.Items) }

// SketchItems converts the items of a partial to the sketch's.
func SketchItems(items []PartialItem) []sketch.Item {
	out := make([]sketch.Item, len(items))
	for i, it := range items {
		out[i] = sketch.Item(it)
	}
	return out
}

// HotPartialCodec is the goka.Codec of *HotPartial (JSON).
type HotPartialCodec struct{}

// Encode marshals a *HotPartial.
func (HotPartialCodec) Encode(v any) ([]byte, error) {
	p, ok := v.(*HotPartial)
	if !ok {
		return nil, fmt.Errorf("hot partial codec: expected *HotPartial, got %T", v)
	}
	return json.Marshal(p)
}

// Decode unmarshals a *HotPartial.
func (HotPartialCodec) Decode(b []byte) (any, error) {
	p := new(HotPartial)
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("hot partial codec: %w", err)
	}
	return p, nil
}

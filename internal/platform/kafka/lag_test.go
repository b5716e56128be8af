package kafka

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLagGaugesPerPartition: rankstream_consumer_lag has a series per owned partition, a
// negative lag shows as 0, and a partition no longer owned (a rebalance, the end) is dropped.
func TestLagGaugesPerPartition(t *testing.T) {
	const group = "unit-lag"
	series := func() map[string]float64 {
		mfs, err := prometheus.DefaultGatherer.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() != "rankstream_consumer_lag" {
				continue
			}
			for _, m := range mf.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if l["group"] == group {
					got[l["topic"]+"/"+l["partition"]] = m.GetGauge().GetValue()
				}
			}
		}
		return got
	}
	g := lagGauges{group: group, shown: map[Partition]bool{}}
	for i, step := range []struct {
		lags map[Partition]int64
		want map[string]float64
	}{
		{map[Partition]int64{{"in", 0}: 5, {"in", 1}: -1, {"loop", 0}: 7}, map[string]float64{"in/0": 5, "in/1": 0, "loop/0": 7}},
		{map[Partition]int64{{"in", 1}: 3}, map[string]float64{"in/1": 3}},
		{nil, map[string]float64{}},
	} {
		g.set(step.lags)
		if got := series(); !maps.Equal(got, step.want) {
			t.Errorf("step %d: series %v, want %v", i, got, step.want)
		}
	}
}

package loadgen

import (
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

var searchStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// decodeAll runs n instants one step apart through g and decodes every record as the
// pipeline would, failing on an invalid one.
func decodeAll(t *testing.T, g *Search, n int, step time.Duration, f func(at time.Time, r Record, q *topics.SearchQuery, term string)) {
	t.Helper()
	for i := range n {
		at := searchStart.Add(time.Duration(i) * step)
		recs := g.Next(at)
		if len(recs) != 1 {
			t.Fatalf("Next returned %d records, want 1", len(recs))
		}
		q, term, err := topics.DecodeSearchQuery(recs[0].Key, recs[0].Value, recs[0].Time)
		if err != nil {
			t.Fatalf("generated an invalid query: %v: %s", err, recs[0].Value)
		}
		f(at, recs[0], q, term)
	}
}

func TestSearchQueriesAreValidAndVaried(t *testing.T) {
	g, err := NewSearch(SearchConfig{Terms: 500, Users: 50, VariantRatio: 0.5, Seed: 7,
		Trends: []Trend{{Term: "  Black   FRIDAY ", Peak: searchStart, Width: time.Hour, Share: 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	variants, trend := 0, 0
	spellings := map[string]map[string]bool{} // term -> raw spellings
	decodeAll(t, g, n, time.Millisecond, func(at time.Time, r Record, q *topics.SearchQuery, term string) {
		if r.Key != q.UserID || !strings.HasPrefix(r.Key, "u") || !r.Time.Equal(at) || !q.TS.Equal(at) {
			t.Fatalf("record key %q time %s, query %+v at %s", r.Key, r.Time, q, at)
		}
		if q.Query != term {
			variants++
		}
		if term == "black friday" {
			trend++
		}
		if spellings[term] == nil {
			spellings[term] = map[string]bool{}
		}
		spellings[term][q.Query] = true
	})
	if share := float64(variants) / n; share < 0.45 || share > 0.55 {
		t.Errorf("%.3f of queries are variant spellings, want about 0.5", share)
	}
	if len(spellings["black friday"]) < 10 || len(spellings["weather"]) < 10 {
		t.Errorf("%d spellings of the trend, %d of the top term", len(spellings["black friday"]), len(spellings["weather"]))
	}
	// Near its peak the trend makes about 10% of the queries.
	if share := float64(trend) / n; share < 0.09 || share > 0.11 {
		t.Errorf("trend share %.3f at its peak, want about 0.1", share)
	}
}

// TestSearchTrendRisesAndFalls measures a planted term's share in windows around its peak
// against the triangle it should follow.
func TestSearchTrendRisesAndFalls(t *testing.T) {
	peak := searchStart.Add(2 * time.Hour)
	g, err := NewSearch(SearchConfig{Terms: 1000, Seed: 1, Trends: []Trend{
		{Term: "snow storm", Peak: peak, Width: time.Hour, Share: 0.2},
		{Term: "heat wave", Peak: peak.Add(30 * time.Minute), Width: 10 * time.Minute, Share: 0.3},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Four hours of event time, one query every 50 ms, counted in 15-minute buckets.
	const bucket = 15 * time.Minute
	type tally struct{ all, snow, heat int }
	buckets := make([]tally, 16)
	decodeAll(t, g, 4*3600*20, 50*time.Millisecond, func(at time.Time, _ Record, _ *topics.SearchQuery, term string) {
		b := &buckets[at.Sub(searchStart)/bucket]
		b.all++
		switch term {
		case "snow storm":
			b.snow++
		case "heat wave":
			b.heat++
		}
	})
	for i, b := range buckets {
		mid := searchStart.Add(time.Duration(i)*bucket + bucket/2)
		// The triangle is linear within a bucket that does not hold its peak or ends, so the
		// share there equals the share at the bucket's middle.
		want := (&Trend{Peak: peak, Width: time.Hour, Share: 0.2}).shareAt(mid)
		got := float64(b.snow) / float64(b.all)
		if d := got - want; d > 0.01 || d < -0.01 {
			t.Errorf("bucket %d (%s): snow storm share %.3f, want %.3f", i, mid.Format("15:04"), got, want)
		}
		heatSpan := mid.Sub(peak.Add(30*time.Minute)).Abs() < bucket/2+10*time.Minute
		if !heatSpan && b.heat != 0 {
			t.Errorf("bucket %d (%s): %d heat wave queries outside its span", i, mid.Format("15:04"), b.heat)
		}
	}
	// The heat wave's whole span (20 minutes, peak share 0.3) holds its triangle's area:
	// 0.3 × 10 minutes of queries.
	heat := 0
	for _, b := range buckets {
		heat += b.heat
	}
	if want := 0.3 * 600 * 20; float64(heat) < 0.95*want || float64(heat) > 1.05*want {
		t.Errorf("%d heat wave queries, want about %.0f", heat, want)
	}
}

func TestSearchSameSeedSameStream(t *testing.T) {
	cfg := SearchConfig{Terms: 300, VariantRatio: 0.3, Seed: 9,
		Trends: []Trend{{Term: "x", Peak: searchStart, Width: time.Minute, Share: 0.5}}}
	a, _ := NewSearch(cfg)
	b, _ := NewSearch(cfg)
	cfg.Seed = 10
	c, _ := NewSearch(cfg)
	differ := false
	for i := range 2000 {
		at := searchStart.Add(time.Duration(i) * 100 * time.Millisecond)
		ra, rb, rc := a.Next(at)[0], b.Next(at)[0], c.Next(at)[0]
		if ra.Key != rb.Key || string(ra.Value) != string(rb.Value) {
			t.Fatalf("record %d differs with the same seed: %s vs %s", i, ra.Value, rb.Value)
		}
		differ = differ || string(ra.Value) != string(rc.Value)
	}
	if !differ {
		t.Fatal("another seed gave the same stream")
	}
}

func TestSearchVocabulary(t *testing.T) {
	seen := map[string]int{}
	for k := range 70_000 {
		term := vocabTerm(k)
		if prev, dup := seen[term]; dup {
			t.Fatalf("ranks %d and %d are both %q", prev, k, term)
		}
		if topics.Normalize(term) != term || term == "" {
			t.Fatalf("rank %d: %q is not a normalised term", k, term)
		}
		seen[term] = k
	}
	if vocabTerm(0) != "weather" || vocabTerm(len(vocabWords)) != "weather weather" {
		t.Fatalf("first terms %q, %q", vocabTerm(0), vocabTerm(len(vocabWords)))
	}
}

func TestSearchVariantsOfUnicodeTerms(t *testing.T) {
	g, err := NewSearch(SearchConfig{Terms: 1, VariantRatio: 1, Seed: 3,
		Trends: []Trend{{Term: "Straße in KÖLN", Peak: searchStart, Width: time.Hour, Share: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	decodeAll(t, g, 1000, time.Millisecond, func(_ time.Time, _ Record, q *topics.SearchQuery, term string) {
		if term != "strasse in köln" {
			t.Fatalf("variant %q normalises to %q", q.Query, term)
		}
	})
}

func TestSearchRejectsBadConfigs(t *testing.T) {
	tr := func(term string, width time.Duration, share float64) Trend {
		return Trend{Term: term, Peak: searchStart, Width: width, Share: share}
	}
	for name, cfg := range map[string]SearchConfig{
		"negative skew":           {Skew: -1},
		"too many terms":          {Terms: MaxTerms + 1},
		"negative terms":          {Terms: -5},
		"variant ratio above 1":   {VariantRatio: 1.5},
		"empty trend term":        {Trends: []Trend{tr("  ", time.Hour, 0.1)}},
		"oversized trend term":    {Trends: []Trend{tr(strings.Repeat("a", 257), time.Hour, 0.1)}},
		"same trend twice":        {Trends: []Trend{tr("a", time.Hour, 0.1), tr(" A ", time.Hour, 0.1)}},
		"zero width":              {Trends: []Trend{tr("a", 0, 0.1)}},
		"zero share":              {Trends: []Trend{tr("a", time.Hour, 0)}},
		"shares over all queries": {Trends: []Trend{tr("a", time.Hour, 0.6), tr("b", time.Hour, 0.6)}},
	} {
		if _, err := NewSearch(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

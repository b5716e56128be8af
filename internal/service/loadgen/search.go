package loadgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// MaxTerms bounds the vocabulary of a search stream (about 8 MB of sampler table and the
// terms' text).
const MaxTerms = 1_000_000

// SearchConfig shapes a search-query stream. Zero fields take the defaults in brackets.
type SearchConfig struct {
	// Terms is the vocabulary size [10,000]: readable terms ("weather", "pizza weather", ...)
	// whose popularity follows a Zipf law: the term of rank k (1 = most popular) is drawn with
	// probability proportional to k^-Skew.
	Terms int
	// Skew is the Zipf exponent, any value > 0 [1.0].
	Skew float64
	// Users is the number of distinct users; records are keyed by user id [10,000].
	Users int
	// Trends are planted terms whose share of the stream rises and falls over event time.
	Trends []Trend
	// VariantRatio of queries are sent with a random raw spelling (upper case letters, extra
	// white space) that normalises to the same term [0].
	VariantRatio float64
	Seed         uint64
}

// Trend is a planted term: at event time t it makes Share × max(0, 1 − |t − Peak| / Width) of
// all queries, a triangle that rises from zero at Peak − Width to Share at Peak and falls back
// to zero at Peak + Width. Outside that span the term is drawn only if the vocabulary holds it.
type Trend struct {
	// Term is normalised by NewSearch (topics.Normalize).
	Term  string
	Peak  time.Time
	Width time.Duration
	Share float64
}

// shareAt is the trend's share of the queries at event time t.
func (tr *Trend) shareAt(t time.Time) float64 {
	d := t.Sub(tr.Peak).Abs()
	if d >= tr.Width {
		return 0
	}
	return tr.Share * (1 - float64(d)/float64(tr.Width))
}

// Search generates search queries (topic search.queries). The same config and seed give the
// same records for the same sequence of instants passed to Next.
type Search struct {
	cfg    SearchConfig
	rng    *rand.Rand
	zipf   *zipf
	vocab  []string // by rank, most popular first
	trends []Trend
}

// NewSearch returns a generator, or an error for a config out of range: Terms above
// MaxTerms, a skew ≤ 0, a VariantRatio outside [0, 1], or trends with an empty or oversized
// term, a term listed twice, a width ≤ 0, a share ≤ 0, or shares summing to more than 1.
func NewSearch(cfg SearchConfig) (*Search, error) {
	if cfg.Terms == 0 {
		cfg.Terms = 10_000
	}
	if cfg.Skew == 0 {
		cfg.Skew = 1
	}
	if cfg.Users <= 0 {
		cfg.Users = 10_000
	}
	if cfg.Terms < 0 || cfg.Terms > MaxTerms {
		return nil, fmt.Errorf("loadgen: %d terms: want 1 to %d", cfg.Terms, MaxTerms)
	}
	if cfg.VariantRatio < 0 || cfg.VariantRatio > 1 {
		return nil, fmt.Errorf("loadgen: variant ratio %v: want 0 to 1", cfg.VariantRatio)
	}
	z, err := newZipf(cfg.Terms, cfg.Skew)
	if err != nil {
		return nil, err
	}
	trends, err := checkTrends(cfg.Trends)
	if err != nil {
		return nil, err
	}
	g := &Search{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5ea7c4)), zipf: z, trends: trends,
		vocab: make([]string, cfg.Terms)}
	for k := range g.vocab {
		g.vocab[k] = vocabTerm(k)
	}
	return g, nil
}

func checkTrends(in []Trend) ([]Trend, error) {
	out := make([]Trend, len(in))
	seen := make(map[string]bool, len(in))
	total := 0.0
	for i, tr := range in {
		tr.Term = topics.Normalize(tr.Term)
		switch {
		case tr.Term == "" || len(tr.Term) > topics.MaxQueryBytes:
			return nil, fmt.Errorf("loadgen: trend %d: term %q must normalise to 1 to %d bytes", i, in[i].Term, topics.MaxQueryBytes)
		case seen[tr.Term]:
			return nil, fmt.Errorf("loadgen: trend term %q listed twice", tr.Term)
		case tr.Width <= 0:
			return nil, fmt.Errorf("loadgen: trend %q: width %s must be positive", tr.Term, tr.Width)
		case tr.Share <= 0:
			return nil, fmt.Errorf("loadgen: trend %q: share %v must be positive", tr.Term, tr.Share)
		}
		seen[tr.Term] = true
		total += tr.Share
		out[i] = tr
	}
	if total > 1 {
		return nil, fmt.Errorf("loadgen: trend shares sum to %v, more than all queries", total)
	}
	return out, nil
}

// Next returns one query at simulated time now: its ts and its record time are now.
func (g *Search) Next(now time.Time) []Record {
	term := g.term(now)
	raw := term
	if g.cfg.VariantRatio > 0 && g.rng.Float64() < g.cfg.VariantRatio {
		raw = g.variant(term)
	}
	user := "u" + strconv.Itoa(g.rng.IntN(g.cfg.Users))
	v, err := json.Marshal(topics.SearchQuery{Query: raw, TS: topics.Timestamp{Time: now}, UserID: user})
	if err != nil {
		panic("BUG: marshal search query: " + err.Error())
	}
	return []Record{{Key: user, Value: v, Time: now}}
}

// term draws a planted term with its share at now, otherwise a vocabulary term by Zipf rank.
func (g *Search) term(now time.Time) string {
	u := g.rng.Float64()
	for i := range g.trends {
		s := g.trends[i].shareAt(now)
		if u < s {
			return g.trends[i].Term
		}
		u -= s
	}
	return g.vocab[g.zipf.rank(g.rng.Float64())]
}

// variant spells a normalised term differently: ASCII letters in upper case (all, the first
// of each word, or at random) and white space added around and between words. Only ASCII
// letters change case, so the variant normalises back to the term.
func (g *Search) variant(term string) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", g.rng.IntN(3)))
	style := g.rng.IntN(3)
	wordStart := true
	for i := range len(term) {
		c := term[i]
		switch {
		case c == ' ':
			b.WriteString([]string{" ", "  ", "\t", " \t "}[g.rng.IntN(4)])
			wordStart = true
			continue
		case 'a' <= c && c <= 'z' && (style == 0 || style == 1 && wordStart || style == 2 && g.rng.IntN(2) == 0):
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
		wordStart = false
	}
	b.WriteString(strings.Repeat(" ", g.rng.IntN(3)))
	return b.String()
}

// vocabWords spell the vocabulary: rank k is k+1 written in bijective base len(vocabWords),
// one word per digit, so the first ranks are single words and every term is distinct.
var vocabWords = []string{
	"weather", "news", "maps", "translate", "music", "movies", "games", "recipes",
	"football", "flights", "hotels", "jobs", "cars", "phones", "laptops", "shoes",
	"pizza", "coffee", "tickets", "lottery", "stocks", "bitcoin", "gold", "train",
	"bus", "airport", "beach", "hiking", "yoga", "fitness", "doctor", "pharmacy",
	"bank", "insurance", "taxes", "school", "library", "museum", "concert", "festival",
	"holiday", "christmas", "birthday", "wedding", "garden", "furniture", "camera", "headphones",
	"watch", "radio", "podcast", "books", "comics", "anime", "cats", "dogs",
	"fishing", "paris", "tokyo", "berlin", "london", "sale", "deals", "cheap",
}

func vocabTerm(k int) string {
	var words []string
	for n := k + 1; n > 0; n /= len(vocabWords) {
		n--
		words = append(words, vocabWords[n%len(vocabWords)])
	}
	return strings.Join(words, " ")
}

// The input of the hot-search throughput benchmarks (BenchmarkHotThroughput in
// internal/e2e/hot and BenchmarkHotPeers in internal/e2e/peers): BenchQueries queries from
// BenchSearch, the i-th dated start + i × BenchSpan / BenchQueries. The span is shorter than
// the hot group's default lookahead, so that no input partition read ahead of the others can
// have its queries dropped.
const (
	BenchQueries = 400_000
	BenchSpan    = 4 * time.Minute
)

// BenchSearch is the search stream of the hot-search benchmarks from start over span: the
// default vocabulary and users, a fifth of the queries spelled differently, and one trending
// term, "black friday", peaking halfway through span.
func BenchSearch(start time.Time, span time.Duration) (*Search, error) {
	return NewSearch(SearchConfig{VariantRatio: 0.2, Seed: 7, Trends: []Trend{
		{Term: "black friday", Peak: start.Add(span / 2), Width: span / 4, Share: 0.05},
	}})
}

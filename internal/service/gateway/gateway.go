package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Defaults of Config.
const (
	// DefaultUserRate and DefaultUserBurst: a user's client may write once a second on average
	// per route, ten times at once (a phone catching up after being offline).
	DefaultUserRate  = 1.0
	DefaultUserBurst = 10
	// DefaultUserBuckets bounds the token buckets in memory (about 200 bytes each).
	DefaultUserBuckets = 100_000
	// DefaultMaxBody bounds a request body: 100 step reports take about 20 KiB.
	DefaultMaxBody = 256 << 10
	// DefaultMaxInFlightBytes bounds the records handed to Kafka and not yet acknowledged.
	DefaultMaxInFlightBytes = 64 << 20
	// DefaultRequestTimeout is the deadline of a request: Kafka must acknowledge within it.
	DefaultRequestTimeout = 5 * time.Second
	// DefaultShedRetryAfter is the largest Retry-After of a 503.
	DefaultShedRetryAfter = 5 * time.Second
	// MaxElements bounds the elements of a body that is a JSON array.
	MaxElements = 100
	// recordOverhead is what a record costs in memory besides its key and value until Kafka
	// acknowledges it (the client's record, promise and batch bookkeeping, ours): an estimate
	// counted in the in-flight bytes.
	recordOverhead = 512
	// probeRequests is how many requests at a time try a Kafka that failed the last ones.
	probeRequests = 4
)

// Config configures a Gateway. Zero fields take the defaults above (StepRules:
// topics.DefaultStepRules, ScoreRules: topics.DefaultScoreRules); a negative UserRate turns
// the per-user limits off.
type Config struct {
	// Kafka names the brokers, the client id and the topics' prefix.
	Kafka kafka.Config
	// StepRules must be the steps processors' (--max-steps, --retention, --future-skew): a
	// report they would dead-letter is refused with 400 here.
	StepRules topics.StepRules
	// ScoreRules and Boards must be the scores processor's (--future-skew, --boards): an
	// operation it would dead-letter whatever the member's state is refused with 400 here.
	// Without boards, every score update is refused (its board is not declared).
	ScoreRules topics.ScoreRules
	Boards     []*board.Board
	// Keys are the accepted API keys.
	Keys *Keys
	// UserRate is the requests a second a user may make on a route, on average; UserBurst
	// how many at once; UserBuckets bounds the users tracked in memory.
	UserRate    float64
	UserBurst   int
	UserBuckets int
	// MaxBody bounds a request body (413 beyond).
	MaxBody int64
	// MaxInFlightBytes bounds the records handed to Kafka and not acknowledged yet: a request
	// that would pass it is answered 503 at once.
	MaxInFlightBytes int64
	// RequestTimeout is the deadline for Kafka to acknowledge a request's records (503 after).
	RequestTimeout time.Duration
	// ShedRetryAfter is the largest Retry-After of a 503: each answer draws a whole number of
	// seconds from 1 to it, so that the retries of a shed surge spread out.
	ShedRetryAfter time.Duration
	Log            *slog.Logger
}

// maxRequestTimeout leaves 5 s of the server's write limit to read the body and answer.
var maxRequestTimeout = obs.DefaultServerLimits.Write - 5*time.Second

func (c *Config) setDefaults() error {
	if c.StepRules == (topics.StepRules{}) {
		c.StepRules = topics.DefaultStepRules
	}
	if c.ScoreRules == (topics.ScoreRules{}) {
		c.ScoreRules = topics.DefaultScoreRules
	}
	if c.UserRate == 0 {
		c.UserRate = DefaultUserRate
	}
	if c.UserBurst == 0 {
		c.UserBurst = DefaultUserBurst
	}
	if c.UserBuckets == 0 {
		c.UserBuckets = DefaultUserBuckets
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxInFlightBytes == 0 {
		c.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.ShedRetryAfter == 0 {
		c.ShedRetryAfter = DefaultShedRetryAfter
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	switch {
	case c.Keys == nil:
		return errors.New("gateway: no API keys")
	case c.UserBurst < 1:
		return fmt.Errorf("gateway: user burst %d: want at least 1", c.UserBurst)
	case c.UserBuckets < MaxElements:
		return fmt.Errorf("gateway: %d user buckets: want at least %d (the users of one request)", c.UserBuckets, MaxElements)
	case c.MaxBody < 1:
		return fmt.Errorf("gateway: max body %d: want at least 1 byte", c.MaxBody)
	case c.MaxInFlightBytes < c.maxRequestCost():
		return fmt.Errorf("gateway: max in-flight bytes %d: want at least the largest request, %d", c.MaxInFlightBytes, c.maxRequestCost())
	case c.RequestTimeout < 0 || c.RequestTimeout > maxRequestTimeout:
		return fmt.Errorf("gateway: request timeout %s: want from 0 to %s (the answer must be written within the server's write limit, %s)", c.RequestTimeout, maxRequestTimeout, obs.DefaultServerLimits.Write)
	case c.ShedRetryAfter < time.Second:
		return fmt.Errorf("gateway: shed retry-after %s: want at least 1s", c.ShedRetryAfter)
	}
	return nil
}

// maxRequestCost bounds what a request counts in the in-flight bytes: its body, and for each
// of its records the overhead and what a score operation's value repeats of its request (the
// request id, board, scope, ts and the field names).
func (c *Config) maxRequestCost() int64 {
	const repeated = topics.MaxIDBytes + 64 + topics.MaxRegionBytes + 64
	return c.MaxBody + MaxElements*(recordOverhead+repeated)
}

// Gateway is the write service: Register mounts its routes.
type Gateway struct {
	cfg     Config
	cl      *kgo.Client
	topics  []string
	limiter *limiter
	boards  map[string]*board.Board
	budget  budget
	breaker breaker
	log     *slog.Logger
	authLog obs.LogLimiter
	badLog  obs.LogLimiter
	shedLog obs.LogLimiter
}

// New returns a gateway producing to cfg.Kafka's brokers; Close releases its client.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	// Idempotent (franz-go's default) with acks from all in-sync replicas: an acknowledged
	// record is on every replica, and the client's retries never write one twice. The default
	// partitioner is Kafka's (murmur2), which goka is configured to share (kafka.PartitionOf).
	// The in-flight bytes are bounded by the gateway's budget; the client's record bound is set
	// above what the budget lets through, so that producing never blocks.
	cl, err := cfg.Kafka.KgoClient(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(int(cfg.MaxInFlightBytes/recordOverhead)+1),
	)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	rate := cfg.UserRate
	if rate < 0 {
		rate = 0
	}
	g := &Gateway{cfg: cfg, cl: cl, limiter: newLimiter(rate, cfg.UserBurst, cfg.UserBuckets), log: cfg.Log}
	g.boards = make(map[string]*board.Board, len(cfg.Boards))
	for _, b := range cfg.Boards {
		g.boards[b.Name] = b
	}
	g.budget.max = cfg.MaxInFlightBytes
	g.breaker.probes = make(chan struct{}, probeRequests)
	for _, rt := range routes {
		g.topics = append(g.topics, string(cfg.Kafka.Names.Stream(rt.stream)))
	}
	return g, nil
}

// Close closes the Kafka client, failing what it still holds.
func (g *Gateway) Close() { g.cl.Close() }

// Register mounts the write routes on mux.
func (g *Gateway) Register(mux *http.ServeMux) {
	for _, rt := range routes {
		mux.Handle(rt.pattern, g.handler(rt))
	}
}

// Ready reports whether Kafka answers and knows every topic the gateway writes to, each
// partition with a leader. It asks a broker each time (the client's cached metadata would
// answer for a broker gone a moment ago).
func (g *Gateway) Ready(ctx context.Context) error {
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range g.topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(ctx, g.cl)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	problems := map[string]error{} // by topic; nil when it is fine
	for _, t := range resp.Topics {
		var name string
		if t.Topic != nil {
			name = *t.Topic
		}
		problems[name] = kerr.ErrorForCode(t.ErrorCode)
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				problems[name] = fmt.Errorf("partition %d has no leader", p.Partition)
			}
		}
		if problems[name] == nil && len(t.Partitions) == 0 {
			problems[name] = errors.New("no partitions")
		}
	}
	for _, name := range g.topics { // in a fixed order, whatever the broker's
		problem, answered := problems[name]
		if !answered {
			problem = errors.New("missing")
		}
		if problem != nil {
			return fmt.Errorf("kafka: topic %s: %w", name, problem)
		}
	}
	return nil
}

// retryAfter is a 503's Retry-After: whole seconds drawn from 1 to ShedRetryAfter.
func (g *Gateway) retryAfter() string {
	return strconv.Itoa(1 + rand.IntN(int(g.cfg.ShedRetryAfter/time.Second)))
}

package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// WriterTimeout bounds one network read or write of the pipeline's client (Open, for the
// sinks): a Redis that stops answering fails a write attempt after it (two at most with the
// one retry on a fresh connection), and the sink's own retry with backoff takes over, so a
// stalled Redis slows the pipeline but never holds a flush indefinitely.
const WriterTimeout = 5 * time.Second

// bounds are the settings that keep a client from waiting on a stalled Redis.
type bounds struct {
	io      time.Duration // one network read or write, and one wait for a pooled connection
	retries int           // go-redis retries of a failed command (on a fresh connection)
	dials   int           // attempts to dial a connection (0: go-redis's default, 5, 100 ms apart)
	// protocol is the RESP version (0: go-redis's default, RESP3). RESP2 spares a client
	// that never subscribes go-redis's check for pending push notifications before every
	// reply it reads (about 3-4% of serve's CPU on the board reads); the replies it reads
	// (integers, strings, scores as text) decode to the same values.
	protocol int
}

// apply sets the bounds on a client's options, leaving what a redis:// URL set explicitly.
// ContextTimeoutEnabled makes go-redis honour a context's deadline on network reads and
// writes (without it, only ReadTimeout/WriteTimeout count); the wait for a pooled connection
// ends at the context's deadline or PoolTimeout, whichever comes first. retries is nil for a
// cluster client, which retries through its redirects and keeps its nodes' retries off.
func (b bounds) apply(ctxTimeout *bool, read, write, pool *time.Duration, retries, dials, protocol *int) {
	*ctxTimeout = true
	if *dials == 0 {
		*dials = b.dials
	}
	if *protocol == 0 {
		*protocol = b.protocol
	}
	for _, d := range []*time.Duration{read, write, pool} {
		if *d == 0 {
			*d = b.io
		}
	}
	if retries != nil && *retries == 0 {
		*retries = b.retries
	}
}

// Open returns the pipeline writers' (the sinks') client of Redis; it does not wait for Redis
// to answer (a Redis down at start-up delays the writes, which retry, not the start). addr is
// "host:port", a "redis://host:port/db" URL, or a comma-separated list of "host:port" seeds of
// a Redis Cluster. Every network read or write is bounded by WriterTimeout (and by the
// context's deadline, if sooner); a failed command is retried once by go-redis, on a fresh
// connection; the callers retry with backoff.
func Open(addr string) (goredis.UniversalClient, error) {
	return open(addr, bounds{io: WriterTimeout, retries: 1}, "writer")
}

// OpenReader returns the read path's client of Redis (addr as for Open; no ping). Its callers
// give every request a deadline of timeout (the query API's --redis-timeout); the client
// bounds each network read, write and wait for a pooled connection by timeout too, so a Redis
// that stops answering costs a request at most its deadline and waiters cannot pile up in the
// pool (go-redis's default size, 10 connections per CPU). A failed command is retried once (a
// connection closed under it) within the same deadline. A connection is dialed once, not five
// times 100 ms apart (go-redis's default): a Redis that refuses connections (stopped) fails a
// read within milliseconds, so the query API answers its last good copy at once. It speaks
// RESP2 (bounds.protocol) unless a redis:// URL asks for another (protocol=3).
func OpenReader(addr string, timeout time.Duration) (goredis.UniversalClient, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("redis: read timeout %s: must be positive", timeout)
	}
	return open(addr, bounds{io: timeout, retries: 1, dials: 1, protocol: 2}, "reader")
}

// open returns a client of addr with the bounds b whose calls are observed as client's
// (callMetrics).
func open(addr string, b bounds, client string) (goredis.UniversalClient, error) {
	var rdb goredis.UniversalClient
	switch {
	case strings.HasPrefix(addr, "redis://") || strings.HasPrefix(addr, "rediss://"):
		opt, err := goredis.ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("redis: parse %q: %w", addr, err)
		}
		b.apply(&opt.ContextTimeoutEnabled, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout, &opt.MaxRetries, &opt.DialerRetries, &opt.Protocol)
		rdb = goredis.NewClient(opt)
	case strings.Contains(addr, ","):
		opt := &goredis.ClusterOptions{Addrs: strings.Split(addr, ",")}
		b.apply(&opt.ContextTimeoutEnabled, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout, nil, &opt.DialerRetries, &opt.Protocol)
		rdb = goredis.NewClusterClient(opt)
	default:
		opt := &goredis.Options{Addr: addr}
		b.apply(&opt.ContextTimeoutEnabled, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout, &opt.MaxRetries, &opt.DialerRetries, &opt.Protocol)
		rdb = goredis.NewClient(opt)
	}
	rdb.AddHook(callMetrics{client: client})
	return rdb, nil
}

// callMetrics observes every call of a client in rankstream_redis_call_seconds{client,call}
// (call: the command's name, or "pipeline") and counts the failed ones in
// rankstream_redis_call_errors_total (a missing key, redis.Nil, is an answer, not a failure).
type callMetrics struct{ client string }

func (m callMetrics) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (m callMetrics) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		m.observe(cmd.Name(), start, err)
		return err
	}
}

func (m callMetrics) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		m.observe("pipeline", start, err)
		return err
	}
}

func (m callMetrics) observe(call string, start time.Time, err error) {
	seconds, errs := obs.RedisCall(m.client, call)
	seconds.Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, goredis.Nil) {
		errs.Inc()
	}
}

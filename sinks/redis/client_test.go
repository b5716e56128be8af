package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestOpenOnAStoppedRedis: the pipeline's client (Open, every default) on a redis-server
// stopped with SIGSTOP. A write with no deadline of its own (the sinks' retry loops) fails
// within two attempts of WriterTimeout, so the sink's retry with backoff keeps control; a
// write with a deadline (the sinks' last flush on shutdown) ends at the deadline; after
// SIGCONT the same client writes again. Before, the client ignored the context's deadline
// (the 300 ms write took 5 s).
func TestOpenOnAStoppedRedis(t *testing.T) {
	rs := testenv.StartRedisServer(t)
	ctx := context.Background()
	rdb, err := rsredis.Open(rs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	w := rsredis.NewHotWriter(rdb)
	if _, err := w.Write(ctx, snap(0, 1, "a")); err != nil {
		t.Fatal(err)
	}

	rs.Pause()
	t.Cleanup(rs.Resume)
	const slack = 2 * time.Second
	began := time.Now()
	_, err = w.Write(ctx, snap(1, 2, "b"))
	took := time.Since(began)
	t.Logf("write without a deadline on a stopped Redis: %v after %s", err, took.Round(time.Millisecond))
	if err == nil || took > 2*rsredis.WriterTimeout+slack {
		t.Fatalf("write without a deadline on a stopped Redis: %v after %s, want an error within %s", err, took, 2*rsredis.WriterTimeout+slack)
	}

	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began = time.Now()
	_, err = w.Write(dctx, snap(1, 2, "b"))
	took = time.Since(began)
	t.Logf("write with a 300ms deadline on a stopped Redis: %v after %s", err, took.Round(time.Millisecond))
	if err == nil || took > 300*time.Millisecond+slack {
		t.Fatalf("write with a 300ms deadline on a stopped Redis: %v after %s", err, took)
	}

	rs.Resume()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if ok, err := w.Write(wctx, snap(2, 3, "c")); err != nil || !ok {
		t.Fatalf("write after SIGCONT: %v %v", ok, err)
	}
}

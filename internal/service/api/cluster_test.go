package api_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// TestReadsOnARedisCluster: the steps and hot-search writers write into the real 3-master Redis
// Cluster (the step keys spread over every master, so the sink's scripts group them by slot),
// and every read of the API answers from it exactly: pages of the global and regional boards,
// members with their neighbours, the hot list.
func TestReadsOnARedisCluster(t *testing.T) {
	rdb, _ := testenv.RedisCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	w := rsredis.NewStepsWriter(rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond, Logger: quiet}})
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() { stop(); <-done }()

	// 300 users: user u%03d has 10*(300-i) steps, reached in that order; every third is in "eu".
	const n = 300
	base := day.FirstInstant().UnixMilli() + 3600_000
	var wg sync.WaitGroup
	wg.Add(n)
	var failed error
	var mu sync.Mutex
	for i := range n {
		u := &board.StepUpdate{User: fmt.Sprintf("u%03d", i), Day: day, Steps: int64(10 * (n - i)), ReachedMs: base + int64(i)}
		if i%3 == 0 {
			u.Region = "eu"
		}
		w.Submit(u, func(err error) {
			mu.Lock()
			failed = errors.Join(failed, err)
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("steps writer: %v", failed)
	}
	slots := map[int]bool{}
	for i := range n {
		slots[rsredis.KeySlot(rsredis.StepKey(day, fmt.Sprintf("u%03d", i)))*3/16384] = true
	}
	if len(slots) != 3 {
		t.Fatalf("the step keys landed on %d of the 3 masters' slot ranges", len(slots))
	}

	hot := topics.TopKSnapshot{Stream: topics.SearchStream, WindowStart: time.UnixMilli(1796040000000 - 3600_000).UTC(),
		WindowEnd: time.UnixMilli(1796040000000).UTC(), GeneratedAt: time.UnixMilli(1796040001000).UTC(), Version: 1,
		Items: []topics.TopKItem{{Item: "snow", Count: 9}, {Item: "deals", Count: 4, Error: 1}}, MissingPartitions: []int32{}}
	if _, err := rsredis.NewHotWriter(rdb).Write(ctx, hot); err != nil {
		t.Fatal(err)
	}

	srv := serve(t, api.New(rsredis.NewBatchedReader(rdb), quiet))
	var p api.Page
	get(t, srv, "/v1/boards/steps?day=20261130&offset=290&limit=20", 200, &p)
	if p.Total != n || len(p.Items) != 10 || p.Items[0].Rank != 291 || p.Items[0].Member != "u290" || p.Items[9].Member != "u299" || p.Items[9].Score != 10 {
		t.Fatalf("global page: %+v", p)
	}
	get(t, srv, "/v1/boards/steps?day=20261130&region=eu&limit=3", 200, &p)
	if p.Total != n/3 || len(p.Items) != 3 || p.Items[1].Member != "u003" || p.Items[1].Rank != 2 {
		t.Fatalf("eu page: %+v", p)
	}
	var s api.Standing
	get(t, srv, "/v1/boards/steps/members/u150?day=20261130&neighbors=2", 200, &s)
	names := func(es []api.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Member)
		}
		return out
	}
	if s.Member.Rank != 151 || s.Member.Score != 1500 || !s.Member.ReachedAt.Equal(time.UnixMilli(base+150)) ||
		!slices.Equal(names(s.Above), []string{"u148", "u149"}) || !slices.Equal(names(s.Below), []string{"u151", "u152"}) {
		t.Fatalf("standing of u150: %+v", s)
	}
	var got topics.TopKSnapshot
	get(t, srv, "/v1/hot/search?k=10", 200, &got)
	if len(got.Items) != 2 || got.Items[0].Item != "snow" || !got.WindowEnd.Equal(hot.WindowEnd) {
		t.Fatalf("hot list: %+v", got)
	}
}

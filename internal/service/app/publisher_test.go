package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot/history"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

func validSnapshot() topics.TopKSnapshot {
	end := time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC)
	return topics.TopKSnapshot{
		Stream: topics.SearchStream, WindowStart: end.Add(-time.Hour), WindowEnd: end,
		GeneratedAt: end.Add(2013 * time.Millisecond), Version: end.UnixMilli(),
		Items: []topics.TopKItem{{Item: "weather", Count: 1200, Error: 3}, {Item: "snow", Count: 7, Error: 7}},
	}
}

// TestPublishChecksBeforeAnyWrite: a snapshot that Redis or the history store could never take
// fails with topics.ErrInvalidSnapshot before anything is written (the merge used to retry it
// forever, after its ClickHouse rows were written); a valid one reaches the queue and Redis.
func TestPublishChecksBeforeAnyWrite(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers, Partitions: 2, Names: topics.Names{Prefix: testenv.UniqueName(t, "publish") + "."}}
		cl := e2e.KafkaClient(t, kc)
		q := history.NewQueue(cl)
		rdb := testenv.Redis(t)
		pub := app.Publisher{Redis: rsredis.NewHotWriter(rdb), History: q}
		queued := func() int64 {
			ends, err := cl.Admin().ListEndOffsets(ctx, string(kc.Names.Stream(topics.HotHistory)))
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
			return n
		}

		for _, tt := range []struct {
			name   string
			breaks func(*topics.TopKSnapshot)
		}{
			{"error above count (Validate)", func(s *topics.TopKSnapshot) { s.Items[1].Error = 8 }},
			{"empty item (Validate)", func(s *topics.TopKSnapshot) { s.Items[0].Item = "" }},
			{"items not by count (Validate)", func(s *topics.TopKSnapshot) { s.Items[0].Count = 1 }},
			{"window end with a fraction of a second (ClickHouse rows)", func(s *topics.TopKSnapshot) {
				s.WindowEnd = s.WindowEnd.Add(500 * time.Millisecond)
			}},
			{"window after 2106 (ClickHouse DateTime)", func(s *topics.TopKSnapshot) {
				s.WindowStart, s.WindowEnd = s.WindowStart.AddDate(100, 0, 0), s.WindowEnd.AddDate(100, 0, 0)
			}},
		} {
			s := validSnapshot()
			tt.breaks(&s)
			if err := pub.Publish(ctx, s); !errors.Is(err, topics.ErrInvalidSnapshot) {
				t.Errorf("%s: Publish = %v, want topics.ErrInvalidSnapshot", tt.name, err)
			}
		}
		if n := queued(); n != 0 {
			t.Fatalf("invalid snapshots queued %d records for the history", n)
		}
		if n, _ := rdb.Exists(ctx, rsredis.HotKey(topics.SearchStream)).Result(); n != 0 {
			t.Fatal("an invalid snapshot reached Redis")
		}

		if err := pub.Publish(ctx, validSnapshot()); err != nil {
			t.Fatalf("valid snapshot: %v", err)
		}
		if n := queued(); n != 1 {
			t.Fatalf("valid snapshot queued %d records, want 1", n)
		}
		if n, _ := rdb.Exists(ctx, rsredis.HotKey(topics.SearchStream)).Result(); n != 1 {
			t.Fatal("valid snapshot not in Redis")
		}
	})
}

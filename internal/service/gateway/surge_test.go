package gateway_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

var value = gateway.MetricValue

// checkShed fails unless r is a 503 with a Retry-After from 1 to the default bound.
func checkShed(t *testing.T, r reply) {
	t.Helper()
	ra, err := strconv.Atoi(r.retryAfter)
	if r.code != http.StatusServiceUnavailable || err != nil || ra < 1 || ra > int(gateway.DefaultShedRetryAfter/time.Second) {
		t.Fatalf("%v, want 503 with Retry-After from 1 to %s", r, gateway.DefaultShedRetryAfter)
	}
}

// TestSlowKafkaShedsAtOnce: Kafka (kfake) holds every produce request. Requests of 100
// reports fill the in-flight bytes (at 1 MiB, an extreme) and the next ones are answered 503
// at once, with a jittered Retry-After, while the in-flight bytes stay within their bound;
// once Kafka answers, the held requests get 202, and the topic holds exactly their reports.
func TestSlowKafkaShedsAtOnce(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(testenv.DefaultPartitions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	const bound = 1 << 20
	g := newGateway(t, cluster.ListenAddrs(), gateway.Config{MaxInFlightBytes: bound})
	release := make(chan struct{})
	cluster.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		cluster.SleepControl(func() { <-release })
		return nil, nil, false
	})
	const requests = 40
	now := time.Now()
	shedBefore := value(obs.GatewayShed.WithLabelValues("in_flight"))
	replies := make(chan reply, requests)
	for i := range requests {
		reports := make([]string, gateway.MaxElements)
		for j := range reports {
			reports[j] = stepReport(fmt.Sprintf("u%d-%d", i, j), "r", 1000+j, now)
		}
		go func() { replies <- g.post("/v1/steps", "Bearer "+secret, "["+strings.Join(reports, ",")+"]") }()
	}
	var got []reply
	retryAfters := map[string]bool{}
	for len(got) < requests/2 { // at most 16 requests of ~67 KB fit in 1 MiB: the others are shed
		select {
		case r := <-replies:
			checkShed(t, r)
			if r.took > 2*time.Second {
				t.Errorf("shed after %s, want at once", r.took)
			}
			retryAfters[r.retryAfter] = true
			got = append(got, r)
		case <-time.After(gateway.DefaultRequestTimeout / 2):
			t.Fatalf("%d requests shed while Kafka holds every produce request; want at least %d", len(got), requests/2)
		}
		if b := value(obs.GatewayInFlightBytes); b > bound {
			t.Fatalf("%v in-flight bytes, bound %d", b, bound)
		}
	}
	close(release)
	accepted := 0
	for len(got) < requests {
		r := <-replies
		if r.code == http.StatusAccepted {
			accepted++
		} else {
			checkShed(t, r)
			retryAfters[r.retryAfter] = true
		}
		got = append(got, r)
	}
	shed := requests - accepted
	if n := value(obs.GatewayShed.WithLabelValues("in_flight")) - shedBefore; n != float64(shed) {
		t.Errorf("shed count %v, want %d", n, shed)
	}
	if accepted == 0 || len(retryAfters) < 2 {
		t.Errorf("%d accepted, Retry-After values %v: want some accepted and the retries spread", accepted, retryAfters)
	}
	g.records(topics.StepsReported, accepted*gateway.MaxElements)
	testenv.WaitFor(t, 10*time.Second, "in-flight bytes back to 0", func() bool { return value(obs.GatewayInFlightBytes) == 0 })
	t.Logf("%d of %d requests accepted, %d shed; Retry-After values %v", accepted, requests, shed, retryAfters)
}

// TestBrokerStoppedAnswers503: a broker of the test's own is killed under the gateway with
// every default. 40 clients keep writing for 8 s (100 ms between requests): every answer is 503
// with a jittered Retry-After within the request deadline (plus slack), nothing is answered
// 202, once the first requests failed most are shed at once (only a few probe Kafka), /readyz
// says not ready, and the heap does not grow with the requests. Once the broker is back,
// reports are accepted again and every in-flight byte is given back.
func TestBrokerStoppedAnswers503(t *testing.T) {
	ks := testenv.StartKafkaServer(t)
	g := newGateway(t, ks.Brokers(), gateway.Config{})
	now := time.Now()
	auth := "Bearer " + secret
	if r := g.post("/v1/steps", auth, stepReport("before", "r0", 1, now)); r.code != http.StatusAccepted {
		t.Fatalf("before the stop: %v", r)
	}
	ks.Stop(syscall.SIGKILL)
	ready := func() int {
		resp, err := http.Get(g.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := ready(); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the broker down: %d, want 503", c)
	}

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapAlloc
	var (
		mu          sync.Mutex
		answers     int
		fast        int
		retryAfters = map[string]bool{}
		maxInFlight atomic.Int64
		wg          sync.WaitGroup
	)
	downBefore := value(obs.GatewayShed.WithLabelValues("kafka_down"))
	end := time.Now().Add(8 * time.Second)
	for c := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				r := g.post("/v1/steps", auth, stepReport(fmt.Sprintf("c%d-%d", c, i), "r", 5, now))
				maxInFlight.Store(max(maxInFlight.Load(), int64(value(obs.GatewayInFlightBytes))))
				checkShed(t, r)
				if slack := 3 * time.Second; r.took > gateway.DefaultRequestTimeout+slack {
					t.Errorf("answered after %s, want within %s", r.took, gateway.DefaultRequestTimeout+slack)
				}
				mu.Lock()
				answers++
				if r.took < time.Second {
					fast++
				}
				retryAfters[r.retryAfter] = true
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	growth := int64(ms.HeapAlloc) - int64(heapBefore)
	down := value(obs.GatewayShed.WithLabelValues("kafka_down")) - downBefore
	t.Logf("broker down: %d answers, all 503, %d within a second, %v shed at once while Kafka failed; Retry-After values %v; in-flight bytes at most %d; heap %+d bytes",
		answers, fast, down, retryAfters, maxInFlight.Load(), growth)
	if fast < answers/2 || down == 0 {
		t.Errorf("%d of %d answers within a second, %v shed at once: want most requests shed at once once Kafka failed", fast, answers, down)
	}
	if maxInFlight.Load() > gateway.DefaultMaxInFlightBytes || growth > 16<<20 {
		t.Errorf("in-flight bytes up to %d, heap grew %d bytes: want bounded", maxInFlight.Load(), growth)
	}
	if len(retryAfters) < 2 {
		t.Errorf("Retry-After values %v: want them spread", retryAfters)
	}

	ks.Start()
	testenv.WaitFor(t, time.Minute, "/readyz once the broker is back", func() bool { return ready() == http.StatusOK })
	testenv.WaitFor(t, time.Minute, "a report accepted once the broker is back", func() bool {
		return g.post("/v1/steps", auth, stepReport("after", "r1", 1, time.Now())).code == http.StatusAccepted
	})
	testenv.WaitFor(t, time.Minute, "in-flight bytes back to 0", func() bool { return value(obs.GatewayInFlightBytes) == 0 })
}

package gatewaye2e

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// benchRate and benchRequests: BenchmarkGatewayRate's fixed rate (well below what one gateway
// takes on 2 shared cores, so that its latencies are the service's, not a queue's) and
// requests (10 s of it).
const (
	benchRate     = 2000
	benchRequests = 10 * benchRate
)

// BenchmarkGatewayRate measures `rankstream gateway` (every default but the keys file) on the
// real broker: step reports of distinct users POSTed one a request at a fixed rate by vegeta's
// open-model attacker; it reports the requests answered 202 a second, the latency p50 and p99
// of every request, and the share answered otherwise (429/503: none expected at this rate);
// beside them, the raw franz-go produce rate (idempotent, acks=all, everything at once) of the
// same records on the same broker, the ceiling of any writer of the topic. Run it once:
// -benchtime 1x.
func BenchmarkGatewayRate(b *testing.B) {
	p := startPipeline(b, testenv.KafkaBrokers(b), "", false)
	at := time.Now()
	results, m := p.attack("/v1/steps", benchRate, benchRequests, func(i int) string { return surgeReport("r", i, at) },
		func(i int) string { return "r" + strconv.Itoa(i) })
	other := 0
	for _, r := range results {
		if r.Code != http.StatusAccepted {
			other++
		}
	}
	b.ReportMetric(m.Throughput, "accepted/s")
	b.ReportMetric(m.Rate, "sent/s")
	b.ReportMetric(float64(m.Latencies.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(m.Latencies.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(100*float64(other)/float64(len(results)), "not-202-%")
	topic := string(p.Kafka.Names.Stream(topics.StepsReported))
	records := make([]*kgo.Record, benchRequests)
	for i := range records {
		u := "raw" + strconv.Itoa(i)
		records[i] = &kgo.Record{Topic: topic, Key: []byte(u), Value: []byte(surgeReport("raw", i, at))}
	}
	b.ReportMetric(testenv.RawProduceRate(b, p.Kafka.Brokers, records), "raw-produce/s")
}

// BenchmarkTenThousandReports is TestTenThousandReports on the real broker without the race
// detector, reporting how fast the 10,000 requests left (10,000/s asked), their latency p50
// and p99, and how many were answered 202, 429 and 503 (and how many of the 503s came from the
// server's cap on concurrent requests, the others from the gateway's shedding). It fails on a violated invariant (see
// surge). Run it once: -benchtime 1x.
func BenchmarkTenThousandReports(b *testing.B) {
	p := startPipeline(b, testenv.KafkaBrokers(b), "", true)
	r := p.surge(10_000, 10_000)
	b.ReportMetric(10_000/r.sent.Seconds(), "sent/s")
	b.ReportMetric(float64(r.metrics.Latencies.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(r.metrics.Latencies.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(r.capped), "503s-cap")
	for code, unit := range map[uint16]string{http.StatusAccepted: "accepted", http.StatusTooManyRequests: "429s", http.StatusServiceUnavailable: "503s"} {
		b.ReportMetric(float64(r.codes[code]), unit)
	}
}

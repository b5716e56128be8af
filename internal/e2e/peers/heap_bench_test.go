//go:build peers

package peers

import (
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/topics"
)

// Environment of BenchmarkStepsPeerHeap.
const (
	// envHeaps lists the -Xmx values to try, comma-separated, the reference first.
	envHeaps = "RANKSTREAM_PEERS_XMX"
	// envHeapReports is the number of reports per heap (default 500,000: six heaps in a few
	// minutes).
	envHeapReports = "RANKSTREAM_PEERS_XMX_REPORTS"
	defaultHeaps   = "1g,512m,384m,256m,192m,128m"
)

// BenchmarkStepsPeerHeap finds the smallest heap at which the Kafka Streams steps peer keeps
// its throughput: it runs the peer on the input of BenchmarkStepsPeers
// (500,000 reports by default, RANKSTREAM_PEERS_XMX_REPORTS) once per -Xmx of
// RANKSTREAM_PEERS_XMX (default 1g,512m,384m,256m,192m,128m: the first is the reference, the
// list goes down), each
// as a new application on a Redis database of its own, and reports each heap's records/s, CPU
// µs per record (a heap too small shows as more garbage collection) and peak RSS (VmHWM: heap,
// RocksDB and the rest of the JVM). Every run must leave the Redis contents of the first (a
// starved peer is no faster by being wrong). It logs the smallest heap
// keeping at least 95% of the reference's records/s (the last before the first that does not),
// with its peak RSS; a heap at which the peer exits (out of memory) or takes more than twice
// the reference's time plus a minute ends the sweep as the first that does not. Other JVM flags:
// RANKSTREAM_PEERS_JAVA_OPTS without its -Xmx. Run it once: -benchtime 1x.
func BenchmarkStepsPeerHeap(b *testing.B) {
	n := envCount(b, envHeapReports, 500_000)
	heaps := strings.Split(defaultHeaps, ",")
	if s := os.Getenv(envHeaps); s != "" {
		heaps = strings.Split(s, ",")
	}
	var flags []string
	for _, f := range javaOpts() {
		if !strings.HasPrefix(f, "-Xmx") {
			flags = append(flags, f)
		}
	}
	jar := peerJar(b, stepsProject)
	job := newJob(b, topics.StepsReported)
	records := append(stepReports(n), poison(time.Now())...)
	job.produce(b, records)
	total := int64(len(records))

	var ref snapshot
	var results []result
	for i, heap := range heaps {
		heap = strings.TrimSpace(heap)
		sys := job.kstreams(jar, append([]string{"-Xmx" + heap}, flags...), "kstreams-steps-xmx"+heap)
		sys.name = "xmx" + heap
		collect := func(rdb *goredis.Client) {
			snap := takeSnapshot(b, rdb)
			if i == 0 {
				ref = snap
			} else if diff := ref.diff(snap); diff != "" {
				b.Fatalf("-Xmx%s: Redis contents differ from -Xmx%s's: %s", heap, heaps[0], diff)
			}
		}
		if i == 0 {
			results = append(results, sys.run(b, job.adm, job.input, total, nil, collect))
		} else {
			// A heap that makes the peer exit (out of memory) or take more than twice the
			// reference's time does not keep its throughput, and the smaller ones will not.
			res, err := sys.attempt(b, job.adm, job.input, total, nil, collect, 2*results[0].elapsed+time.Minute)
			if err != nil {
				b.Logf("-Xmx%-6s does not keep the throughput: %v", heap, err)
				break
			}
			results = append(results, res)
		}
		res := results[len(results)-1]
		b.Logf("-Xmx%-6s %9.0f records/s %6.1f CPU µs/record %6.0f MiB peak RSS (%.2f of -Xmx%s's records/s)",
			heap, res.rate(), res.cpuPerRecord(), res.peakMiB(), res.rate()/results[0].rate(), heaps[0])
		b.ReportMetric(res.rate(), sys.name+"-records/s")
		b.ReportMetric(res.cpuPerRecord(), sys.name+"-cpu-µs/record")
		b.ReportMetric(res.peakMiB(), sys.name+"-peak-RSS-MiB")
	}
	// The list goes down: the answer is the last heap before the first that loses more than 5%.
	best := 0
	for i, r := range results {
		if r.rate() < 0.95*results[0].rate() {
			break
		}
		best = i
	}
	b.Logf("smallest heap keeping >= 95%% of -Xmx%s's records/s: -Xmx%s, %.0f records/s, peak RSS %.0f MiB",
		heaps[0], strings.TrimSpace(heaps[best]), results[best].rate(), results[best].peakMiB())
	b.ReportMetric(results[best].peakMiB(), "smallest-keeping-peak-RSS-MiB")
}

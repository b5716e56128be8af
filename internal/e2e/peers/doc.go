// Package peers holds the benchmarks of rankstream against peers written with other stream
// processing frameworks, run on the same real broker and redis-server (internal/testenv) with
// the same pre-produced input, and checked to produce identical Redis contents.
//
// The peers live beside this file as their own projects: kstreams-steps/ is the steps job as a
// Kafka Streams 4.4 application (Maven, Processor API, RocksDB, Jedis), kstreams-hot/ the
// hot-search job (tumbling buckets per term in a windowed RocksDB store, a merge of the
// partitions' Top-Ks). `make bench-peers` builds them and runs BenchmarkStepsPeers,
// BenchmarkHotPeers and BenchmarkStepsPeerHeap; see README.md here for what is measured and how.
//
// Its tests and benchmarks build only with -tags peers (make bench-peers passes it), so that
// make test needs neither Java nor the peers' jars. It has no non-test code: nothing imports it.
package peers

// Package e2e is the harness of rankstream's end-to-end tests and benchmarks: Run (one run's
// topics, Redis database, client and processes: Start, Produce, Records, Ends, DeadLetters,
// API, Gateway), and generated input streams with the truth the tests compute from them by
// their own code. The tests themselves live in its subpackages, so that `go test`
// runs them in parallel:
//
//   - friends: friends boards on a generated friendship graph, read through the HTTP API
//   - gateway: the write gateway in front of its processors
//   - hot: hot search against an exact count, backlogs, idle partitions, the merge, and the
//     hot-search benchmarks
//   - ops: the operators' files of deploy/ (alert rules, dashboard, compose, Kubernetes)
//   - peers: rankstream against its Kafka Streams peers (build tag peers)
//   - pipeline: the whole binary under hostile input and outages of each server
//   - scores: score boards, their replay and reconcile
//   - serve: the read path's benchmarks on 1M-member boards
//   - steps: daily steps, crashes, rebalances, Redis outages, replay, reconcile, and the steps
//     benchmark
//   - web: the pages in headless Chromium
//
// They run the rankstream binary (testenv.Rankstream) or the processors with their real
// sinks, on the real servers and kfake.
//
// Only tests import it (internal/arch: no package of the test lab is a dependency of
// cmd/rankstream); it never imports cmd.
package e2e

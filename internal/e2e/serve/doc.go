// Package servee2e holds the read path's benchmarks: the rankstream binary (serve) on 1M-member
// boards in the real redis-server, beside the same Redis commands sent directly (the floor),
// closed loop (max throughput) and open model (vegeta, fixed rate: latency percentiles free of
// coordinated omission).
//
// It has benchmarks only; see package e2e for the harness.
package servee2e

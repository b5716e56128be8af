// Package servee2e holds the read path's benchmarks: the rankstream binary (serve) on 1M-member
// boards in the real redis-server, beside the same Redis commands sent directly (the floor),
// closed loop (max throughput) and open model (fixed rate: latency percentiles free of
// coordinated omission), through a lean HTTP/1.1 client and, for comparison, through Go's
// net/http client (closed loop) and vegeta (open model).
//
// It has benchmarks only; see package e2e for the harness.
package servee2e

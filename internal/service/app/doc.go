// Package app wires rankstream's parts into the services the commands run: the processors
// with their stores (Pipeline, Process), the query API (Serve), the write gateway (Gateway, its
// keys reloaded on SIGHUP), everything on one machine on embedded stand-ins (Dev); the
// supervision of the processors' units (the archive unit among them), the creation of the
// topics at start-up, the HTTP server with its limits, the snapshot publisher that feeds Redis
// and the history queue, and the adapters of the processors' history stores to ClickHouse.
// The operator jobs are packages of their own beside it: internal/service/reconcile,
// internal/service/replay and internal/service/archive.
// cmd/rankstream only turns flags and environment into these configurations.
//
// It may import every package of the module except cmd and the test harnesses.
package app

// Package app wires rankstream's parts into the services the commands run: the processors
// with their stores (Pipeline, Process), the query API (Serve), the write gateway (Gateway, its
// keys reloaded on SIGHUP), everything on one machine on embedded stand-ins (Dev), the replay
// of a group from earlier offsets (Replay); the supervision of the processors' units, the
// creation of the topics at start-up, the HTTP server with its limits, and the snapshot
// publisher that feeds Redis and the history queue.
// cmd/rankstream only turns flags and environment into these configurations.
//
// It may import every package of the module except cmd and the test harnesses.
package app

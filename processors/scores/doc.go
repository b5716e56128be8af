// Package scores is the processor family of score boards (issue 11): the member state and its
// pure rules (state.go: set, incr and delete per board and period, idempotent on request ids,
// with a versioned binary codec for the group table). The goka adapter that feeds a Sink with
// the updates Apply returns is built on top of it.
//
// It imports internal/board (and, with the adapter, topics and internal plumbing); never a
// sink, a Redis client or another processor family.
package scores

// Package merge is the goka group hot-merge: it merges the partitions' partial Top-K lists
// of each window (topic hot.partials, keyed by window end, so a window's partials meet in one
// partition) into the window's snapshot and hands it to a Publisher (defined here; Redis and
// the history queue behind it). Its decisions (when a window is due, complete, expired or
// rejected) are pure functions of its table's state (mergestate.go); a sweeper publishes the
// windows whose wait ran out.
//
// It imports topics, sketch and internal plumbing (kafka, obs, backoff); never a sink or
// another processor family.
package merge

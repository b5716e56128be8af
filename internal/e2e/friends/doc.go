// Package friendse2e holds the end-to-end tests of friends boards: the rankstream binary
// (process) on a generated friendship graph with adds, removes, re-adds, duplicates and
// reordered deliveries, every user's friend set (group table and Redis) and friends board read
// through the HTTP API against the truth the test computes, on the real servers and kfake, and
// after kill -9.
//
// It has tests only.
package friendse2e

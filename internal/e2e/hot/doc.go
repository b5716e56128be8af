// Package hote2e holds the end-to-end tests of hot search: the rankstream binary on generated queries against an exact count, backlogs, idle partitions, the merge with its real stores, and the hot-search benchmarks, on the real servers and kfake.
//
// It has tests only; see package e2e for the harness.
package hote2e

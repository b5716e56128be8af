// Package stepse2e holds the end-to-end tests of daily steps: the rankstream binary on generated reports against the truth computed by the tests, crashes, rebalances, Redis outages, replay and reconcile, and the steps benchmark, on the real servers and kfake.
//
// It has tests only; see package e2e for the harness.
package stepse2e

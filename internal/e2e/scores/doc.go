// Package scorese2e holds the end-to-end tests of score boards: the rankstream binary (process
// --boards) on a generated stream of score ops, every board page and member rank read through
// the HTTP API against the truth the harness computes, on the real servers and kfake; the
// replay of scores and scores-totals, a board added later, and rankstream reconcile.
//
// It has tests only; see package e2e for the harness.
package scorese2e

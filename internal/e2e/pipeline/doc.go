// Package pipelinee2e holds the end-to-end tests of the whole binary: hostile input on every topic and outages of each server, on the real servers and kfake.
//
// It has tests only; see package e2e for the harness.
package pipelinee2e

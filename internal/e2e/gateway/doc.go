// Package gatewaye2e holds the end-to-end tests of the write gateway: the rankstream binary's
// gateway in front of its processors, on the real servers and kfake.
//
// It has tests only; see package e2e for the harness.
package gatewaye2e

// Package e2e is the harness of rankstream's end-to-end tests and benchmarks: generated input
// streams with the truth the tests compute from them by their own code, and the helpers that
// start the pipeline's stores. The tests themselves live in its subpackages, one per pipeline
// (steps, hot) plus the whole-binary scenarios (pipeline), so that `go test` runs them in
// parallel. They run the rankstream binary (testenv.Rankstream) or the processors with their
// real sinks, on the real servers and kfake.
//
// Only tests import it; it never imports cmd.
package e2e

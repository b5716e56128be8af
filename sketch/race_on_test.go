//go:build race

package sketch_test

// raceEnabled is set when the tests run under the race detector, which makes
// the sketch's hot path about ten times slower.
const raceEnabled = true

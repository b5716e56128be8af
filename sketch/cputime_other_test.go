//go:build !linux

package sketch_test

// threadCPU is not available outside Linux: the benchmarks report wall time
// only.
func threadCPU() (int64, bool) { return 0, false }

package testenv

import (
	"context"
	"testing"

	"github.com/lovoo/goka"
	"github.com/lovoo/goka/tester"
)

// RunGokaTester runs graph's processor on goka's tester tt until the test ends, and fails the
// test if the processor ends with an error.
func RunGokaTester(t testing.TB, graph *goka.GroupGraph, tt *tester.Tester) {
	t.Helper()
	proc, err := goka.NewProcessor(nil, graph, goka.WithTester(tt))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("processor: %v", err)
		}
	})
}

package main

import (
	"context"
	"io"

	"github.com/rankstream/rankstream/internal/topkcli"
)

func runTopk(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return topkcli.Run(ctx, args, stdin, stdout, stderr)
}

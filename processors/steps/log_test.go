package steps_test

import (
	"io"
	"log/slog"
)

func nopLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

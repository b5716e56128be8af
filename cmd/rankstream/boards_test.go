package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadBoardsFileStopsTheStart: process, serve, dev and gateway check --boards before they start
// anything, and say where the file is wrong (file, line, column, field).
func TestBadBoardsFileStopsTheStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.yaml")
	bad := "boards:\n  - name: arena\n    periods: [d]\n    tz: Mars/Olympus\n"
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"process"}, {"serve"}, {"dev"}, {"gateway", "--api-keys", filepath.Join(t.TempDir(), "keys")}} {
		cmd := args[0]
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), append(args, "--boards", file, "--http", "127.0.0.1:0"), strings.NewReader(""), &stdout, &stderr)
		if want := "b.yaml:4:9: boards[0].tz: invalid"; code != 1 || !strings.Contains(stderr.String(), want) || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 1 saying %q", cmd, code, stderr.String(), stdout.String(), want)
		}
	}
	var stderr bytes.Buffer
	if code := dispatch(context.Background(), []string{"serve", "--boards", filepath.Join(t.TempDir(), "none.yaml")}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "none.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr.String())
	}
}

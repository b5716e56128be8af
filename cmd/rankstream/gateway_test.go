package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewayRefusesToStartWithoutKeys: without --api-keys (or RANKSTREAM_API_KEYS) the
// gateway does not start (usage error), and a keys file holding a key instead of its hash is
// refused with the line it is on; nothing is served with no key or a plain one.
func TestGatewayRefusesToStartWithoutKeys(t *testing.T) {
	var stderr bytes.Buffer
	if c := dispatch(context.Background(), []string{"gateway"}, nil, nil, &stderr); c != 2 || !strings.Contains(stderr.String(), "--api-keys is required") {
		t.Errorf("without keys: status %d, %q", c, stderr.String())
	}
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("app my-plain-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RANKSTREAM_API_KEYS", keys)
	stderr.Reset()
	if c := dispatch(context.Background(), []string{"gateway", "--http", "127.0.0.1:0"}, nil, nil, &stderr); c != 1 || !strings.Contains(stderr.String(), "line 1 (app): want the SHA-256") {
		t.Errorf("a plain key in the file: status %d, %q", c, stderr.String())
	}
}

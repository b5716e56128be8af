package testenv

import (
	"context"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Browser starts a headless Chromium (Debian's chromium package, which deploy/local/servers.sh
// installs) with a fresh profile and returns a chromedp context on one tab of it, closed when
// the test ends. Without chromium on the PATH the test is skipped (or fails if
// RequireServers).
func Browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		noServer(t, "testenv: no chromium on the PATH (deploy/local/servers.sh install puts it there)")
		return nil
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("testenv: start chromium: %v", err)
	}
	return ctx
}

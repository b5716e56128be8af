package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Rankstream builds cmd/rankstream once per test binary and returns its path, for tests
// that run it as a separate OS process (crash tests kill it with SIGKILL). Every test binary
// of one checkout builds into the same file, $TMPDIR/rankstream-test-bin/<checkout>/rankstream
// (the Go build cache makes the second build cheap), replacing it atomically, so nothing piles
// up in $TMPDIR. <checkout> is a hash of the module's folder: tests of another checkout (a git
// worktree) running at the same time must not swap their binary for this one's.
func Rankstream(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
		if err != nil {
			buildErr = fmt.Errorf("go list -m: %w", err)
			return
		}
		h := fnv.New64a()
		h.Write(bytes.TrimSpace(root))
		checkout := fmt.Sprintf("%016x", h.Sum64())
		dir := filepath.Join(os.TempDir(), "rankstream-test-bin", checkout)
		if buildErr = os.MkdirAll(dir, 0o755); buildErr != nil {
			return
		}
		buildPath = filepath.Join(dir, "rankstream")
		tmp := fmt.Sprintf("%s.%d", buildPath, os.Getpid())
		out, err := exec.Command("go", "build", "-o", tmp, "github.com/rankstream/rankstream/cmd/rankstream").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build cmd/rankstream: %w\n%s", err, out)
			return
		}
		buildErr = os.Rename(tmp, buildPath)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Process is a child process whose output is kept for failure messages.
type Process struct {
	Name string
	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{}
	err  error
}

// SyncBuffer is a bytes.Buffer safe for concurrent use: the output of a process, or a log
// handler's, read while it is written.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// StartProcess starts bin with args. The process is killed at cleanup; its output is logged
// when the test failed.
func StartProcess(t testing.TB, name, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{Name: name, cmd: exec.Command(bin, args...), out: &SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("output of %s (%s %s):\n%s", name, filepath.Base(bin), strings.Join(args, " "), p.Output())
		}
	})
	return p
}

// Signal sends sig to the process, if it still runs.
func (p *Process) Signal(sig os.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// Wait waits up to a minute for the process to end and returns its exit error.
func (p *Process) Wait() error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(time.Minute):
		return fmt.Errorf("%s still running after a minute", p.Name)
	}
}

// RunStatus runs bin with args to its end (up to a minute) and returns its exit status and
// output; the test fails if it could not run or did not end.
func RunStatus(t testing.TB, name, bin string, args ...string) (int, string) {
	t.Helper()
	p := StartProcess(t, name, bin, args...)
	err := p.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, p.Output()
	case errors.As(err, &exit):
		return exit.ExitCode(), p.Output()
	}
	t.Fatalf("%s: %v\n%s", name, err, p.Output())
	return 0, ""
}

// Exited returns an error if the process has ended (whatever its status), nil while it runs.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("exited: %v", p.err)
	default:
		return nil
	}
}

// CPU is the processor time the process used so far (user and system, from /proc).
func (p *Process) CPU() (time.Duration, error) {
	return PidCPU(p.cmd.Process.Pid, p.Name)
}

// PidCPU is the processor time the process pid (called name in errors) used so far (user and
// system, from /proc).
func PidCPU(pid int, name string) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("testenv: cpu of %s: %w", name, err)
	}
	d, ok := statCPU(string(b))
	if !ok {
		return 0, fmt.Errorf("testenv: cpu of %s: /proc stat %q", name, b)
	}
	return d, nil
}

// clockTick is Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat (100 on every
// mainstream kernel and architecture).
const clockTick = 10 * time.Millisecond

// statCPU returns the user and system CPU time in a /proc/<pid>/stat line. The command name,
// in parentheses, may hold spaces and parentheses: utime and stime are the 12th and 13th
// fields after its last ')' (fields 14 and 15 of proc(5)).
func statCPU(stat string) (time.Duration, bool) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, false
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 13 {
		return 0, false
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(user+sys) * clockTick, true
}

// Output is everything the process printed so far.
func (p *Process) Output() string { return p.out.String() }

// WaitFor polls cond every 100 ms until it holds, failing the test after timeout with what
// it was waiting for.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Get GETs url and returns the status code and body. A 503 with Retry-After (the query API's
// answer to a Redis read that did not finish within its deadline, or to a board that changed
// between two reads of one answer: a loaded machine gives both) is asked again, a second
// later, for up to 30 s; each is logged with its reason. Any other answer is returned as is.
func Get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || time.Now().After(deadline) {
			return resp.StatusCode, body
		}
		t.Logf("GET %s: 503 %s; asking again", url, bytes.TrimSpace(body))
		time.Sleep(time.Second)
	}
}

// PeakRSS is the process's peak resident memory so far in bytes (VmHWM in /proc).
func (p *Process) PeakRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("testenv: peak RSS of %s: %w", p.Name, err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("testenv: peak RSS of %s: VmHWM %q", p.Name, v)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("testenv: peak RSS of %s: no VmHWM", p.Name)
}

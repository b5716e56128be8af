package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// ClickHouseServer is a clickhouse-server of one test's own, for fault injection (stop and
// start again) that must not disturb the shared server of RANKSTREAM_TEST_CLICKHOUSE. It keeps
// its port and data folder across restarts, with the configuration of deploy/local/servers.sh.
type ClickHouseServer struct {
	t        testing.TB
	bin      string
	dir      string
	port     int
	httpPort int
	proc     serverProc
}

// StartClickHouseServer starts a private clickhouse-server on free loopback ports and stops it
// when the test ends. Like the shared servers it needs `make test` (Debian's clickhouse-server):
// without it the test is skipped, or fails under RequireServers.
func StartClickHouseServer(t testing.TB) *ClickHouseServer {
	t.Helper()
	bin, err := exec.LookPath("clickhouse-server")
	if err != nil {
		bin, err = exec.LookPath("/usr/sbin/clickhouse-server")
	}
	if err != nil {
		noServer(t, "testenv: no clickhouse-server binary for a private server: "+err.Error())
	}
	s := &ClickHouseServer{t: t, bin: bin, dir: t.TempDir(), port: freePort(t), httpPort: freePort(t)}
	s.proc = serverProc{t: t, name: fmt.Sprintf("clickhouse-server on port %d", s.port), port: s.port}
	t.Cleanup(func() { s.Stop(syscall.SIGKILL); s.proc.release() })
	s.writeConfig()
	s.Start()
	return s
}

// Addr is the server's native-protocol host:port.
func (s *ClickHouseServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *ClickHouseServer) writeConfig() {
	for _, d := range []string{"data", "tmp", "user_files", "format_schemas"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			s.t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/server.err.log</errorlog><size>100M</size><count>1</count></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>%[2]d</tcp_port>
    <http_port>%[3]d</http_port>
    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/tmp/</tmp_path>
    <user_files_path>%[1]s/user_files/</user_files_path>
    <format_schema_path>%[1]s/format_schemas/</format_schema_path>
    <users_config>%[1]s/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
    <mlock_executable>false</mlock_executable>
</yandex>
`, s.dir, s.port, s.httpPort)
	users := `<?xml version="1.0"?>
<yandex>
    <profiles><default><allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type></default></profiles>
    <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
	for name, content := range map[string]string{"config.xml": config, "users.xml": users} {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(content), 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// Start starts the server (again, after Stop) on its ports and data and waits until it answers.
func (s *ClickHouseServer) Start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--config-file="+filepath.Join(s.dir, "config.xml"))
	cmd.Dir = s.dir
	s.proc.start(cmd, 60*time.Second, 100*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return execClickHouse(ctx, s.Addr(), "SELECT 1")
	}, func() string {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.err.log"))
		return string(log)
	})
}

// Stop ends the server with sig (SIGTERM: a clean shutdown; SIGKILL: a crash) and waits until
// it is gone; after a minute a SIGTERM becomes SIGKILL. Stopping a stopped server is a no-op.
func (s *ClickHouseServer) Stop(sig syscall.Signal) { s.proc.stop(sig) }

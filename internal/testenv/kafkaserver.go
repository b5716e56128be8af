package testenv

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// KafkaVersion is the version of the broker deploy/local/servers.sh assembles.
const KafkaVersion = "4.4.0"

// KafkaServer is a Kafka broker (KRaft, one combined broker and controller) of one test's own,
// for fault injection (stop, kill, restart) that must not disturb the shared broker of
// RANKSTREAM_TEST_KAFKA, which other packages use at the same time. It runs from the jars
// deploy/local/servers.sh caches and keeps its ports and data folder across restarts, like a
// production broker that comes back.
type KafkaServer struct {
	t              testing.TB
	java, libs     string
	dir            string
	port, ctrlPort int
	proc           serverProc
}

// kafkaLibs is where deploy/local/servers.sh caches the broker's jars.
func kafkaLibs() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	libs := filepath.Join(cache, "rankstream", "kafka-"+KafkaVersion, "libs")
	if _, err := os.Stat(filepath.Join(libs, "kafka_2.13-"+KafkaVersion+".jar")); err != nil {
		return "", fmt.Errorf("no Kafka jars (run deploy/local/servers.sh install): %w", err)
	}
	return libs, nil
}

// StartKafkaServer formats a new broker's storage and starts it on free loopback ports; it is
// stopped when the test ends. Like the shared servers it needs `make test` (the jars and a
// JDK): without them the test is skipped, or fails under RequireServers. Starting takes about
// 10 s on two busy cores.
func StartKafkaServer(t testing.TB) *KafkaServer {
	t.Helper()
	java, err := exec.LookPath("java")
	libs, lerr := kafkaLibs()
	if err == nil {
		err = lerr
	}
	if err != nil {
		noServer(t, "testenv: cannot run a private Kafka broker: "+err.Error())
	}
	s := &KafkaServer{t: t, java: java, libs: libs, dir: t.TempDir(), port: freePort(t), ctrlPort: freePort(t)}
	s.proc = serverProc{t: t, name: fmt.Sprintf("kafka on port %d", s.port), port: s.port}
	t.Cleanup(func() { s.Stop(syscall.SIGKILL); s.proc.release() })
	s.writeConfig()
	format := exec.Command(java, append(s.jvmFlags("-Xmx256m", "-Dkafka.root.level=WARN"), "kafka.tools.StorageTool", "format",
		"--standalone", "--cluster-id", newClusterID(), "--config", s.path("server.properties"))...)
	if out, err := format.CombinedOutput(); err != nil {
		t.Fatalf("testenv: kafka storage format: %v\n%s", err, out)
	}
	s.Start()
	return s
}

// newClusterID returns a random Kafka cluster id: 16 random bytes in unpadded
// URL-safe base64. An id starting with '-' is drawn again, as Kafka's own
// Uuid.randomUuid does: kafka-storage's argument parser would read it as an
// option ("argument --cluster-id/-t: expected one argument"), one format in 64.
func newClusterID() string {
	id := make([]byte, 16)
	for {
		_, _ = rand.Read(id)
		if s := base64.RawURLEncoding.EncodeToString(id); s[0] != '-' {
			return s
		}
	}
}

func (s *KafkaServer) path(name string) string { return filepath.Join(s.dir, name) }

// Addr is the broker's host:port.
func (s *KafkaServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Brokers is Addr as a seed list.
func (s *KafkaServer) Brokers() []string { return []string{s.Addr()} }

// writeConfig writes the configuration of deploy/local/servers.sh.
func (s *KafkaServer) writeConfig() {
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:%[2]d
log.dirs=%[3]s
num.partitions=%[4]d
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
`, s.port, s.ctrlPort, s.path("data"), DefaultPartitions)
	log4j := "Configuration:\n  Appenders:\n    Console:\n      name: STDOUT\n      PatternLayout:\n        pattern: \"[%d] %p %m (%c)%n\"\n" +
		"  Loggers:\n    Root:\n      level: \"${sys:kafka.root.level:-INFO}\"\n      AppenderRef:\n        - ref: STDOUT\n"
	for name, content := range map[string]string{"server.properties": props, "log4j2.yaml": log4j} {
		if err := os.WriteFile(s.path(name), []byte(content), 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *KafkaServer) jvmFlags(extra ...string) []string {
	return append(extra, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:+ExitOnOutOfMemoryError",
		"-Djava.awt.headless=true", "-Dlog4j2.configurationFile="+s.path("log4j2.yaml"), "-cp", s.libs+"/*")
}

// Start starts the broker (again, after Stop) on its ports and data and waits until it answers
// a metadata request.
func (s *KafkaServer) Start() {
	s.t.Helper()
	logf, err := os.OpenFile(s.path("server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(s.java, append(s.jvmFlags("-Xms128m", "-Xmx512m", "-Dkafka.root.level=WARN"), "kafka.Kafka", s.path("server.properties"))...)
	cmd.Stdout, cmd.Stderr = logf, logf
	s.proc.start(cmd, 90*time.Second, 200*time.Millisecond, func() error { return pingKafka(s.Addr()) }, s.tail)
}

func (s *KafkaServer) tail() string {
	b, _ := os.ReadFile(s.path("server.log"))
	lines := strings.Split(string(b), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// Stop ends the broker with sig (SIGTERM: a clean shutdown; SIGKILL: a crash) and waits until
// it is gone; after a minute a SIGTERM becomes SIGKILL. Stopping a stopped broker is a no-op.
func (s *KafkaServer) Stop(sig syscall.Signal) { s.proc.stop(sig) }

package opse2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rankstream/rankstream/internal/platform/boardsfile"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/testenv"
)

var deploy = filepath.Join("..", "..", "..", "deploy")

// image is the rankstream image the files run (deploy/Dockerfile's ENTRYPOINT is the binary).
const image = "rankstream:dev"

// binaryHelp is what `rankstream <command> --help` says: its flags and environment variables.
type binaryHelp struct {
	flags, env map[string]bool
}

var (
	helpMu    sync.Mutex
	helpCache = map[string]binaryHelp{}
	flagLine  = regexp.MustCompile(`^  -([a-z0-9-]+)`)
	envLine   = regexp.MustCompile(`^  (RANKSTREAM_[A-Z0-9_]+) +--([a-z0-9-]+)$`)
)

// helpOf asks the built binary for the flags and variables of command; a command it does not
// know fails the test.
func helpOf(t *testing.T, command string) binaryHelp {
	t.Helper()
	helpMu.Lock()
	defer helpMu.Unlock()
	if h, ok := helpCache[command]; ok {
		return h
	}
	out, err := exec.Command(bin(t), command, "--help").CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("rankstream %s --help: %v", command, err)
	}
	h := binaryHelp{flags: map[string]bool{}, env: map[string]bool{}}
	for _, line := range strings.Split(string(out), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			h.flags[m[1]] = true
		}
		if m := envLine.FindStringSubmatch(line); m != nil {
			h.env[m[1]] = true
		}
	}
	if len(h.flags) == 0 || len(h.env) != len(h.flags) {
		t.Fatalf("rankstream %s --help: %d flags, %d variables: not a command?\n%s", command, len(h.flags), len(h.env), out)
	}
	helpCache[command] = h
	return h
}

var (
	binOnce sync.Once
	binPath string
)

func bin(t *testing.T) string {
	binOnce.Do(func() { binPath = testenv.Rankstream(t) })
	return binPath
}

// checkRun checks a rankstream command line (args after the binary) and its environment: the
// command exists, and so does every flag and every RANKSTREAM_* variable, and only those.
func checkRun(t *testing.T, where string, args []string, env []string) binaryHelp {
	t.Helper()
	if len(args) == 0 {
		t.Errorf("%s: no rankstream command", where)
		return binaryHelp{}
	}
	h := helpOf(t, args[0])
	for _, a := range args[1:] {
		name, ok := strings.CutPrefix(a, "--")
		name, _, _ = strings.Cut(name, "=")
		if !ok || !h.flags[name] {
			t.Errorf("%s: rankstream %s has no flag %q", where, args[0], a)
		}
	}
	for _, e := range env {
		if !h.env[e] {
			t.Errorf("%s: rankstream %s reads no variable %s", where, args[0], e)
		}
	}
	return h
}

// portOf returns the port of a RANKSTREAM_HTTP value (host:port).
func portOf(t *testing.T, where, addr string) string {
	t.Helper()
	host, port, err := splitHostPort(addr)
	if err != nil || host != "0.0.0.0" {
		t.Errorf("%s: RANKSTREAM_HTTP=%q: want 0.0.0.0:<port> (a container listens on every interface)", where, addr)
	}
	return port
}

func splitHostPort(addr string) (string, string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", "", fmt.Errorf("no port in %q", addr)
	}
	if _, err := strconv.Atoi(addr[i+1:]); err != nil {
		return "", "", err
	}
	return addr[:i], addr[i+1:], nil
}

// checkProbePath checks that the HTTP servers of rankstream (obs.Mux) serve path.
func checkProbePath(t *testing.T, where, path string) {
	t.Helper()
	if _, pattern := obs.Mux(nil).Handler(httptest.NewRequest("GET", path, nil)); pattern == "" || strings.HasSuffix(pattern, "/") {
		t.Errorf("%s: probe path %q is not served by rankstream (obs.Mux)", where, path)
	}
}

// checkBoards checks a boards file (internal/platform/boardsfile); checkKeys an API keys file.
func checkBoards(t *testing.T, where string, data []byte) {
	t.Helper()
	if _, err := boardsfile.Parse(where, data); err != nil {
		t.Errorf("%s: %v", where, err)
	}
}

func checkKeys(t *testing.T, where string, data []byte) {
	t.Helper()
	if _, err := gateway.ParseKeys(bytes.NewReader(data)); err != nil {
		t.Errorf("%s: %v", where, err)
	}
}

// TestComposeFile: deploy/compose/compose.yaml parses; each rankstream service runs a command
// the binary has with flags and variables it reads; its RANKSTREAM_HTTP port is the one
// published and health-checked on /readyz; the files it names are mounted and valid; the
// state folder is a volume; every dependency is a service.
func TestComposeFile(t *testing.T) {
	dir := filepath.Join(deploy, "compose")
	raw, err := os.ReadFile(filepath.Join(dir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Image       string
		Command     []string
		Environment map[string]string
		Volumes     []string
		Ports       []string
		Healthcheck struct{ Test []string }
		DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
	}
	var f struct {
		Services map[string]service
		Volumes  map[string]any
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	want := map[string]int{"process": 2, "serve": 1, "gateway": 1, "topics": 1, "migrate": 1}
	for name, s := range f.Services {
		for dep := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("%s depends on %s: no such service", name, dep)
			}
		}
		if s.Image != image {
			if len(s.Healthcheck.Test) == 0 {
				t.Errorf("%s: no health check", name)
			}
			continue
		}
		var env []string
		for k := range s.Environment {
			env = append(env, k)
		}
		checkRun(t, name, s.Command, env)
		want[s.Command[0]]--
		mounts := map[string]string{} // container path -> host file or volume
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 {
				t.Errorf("%s: volume %q", name, v)
				continue
			}
			mounts[parts[1]] = parts[0]
			if strings.HasPrefix(parts[0], ".") {
				if _, err := os.Stat(filepath.Join(dir, parts[0])); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			} else if _, ok := f.Volumes[parts[0]]; !ok {
				t.Errorf("%s: volume %s is not declared", name, parts[0])
			}
		}
		for variable, check := range map[string]func(*testing.T, string, []byte){"RANKSTREAM_BOARDS": checkBoards, "RANKSTREAM_API_KEYS": checkKeys} {
			if path, ok := s.Environment[variable]; ok {
				host, mounted := mounts[path]
				if !mounted {
					t.Errorf("%s: %s=%s is not mounted", name, variable, path)
					continue
				}
				data, err := os.ReadFile(filepath.Join(dir, host))
				if err != nil {
					t.Fatal(err)
				}
				check(t, name+": "+host, data)
			}
		}
		if s.Command[0] == "process" {
			state, ok := s.Environment["RANKSTREAM_STATE_DIR"]
			if host := mounts[state]; !ok || host == "" || strings.HasPrefix(host, ".") {
				t.Errorf("%s: RANKSTREAM_STATE_DIR=%q is not on a volume", name, state)
			}
		}
		if addr, ok := s.Environment["RANKSTREAM_HTTP"]; ok {
			port := portOf(t, name, addr)
			published := false
			for _, p := range s.Ports {
				published = published || strings.HasSuffix(p, ":"+port)
			}
			probe := strings.Join(s.Healthcheck.Test, " ")
			if !published || !strings.Contains(probe, "127.0.0.1:"+port+"/readyz") {
				t.Errorf("%s: listens on %s; published %v, health check %q: want the port published and /readyz checked on it", name, port, s.Ports, probe)
			}
			checkProbePath(t, name, "/readyz")
		} else if s.Command[0] != "topics" && s.Command[0] != "migrate" {
			t.Errorf("%s: no RANKSTREAM_HTTP", name)
		}
	}
	for cmd, n := range want {
		if n != 0 {
			t.Errorf("compose.yaml runs %s %d times too few", cmd, n)
		}
	}
}

// k8sObject is the part of a Kubernetes object the test reads.
type k8sObject struct {
	Kind     string
	Metadata struct{ Name string }
	Data     map[string]string
	// StringData is a Secret's.
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		}
		// A Service's selector is a plain map; read it apart (serviceSpec).
		Template struct {
			Metadata struct{ Labels map[string]string }
			Spec     podSpec
		}
		VolumeClaimTemplates []struct {
			Metadata struct{ Name string }
		} `yaml:"volumeClaimTemplates"`
	}
}

type probe struct {
	HTTPGet struct {
		Path string
		Port any
	} `yaml:"httpGet"`
}

type podSpec struct {
	Containers []struct {
		Name, Image string
		Args        []string
		Command     []string
		Env         []struct{ Name, Value string }
		EnvFrom     []struct {
			ConfigMapRef struct{ Name string } `yaml:"configMapRef"`
		} `yaml:"envFrom"`
		Ports []struct {
			Name          string
			ContainerPort int `yaml:"containerPort"`
		}
		ReadinessProbe *probe `yaml:"readinessProbe"`
		LivenessProbe  *probe `yaml:"livenessProbe"`
		Resources      struct {
			Requests map[string]string
		}
		VolumeMounts []struct {
			Name      string
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	Volumes []struct {
		Name      string
		ConfigMap *struct{ Name string } `yaml:"configMap"`
		Secret    *struct {
			SecretName string `yaml:"secretName"`
		}
	}
}

// TestKubernetesManifests: every manifest parses; each rankstream container runs a command
// the binary has, with flags and variables (its own and its ConfigMaps') it reads; its
// RANKSTREAM_HTTP port is its http containerPort, probed on /readyz (and /healthz for
// liveness) that rankstream serves; it requests CPU and memory; the files it names are mounted
// from a ConfigMap or Secret whose contents are valid; process is a StatefulSet whose
// --state-dir is a volume claim; every PodDisruptionBudget and Service selects a workload.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(deploy, "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var objs []k8sObject
	var services []map[string]string // their selectors
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var node yaml.Node
			if err := dec.Decode(&node); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var o k8sObject
			if err := node.Decode(&o); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if o.Kind == "Service" {
				var s struct {
					Spec struct{ Selector map[string]string }
				}
				if err := node.Decode(&s); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				services = append(services, s.Spec.Selector)
			}
			objs = append(objs, o)
		}
	}
	files2 := map[string]map[string]string{} // ConfigMap and Secret contents by name
	for _, o := range objs {
		switch o.Kind {
		case "ConfigMap":
			files2[o.Metadata.Name] = o.Data
		case "Secret":
			files2[o.Metadata.Name] = o.StringData
		}
	}
	workloads := map[string]map[string]string{} // kind/name -> pod labels
	ran := map[string]string{}                  // rankstream command -> kind
	for _, o := range objs {
		if o.Kind != "Deployment" && o.Kind != "StatefulSet" && o.Kind != "Job" {
			continue
		}
		where := o.Kind + "/" + o.Metadata.Name
		workloads[where] = o.Spec.Template.Metadata.Labels
		pod := o.Spec.Template.Spec
		volumes := map[string]map[string]string{} // volume name -> the files it holds (nil: a claim)
		for _, v := range pod.Volumes {
			switch {
			case v.ConfigMap != nil:
				volumes[v.Name] = files2[v.ConfigMap.Name]
			case v.Secret != nil:
				volumes[v.Name] = files2[v.Secret.SecretName]
			}
		}
		for _, c := range o.Spec.VolumeClaimTemplates {
			volumes[c.Metadata.Name] = nil
		}
		for _, c := range pod.Containers {
			where := where + "/" + c.Name
			if c.Image != image || len(c.Command) != 0 {
				t.Errorf("%s: image %q, command %v: want %s and its entrypoint", where, c.Image, c.Command, image)
			}
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			names := slices.Collect(maps.Keys(env))
			for _, ef := range c.EnvFrom {
				cm, ok := files2[ef.ConfigMapRef.Name]
				if !ok {
					t.Errorf("%s: no ConfigMap %s", where, ef.ConfigMapRef.Name)
				}
				names = append(names, slices.Collect(maps.Keys(cm))...)
			}
			checkRun(t, where, c.Args, names)
			if len(c.Args) == 0 {
				continue
			}
			ran[c.Args[0]] = o.Kind
			if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
				t.Errorf("%s: no CPU or memory request", where)
			}
			mounts := map[string]string{} // mount path -> volume
			for _, m := range c.VolumeMounts {
				if _, ok := volumes[m.Name]; !ok {
					t.Errorf("%s: mounts %s, no such volume", where, m.Name)
				}
				mounts[m.MountPath] = m.Name
			}
			for variable, check := range map[string]func(*testing.T, string, []byte){"RANKSTREAM_BOARDS": checkBoards, "RANKSTREAM_API_KEYS": checkKeys} {
				if path, ok := env[variable]; ok {
					vol, mounted := mounts[filepath.Dir(path)]
					data, held := volumes[vol][filepath.Base(path)]
					if !mounted || !held {
						t.Errorf("%s: %s=%s is in no mounted ConfigMap or Secret", where, variable, path)
						continue
					}
					check(t, where+": "+path, []byte(data))
				}
			}
			if c.Args[0] == "process" {
				vol, ok := mounts[env["RANKSTREAM_STATE_DIR"]]
				if o.Kind != "StatefulSet" || !ok || volumes[vol] != nil {
					t.Errorf("%s: process must be a StatefulSet with RANKSTREAM_STATE_DIR on a volume claim", where)
				}
			}
			if o.Kind == "Job" {
				continue
			}
			port := portOf(t, where, env["RANKSTREAM_HTTP"])
			if len(c.Ports) != 1 || strconv.Itoa(c.Ports[0].ContainerPort) != port {
				t.Errorf("%s: listens on %s, container ports %+v", where, port, c.Ports)
			}
			for _, p := range []struct {
				probe *probe
				path  string
			}{{c.ReadinessProbe, "/readyz"}, {c.LivenessProbe, "/healthz"}} {
				if p.probe == nil || p.probe.HTTPGet.Path != p.path {
					t.Errorf("%s: want a probe on %s", where, p.path)
					continue
				}
				checkProbePath(t, where, p.probe.HTTPGet.Path)
				if pp := fmt.Sprint(p.probe.HTTPGet.Port); len(c.Ports) == 1 && pp != c.Ports[0].Name && pp != port {
					t.Errorf("%s: probe on port %s, listens on %s", where, pp, port)
				}
			}
		}
	}
	for _, cmd := range []string{"process", "serve", "gateway", "topics", "migrate"} {
		if _, ok := ran[cmd]; !ok {
			t.Errorf("no manifest runs rankstream %s", cmd)
		}
	}
	if ran["serve"] != "Deployment" || ran["gateway"] != "Deployment" {
		t.Errorf("serve and gateway run as %s and %s, want Deployments", ran["serve"], ran["gateway"])
	}
	selects := func(sel map[string]string) bool {
		for _, labels := range workloads {
			ok := len(sel) > 0
			for k, v := range sel {
				ok = ok && labels[k] == v
			}
			if ok {
				return true
			}
		}
		return false
	}
	pdbs := 0
	for _, o := range objs {
		if o.Kind == "PodDisruptionBudget" {
			pdbs++
			if !selects(o.Spec.Selector.MatchLabels) {
				t.Errorf("PodDisruptionBudget/%s selects no workload", o.Metadata.Name)
			}
		}
	}
	if pdbs == 0 {
		t.Error("no PodDisruptionBudget")
	}
	for _, sel := range services {
		if !selects(sel) {
			t.Errorf("a Service selects no workload: %v", sel)
		}
	}
}

package opse2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.yaml.in/yaml/v3"

	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// observability is deploy/observability, from this package's folder.
var observability = filepath.Join("..", "..", "..", "deploy", "observability")

// TestAlertRulesCheck: promtool accepts the alert rules.
func TestAlertRulesCheck(t *testing.T) {
	promtool := testenv.Tool(t, "promtool")
	out, err := exec.Command(promtool, "check", "rules", filepath.Join(observability, "alerts.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// TestDashboardAndAlertsHaveData: a real Prometheus scrapes `rankstream dev` (its demo traffic,
// a few reads of the API and writes through its gateway, one invalid record on each input, a quarantined spike and a release) and loads the alert rules;
// every expression of the dashboard, and the signal of every alert rule (its comparison made
// a `bool` one, which returns every series of the signal), returns data (a number, not NaN:
// the histograms observed something), and every rule is evaluated without error.
func TestDashboardAndAlertsHaveData(t *testing.T) {
	prometheus := testenv.Tool(t, "prometheus")
	exprs := dashboardExprs(t)
	rules := alertRules(t)
	for _, r := range rules {
		exprs = append(exprs, signal(t, r.Alert, r.Expr))
	}

	dir := t.TempDir()
	httpAddr, kafkaAddr, promAddr := testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
	const key = "ops-test-key"
	dev := testenv.StartProcess(t, "dev", testenv.Rankstream(t), "dev", "--http", httpAddr,
		"--kafka-listen", kafkaAddr, "--data-dir", filepath.Join(dir, "dev"), "--api-key", key)
	testenv.WaitFor(t, 2*time.Minute, "rankstream dev ready", func() bool {
		if err := dev.Exited(); err != nil {
			t.Fatalf("rankstream dev: %v", err)
		}
		return get("http://"+httpAddr+"/readyz") == http.StatusOK
	})

	rulesPath, err := filepath.Abs(filepath.Join(observability, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q]\n"+
		"scrape_configs:\n  - job_name: rankstream\n    static_configs: [{targets: [%q]}]\n", rulesPath, httpAddr)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := testenv.StartProcess(t, "prometheus", prometheus, "--config.file="+configPath,
		"--storage.tsdb.path="+filepath.Join(dir, "prometheus"), "--web.listen-address="+promAddr)
	testenv.WaitFor(t, time.Minute, "prometheus ready", func() bool {
		if err := prom.Exited(); err != nil {
			t.Fatalf("prometheus: %v", err)
		}
		return get("http://"+promAddr+"/-/ready") == http.StatusOK
	})

	// One invalid record on each input, for the dead-letter series.
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{string(topics.StepsReported), string(topics.ScoresUpdated), string(topics.SearchQueries), string(topics.FriendsChanged)} {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Key: []byte("u1"), Value: []byte("not json")}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
	// A rise above the demo arena's max_incr, quarantined, and an operator's release, for the
	// fair-play series.
	now := time.Now().UnixMilli()
	for _, op := range []string{
		fmt.Sprintf(`{"request_id":"ops-spike","board":"arena","member":"cheat1","op":"incr","score":5000000,"ts":%d}`, now),
		fmt.Sprintf(`{"request_id":"ops-release","board":"arena","member":"cheat1","op":"release","by":"ops-test","ts":%d}`, now+1),
	} {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: string(topics.ScoresUpdated), Key: []byte("cheat1"), Value: []byte(op)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", op, err)
		}
	}

	api := "http://" + promAddr + "/api/v1/query?query="
	missing, answers := map[string]string{}, map[string]string{}
	flips := 0
	waitFor(t, 3*time.Minute, "every expression returns data", func() bool {
		for _, path := range []string{"/v1/hot/search", "/v1/hot/search", "/v1/boards/steps", "/v1/boards/arena"} {
			get("http://" + httpAddr + path) // the read path's series
		}
		post(t, "http://"+httpAddr+"/v1/search", key, fmt.Sprintf(`{"query":"ops","ts":%d,"user_id":"u1"}`, time.Now().UnixMilli()))
		// A friendship made and ended in turn: each one a write of friends:{user}.
		flips++
		change := fmt.Sprintf(`{"user_id":"ops1","friend_id":"ops2","op":%q,"ts":%d}`, [2]string{"add", "remove"}[flips%2], time.Now().UnixMilli())
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: string(topics.FriendsChanged), Key: []byte("ops1"), Value: []byte(change)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", change, err)
		}
		clear(missing)
		for _, e := range exprs {
			n, answer := query(api + url.QueryEscape(e))
			if n == 0 {
				missing[e] = answer
			}
			answers[e] = answer
		}
		return len(missing) == 0
	}, func() string { return fmt.Sprint(missing) })
	for _, e := range exprs {
		t.Logf("%s: %s", e, answers[e])
	}

	// The rules as Prometheus evaluates them: all loaded, none failing.
	var got struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				}
			}
		}
	}
	waitFor(t, time.Minute, "every alert rule evaluated", func() bool {
		got.Data.Groups = nil
		if !getJSON("http://"+promAddr+"/api/v1/rules", &got) || len(got.Data.Groups) != 1 {
			return false
		}
		ok := len(got.Data.Groups[0].Rules) == len(rules)
		for _, r := range got.Data.Groups[0].Rules {
			ok = ok && r.Health == "ok"
		}
		return ok
	}, func() string { return fmt.Sprintf("%+v", got.Data.Groups) })
}

// waitFor checks cond every second until it holds, failing the test after timeout with what
// it waited for and what detail says then.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, detail())
		}
		time.Sleep(time.Second)
	}
}

// dashboardExprs returns the expression of every target of every panel of the dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(observability, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var exprs []string
	for _, p := range d.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	if len(exprs) == 0 {
		t.Fatal("dashboard.json: no expression")
	}
	return exprs
}

type alertRule struct {
	Alert, Expr string
	Annotations map[string]string
}

// alertRules returns the alert rules; each must have a summary and a runbook line.
func alertRules(t *testing.T) []alertRule {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(observability, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Groups []struct{ Rules []alertRule } }
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	var rules []alertRule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Annotations["summary"] == "" || r.Annotations["runbook"] == "" {
				t.Errorf("alert rule %q: want a name, a summary and a runbook line", r.Alert)
			}
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		t.Fatal("alerts.yaml: no rule")
	}
	return rules
}

// signal returns expr, "<signal> <op> <threshold>" with exactly one comparison operator,
// with the operator made a bool one: it returns every series of the signal, 0 or 1.
func signal(t *testing.T, name, expr string) string {
	t.Helper()
	var found []string
	for _, op := range []string{" > ", " < ", " >= ", " <= ", " == ", " != "} {
		if n := strings.Count(expr, op); n > 0 {
			found = append(found, strings.Repeat(op, n))
		}
	}
	if len(found) != 1 || strings.Count(found[0], " ") != 2 {
		t.Fatalf("alert %s: expression %q must have exactly one comparison operator, with spaces around it", name, expr)
	}
	op := strings.TrimSpace(found[0])
	return strings.Replace(expr, " "+op+" ", " "+op+" bool ", 1)
}

// query runs an instant query and returns the number of series in its answer whose value is
// a number (not NaN: a quantile or a ratio of nothing observed is no data), 0 on any failure,
// and the answer.
func query(u string) (int, string) {
	var a struct {
		Status string
		Data   struct {
			Result []struct{ Value [2]any }
		}
	}
	if !getJSON(u, &a) || a.Status != "success" {
		return 0, fmt.Sprintf("%+v", a)
	}
	n := 0
	for _, r := range a.Data.Result {
		if v, ok := r.Value[1].(string); ok && v != "NaN" {
			n++
		}
	}
	return n, fmt.Sprintf("%+v", a.Data.Result)
}

// post sends body with the gateway key; it must be accepted.
func post(t *testing.T, u, key, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s %s: %s, want 202", u, body, resp.Status)
	}
}

func get(u string) int {
	resp, err := http.Get(u)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func getJSON(u string, v any) bool {
	resp, err := http.Get(u)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}

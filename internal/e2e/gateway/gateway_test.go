package gatewaye2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// writeKeys writes a keys file holding name and the SHA-256 of secret.
func writeKeys(t testing.TB, path, name, secret string) {
	t.Helper()
	h := sha256.Sum256([]byte(secret))
	if err := os.WriteFile(path, []byte("# test keys\n"+name+" "+hex.EncodeToString(h[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func post(t *testing.T, url, secret, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("POST %s: %d, body not JSON: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, v
}

func report(user, request string, steps int, ts time.Time) string {
	return fmt.Sprintf(`{"request_id":%q,"user_id":%q,"steps":%d,"ts":%q,"tz":"UTC"}`, request, user, steps, ts.Format(time.RFC3339Nano))
}

// pipeline is one test's pipeline (e2e.Run): `rankstream gateway` and, with process,
// `rankstream process`, each with every default but the keys file ("app" with secret
// "secret-1") and, when given, the boards file.
type pipeline struct {
	*e2e.Run
	gw   *testenv.Process
	keys string
	base string
}

func startPipeline(t testing.TB, brokers []string, boards string, process bool) *pipeline {
	t.Helper()
	p := &pipeline{Run: e2e.NewRun(t, brokers, "gwe2e")}
	var common []string
	if boards != "" {
		common = []string{"--boards", boards}
	}
	if process {
		p.Start("process", common...)
	}
	p.keys = filepath.Join(t.TempDir(), "keys")
	writeKeys(t, p.keys, "app", "secret-1")
	p.gw, p.base = p.Gateway(p.keys, common...)
	return p
}

// records counts the records of stream.
func (p *pipeline) records(stream goka.Stream) int64 { return p.Count(p.Topic(stream)) }

// checkCounts waits until group committed n records of stream, then checks that stream holds
// exactly n and the dead-letter topic none: nothing refused reached Kafka.
func (p *pipeline) checkCounts(group goka.Group, stream goka.Stream, n int) {
	p.T.Helper()
	input, g := string(p.Kafka.Names.Stream(stream)), string(p.Kafka.Names.Group(group))
	testenv.WaitCommitted(p.T, p.Admin.Admin(), g, input, int64(n), time.Minute)
	if got := p.records(stream); got != int64(n) {
		p.T.Errorf("%s holds %d records, want %d", input, got, n)
	}
	if got := p.records(topics.DLQ); got != 0 {
		p.T.Errorf("%d dead letters, want none", got)
	}
	if c := testenv.Committed(p.Admin.Admin(), g, input); c != int64(n) {
		p.T.Errorf("group %s committed %d records, want the %d accepted", g, c, n)
	}
}

// TestGatewayToBoards runs `rankstream gateway` (every default but the keys file) and
// `rankstream process`: refused requests (401, 400, 413, 429) leave nothing anywhere (the
// input topic holds exactly the accepted reports, the dead-letter topic nothing, the group
// commits exactly the accepted ones), accepted reports reach the steps board in Redis, a
// request id sent again with another count counts once, and after the keys file is rewritten
// and the gateway gets SIGHUP, the new key is accepted and the old one refused.
func TestGatewayToBoards(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		p := startPipeline(t, brokers, "", true)
		ctx, rdb, base, gw := context.Background(), p.Redis, p.base, p.gw

		now := time.Now().UTC()
		day := now.Format("20060102")
		stepsURL := base + "/v1/steps"
		refused := []struct {
			secret, body string
			code         int
		}{
			{"secret-2", report("x", "rx", 1, now), 401},
			{"secret-1", report("x", "rx", -1, now), 400},
			{"secret-1", "[" + report("x", "rx", 1, now) + "," + report("y", "ry", 1, now.Add(time.Hour)) + "]", 400},
			{"secret-1", report("x", "rx", 1, now)[:40] + `,"pad":"` + strings.Repeat("p", gateway.DefaultMaxBody) + `"}`, 413},
		}
		for _, r := range refused {
			if code, v := post(t, stepsURL, r.secret, r.body); code != r.code {
				t.Fatalf("%.60s: %d %v, want %d", r.body, code, v, r.code)
			}
		}
		want := map[string]int{} // user -> steps on the board
		accepted := 0
		accept := func(body string) {
			t.Helper()
			if code, v := post(t, stepsURL, "secret-1", body); code != http.StatusAccepted {
				t.Fatalf("%.60s: %d %v, want 202", body, code, v)
			}
			accepted += strings.Count(body, `"request_id"`)
		}
		// A request id counts once, by its first report, even with another count.
		accept(report("dup", "r1", 100, now))
		accept(report("dup", "r1", 900, now.Add(time.Second)))
		accept(report("dup", "r2", 300, now.Add(2*time.Second)))
		want["dup"] = 300
		// An array of 50 users.
		var many []string
		for i := range 50 {
			u := "u" + strconv.Itoa(i)
			many = append(many, report(u, "r", 1000+7*i, now))
			want[u] = 1000 + 7*i
		}
		accept("[" + strings.Join(many, ",") + "]")
		// One user writes until refused: its burst, and what its rate added meanwhile, is
		// accepted, then 429.
		start := time.Now()
		for i := 0; ; i++ {
			body := report("busy", "b"+strconv.Itoa(i), 5000+i, now)
			code, v := post(t, stepsURL, "secret-1", body)
			if code == http.StatusTooManyRequests {
				if most := gateway.DefaultUserBurst + int(time.Since(start).Seconds()*gateway.DefaultUserRate) + 1; i < gateway.DefaultUserBurst || i > most {
					t.Fatalf("refused after %d requests in %s, want from the burst %d to %d", i, time.Since(start), gateway.DefaultUserBurst, most)
				}
				break
			}
			if code != http.StatusAccepted {
				t.Fatalf("request %d of one user: %d %v", i, code, v)
			}
			accepted++
			want["busy"] = 5000 + i
		}

		// The board: every accepted user with its steps, in order. The board holds every user
		// once a flush wrote the busy user's first report, before its last ones are written:
		// wait for every user's last count, and report the keys that never got it.
		wrong := func() []string {
			var w []string
			for u, s := range want {
				if got, err := rdb.Get(ctx, "step:"+day+":"+u).Result(); err != nil || got != strconv.Itoa(s) {
					w = append(w, fmt.Sprintf("step:%s:%s = %q (%v), want %d", day, u, got, err, s))
				}
			}
			return w
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			n, err := rdb.ZCard(ctx, "rank:steps:global:"+day).Result()
			w := wrong()
			if err == nil && n == int64(len(want)) && len(w) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a minute, %d of %d users on the board (%v); %s", n, len(want), err, strings.Join(w, "; "))
			}
		}
		board, err := rdb.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: "rank:steps:global:" + day, Start: 0, Stop: -1, Rev: true}).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(board); i++ {
			if want[board[i-1]] < want[board[i]] {
				t.Fatalf("board order: %s (%d) above %s (%d)", board[i-1], want[board[i-1]], board[i], want[board[i]])
			}
		}

		// Nothing refused reached Kafka: the input holds the accepted reports, the group
		// committed exactly those, the dead-letter topic is empty.
		p.checkCounts(steps.Group, topics.StepsReported, accepted)

		// SIGHUP reloads the keys.
		writeKeys(t, p.keys, "app2", "secret-2")
		gw.Signal(syscall.SIGHUP)
		testenv.WaitFor(t, 30*time.Second, "the new key accepted after SIGHUP", func() bool {
			code, _ := post(t, stepsURL, "secret-2", report("new", "n1", 1, time.Now()))
			return code == http.StatusAccepted
		})
		if code, _ := post(t, stepsURL, "secret-1", report("old", "o1", 1, time.Now())); code != http.StatusUnauthorized {
			t.Errorf("the old key after the reload: %d, want 401", code)
		}
		if err := gw.Exited(); err != nil {
			t.Fatalf("gateway: %v", err)
		}
	})
}

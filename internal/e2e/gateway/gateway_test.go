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

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/rankstream/rankstream/internal/gateway"
	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// writeKeys writes a keys file holding name and the SHA-256 of secret.
func writeKeys(t *testing.T, path, name, secret string) {
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

// TestGatewayToBoards runs `rankstream gateway` (every default but the keys file) and
// `rankstream process`: refused requests (401, 400, 413, 429) leave nothing anywhere (the
// input topic holds exactly the accepted reports, the dead-letter topic nothing, the group
// commits exactly the accepted ones), accepted reports reach the steps board in Redis, a
// request id sent again with another count counts once, and after the keys file is rewritten
// and the gateway gets SIGHUP, the new key is accepted and the old one refused.
func TestGatewayToBoards(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		prefix := testenv.UniqueName(t, "gwe2e") + "."
		kc := kafka.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: prefix}}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kcl, err := kafka.NewClient(kc)
		if err != nil {
			t.Fatal(err)
		}
		defer kcl.Close()
		if _, err := kcl.EnsureTopics(ctx, true); err != nil {
			t.Fatal(err)
		}
		redisAddr, db := testenv.RedisAddr(t)
		rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr, DB: db})
		t.Cleanup(func() { rdb.Close() })
		bin := testenv.Rankstream(t)
		common := []string{"--brokers", strings.Join(brokers, ","), "--topic-prefix", prefix, "--log-level", "warn"}
		testenv.StartProcess(t, "process", bin, append([]string{"process", "--redis", fmt.Sprintf("redis://%s/%d", redisAddr, db),
			"--partitions", "8", "--http", "127.0.0.1:0"}, common...)...)
		keys := filepath.Join(t.TempDir(), "keys")
		writeKeys(t, keys, "app", "secret-1")
		addr := testenv.FreeAddr(t)
		gw := testenv.StartProcess(t, "gateway", bin, append([]string{"gateway", "--api-keys", keys, "--http", addr}, common...)...)
		base := "http://" + addr
		testenv.WaitFor(t, time.Minute, "the gateway ready", func() bool {
			if err := gw.Exited(); err != nil {
				t.Fatalf("gateway %v\n%s", err, gw.Output())
			}
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})

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

		// The board: every accepted user with its steps, in order.
		testenv.WaitFor(t, time.Minute, "the accepted reports on the board", func() bool {
			n, err := rdb.ZCard(ctx, "rank:steps:global:"+day).Result()
			return err == nil && n == int64(len(want))
		})
		for u, s := range want {
			if got, err := rdb.Get(ctx, "step:"+day+":"+u).Result(); err != nil || got != strconv.Itoa(s) {
				t.Errorf("step:%s:%s = %q (%v), want %d", day, u, got, err, s)
			}
		}
		board, err := rdb.ZRevRange(ctx, "rank:steps:global:"+day, 0, -1).Result()
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
		adm := testenv.KafkaAdmin(t, brokers)
		input := string(kc.Names.Stream(topics.StepsReported))
		group := string(kc.Names.Group(steps.Group))
		testenv.WaitCommitted(t, adm, group, input, int64(accepted), time.Minute)
		for topic, n := range map[string]int{input: accepted, string(kc.Names.Stream(topics.DLQ)): 0} {
			ends, err := adm.ListEndOffsets(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			var end int64
			ends.Each(func(o kadm.ListedOffset) { end += o.Offset })
			if end != int64(n) {
				t.Errorf("%s holds %d records, want %d", topic, end, n)
			}
		}
		if c := testenv.Committed(adm, group, input); c != int64(accepted) {
			t.Errorf("group committed %d records, want the %d accepted", c, accepted)
		}

		// SIGHUP reloads the keys.
		writeKeys(t, keys, "app2", "secret-2")
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

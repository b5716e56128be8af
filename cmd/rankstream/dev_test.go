package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/internal/testenv"
)

// runDevInProcess starts `rankstream dev` with args and returns the query API's base URL, the
// API key it printed and a function that stops it and returns its exit status.
func runDevInProcess(t *testing.T, args ...string) (string, string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- dispatch(ctx, append([]string{"dev"}, args...), strings.NewReader(""), w, io.Discard)
		w.Close()
	}()
	urls, keys := make(chan string, 1), make(chan string, 1)
	go func() {
		url := regexp.MustCompile(`query API:\s+(http://[^/]+)`)
		key := regexp.MustCompile(`Authorization: Bearer (\S+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := url.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
			if m := key.FindStringSubmatch(sc.Text()); m != nil {
				keys <- m[1]
			}
		}
	}()
	var base, key string
	select {
	case base = <-urls:
		key = <-keys // printed after the URL
	case c := <-code:
		t.Fatalf("rankstream dev exited with %d before serving", c)
	case <-time.After(time.Minute):
		t.Fatal("rankstream dev did not print its URL within a minute")
	}
	stopped := false
	stop := func() int {
		if stopped {
			return 0
		}
		stopped = true
		cancel()
		select {
		case c := <-code:
			return c
		case <-time.After(time.Minute):
			t.Fatal("rankstream dev did not stop within a minute")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	return base, key, stop
}

// postReport posts a step report of user to the dev server's gateway route with key.
func postReport(t *testing.T, base, key, user string) int {
	t.Helper()
	return post(t, base+"/v1/steps", key, fmt.Sprintf(`{"request_id":"r1","user_id":%q,"steps":123456,"ts":%d,"tz":"UTC"}`, user, time.Now().UnixMilli()))
}

func post(t *testing.T, url, key, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

type page struct {
	Total int64 `json:"total"`
	Items []struct {
		Rank   int64  `json:"rank"`
		Member string `json:"member"`
		Score  int64  `json:"score"`
	} `json:"items"`
}

func boardTotal(t *testing.T, base string) int64 {
	t.Helper()
	code, body := testenv.Get(t, base+"/v1/boards/steps?limit=5")
	var p page
	if err := json.Unmarshal(body, &p); code != http.StatusOK || err != nil {
		t.Fatalf("GET the steps board: %d %s", code, body)
	}
	return p.Total
}

// TestDevServesALiveBoard: `rankstream dev` on its embedded defaults (kfake, miniredis) with
// demo traffic answers with a growing daily board and growing demo score boards, and a report
// and a score update posted to its gateway routes with the random key it printed land on them; after a restart on
// the same data folder the board comes back (the embedded Redis is empty, so the group replays
// its input), and the gateway accepts the key given by --api-key, no longer the random one.
func TestDevServesALiveBoard(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--http", "127.0.0.1:0", "--demo-rate", "500", "--demo-users", "300", "--log-level", "warn"}
	base, key, stop := runDevInProcess(t, args...)
	if c := postReport(t, base, key, "via-gateway"); c != http.StatusAccepted {
		t.Fatalf("a report posted with the printed key: %d, want 202", c)
	}
	if c := post(t, base+"/v1/scores", key, `{"request_id":"s1","board":"arena","operations":[{"member":"via-gateway","op":"incr","score":5}]}`); c != http.StatusAccepted {
		t.Fatalf("a score update posted with the printed key: %d, want 202", c)
	}
	for _, path := range []string{"/v1/boards/steps/members/via-gateway", "/v1/boards/arena/members/via-gateway?period=total"} {
		testenv.WaitFor(t, time.Minute, "the posted report on "+path, func() bool {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	deadline := time.Now().Add(time.Minute)
	for boardTotal(t, base) < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("board has %d members after a minute of demo traffic", boardTotal(t, base))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The demo score boards fill too (arena by incr, highscore by set), through the generic
	// endpoint.
	for _, path := range []string{"/v1/boards/arena?period=total&limit=5", "/v1/boards/highscore?period=d&limit=5"} {
		testenv.WaitFor(t, time.Minute, path+" to list members", func() bool {
			code, body := testenv.Get(t, base+path)
			var p page
			if code != http.StatusOK || json.Unmarshal(body, &p) != nil {
				t.Fatalf("GET %s: %d %s", path, code, body)
			}
			return p.Total >= 20 && len(p.Items) == 5 && p.Items[0].Rank == 1
		})
	}
	friendsOfU0(t, base)
	// Ready once Redis answers and every processor unit runs (a unit may still be in a
	// rebalance when the board first fills).
	testenv.WaitFor(t, 30*time.Second, "/readyz to answer 200", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	before := boardTotal(t, base)
	if c := stop(); c != 0 {
		t.Fatalf("exit status %d", c)
	}

	base, _, _ = runDevInProcess(t, append(args, "--demo=false", "--api-key", "given")...)
	if c := postReport(t, base, key, "u"); c != http.StatusUnauthorized {
		t.Errorf("the previous random key: %d, want 401", c)
	}
	if c := postReport(t, base, "given", "via-gateway"); c != http.StatusAccepted {
		t.Errorf("the key of --api-key: %d, want 202", c)
	}
	deadline = time.Now().Add(time.Minute)
	for boardTotal(t, base) < before {
		if time.Now().After(deadline) {
			t.Fatalf("after a restart the board has %d members, had %d", boardTotal(t, base), before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	friendsOfU0(t, base) // friends:{u0} comes back too (the friends group replays its input)
}

// friendsOfU0 waits for the demo user u0's friends board to hold u0 and its 10 demo friends.
func friendsOfU0(t *testing.T, base string) {
	t.Helper()
	testenv.WaitFor(t, time.Minute, "u0's friends board to hold 11 users", func() bool {
		code, body := testenv.Get(t, base+"/v1/friends/u0/steps?limit=1")
		var fb struct {
			Total int `json:"total"`
			Me    struct {
				Member string `json:"member"`
			} `json:"me"`
		}
		if code != http.StatusOK || json.Unmarshal(body, &fb) != nil {
			t.Fatalf("GET friends of u0: %d %s", code, body)
		}
		return fb.Total == 2*5+1 && fb.Me.Member == "u0"
	})
}

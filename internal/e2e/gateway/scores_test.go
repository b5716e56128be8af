package gatewaye2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

func scoreUpdate(request, boardName string, ops ...string) string {
	return fmt.Sprintf(`{"request_id":%q,"board":%q,"operations":[%s]}`, request, boardName, strings.Join(ops, ","))
}

func scoreOp(member, op string, score int) string {
	return fmt.Sprintf(`{"member":%q,"op":%q,"score":%d}`, member, op, score)
}

// TestGatewayScoresToBoards runs `rankstream gateway --boards` (every other default but the
// keys file) and `rankstream process --boards`: refused score updates (401, 400, 413, 429)
// leave nothing anywhere (scores.updated holds exactly the accepted operations, the
// dead-letter topic nothing, the group commits exactly those), and the accepted ones reach the
// board in Redis through the scores processor, exactly: a request sent twice, and once more
// with another value, counts once; a delete removes its member.
func TestGatewayScoresToBoards(t *testing.T) {
	boards := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(boards, []byte("boards:\n  - name: arena\n    periods: [d, total]\n    tz: UTC\n    retention: 2d\n    shards: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		p := startPipeline(t, brokers, boards, true)
		url := p.base + "/v1/scores"
		ops := make([]string, gateway.MaxElements+1)
		for i := range ops {
			ops[i] = scoreOp("x"+strconv.Itoa(i), "set", 1)
		}
		refused := []struct {
			secret, body string
			code         int
		}{
			{"secret-2", scoreUpdate("r", "arena", scoreOp("x", "set", 1)), 401},
			{"secret-1", scoreUpdate("r", "nope", scoreOp("x", "set", 1)), 400},
			{"secret-1", scoreUpdate("r", "arena", scoreOp("x", "set", 1), scoreOp("y", "triple", 1)), 400},
			{"secret-1", scoreUpdate("r", "arena", ops...), 413},
		}
		for _, r := range refused {
			if code, v := post(t, url, r.secret, r.body); code != r.code {
				t.Fatalf("%.60s: %d %v, want %d", r.body, code, v, r.code)
			}
		}
		want := map[string]int64{} // member -> score on the board
		accepted := 0              // operations
		accept := func(body string) {
			t.Helper()
			if code, v := post(t, url, "secret-1", body); code != http.StatusAccepted {
				t.Fatalf("%.60s: %d %v, want 202", body, code, v)
			}
			accepted += strings.Count(body, `"member"`)
		}
		// A request counts once, even sent again with another value.
		accept(scoreUpdate("d1", "arena", scoreOp("dup", "incr", 5)))
		accept(scoreUpdate("d1", "arena", scoreOp("dup", "incr", 5)))
		accept(scoreUpdate("d1", "arena", scoreOp("dup", "incr", 100)))
		want["dup"] = 5
		// 50 members in one request; one of them deleted by the next.
		var many []string
		for i := range 50 {
			m := "m" + strconv.Itoa(i)
			many = append(many, scoreOp(m, "set", 1000+7*i))
			want[m] = int64(1000 + 7*i)
		}
		accept(scoreUpdate("many", "arena", many...))
		accept(scoreUpdate("del", "arena", `{"member":"m0","op":"delete"}`))
		delete(want, "m0")
		// One member is updated until refused: its burst, and what its rate added meanwhile.
		start := time.Now()
		for i := 0; ; i++ {
			code, v := post(t, url, "secret-1", scoreUpdate("b"+strconv.Itoa(i), "arena", scoreOp("busy", "incr", 1)))
			if code == http.StatusTooManyRequests {
				if most := gateway.DefaultUserBurst + int(time.Since(start).Seconds()*gateway.DefaultUserRate) + 1; i < gateway.DefaultUserBurst || i > most {
					t.Fatalf("refused after %d requests in %s, want from the burst %d to %d", i, time.Since(start), gateway.DefaultUserBurst, most)
				}
				break
			}
			if code != http.StatusAccepted {
				t.Fatalf("request %d of one member: %d %v", i, code, v)
			}
			accepted++
			want["busy"]++
		}

		p.checkCounts(scores.Group, topics.ScoresUpdated, accepted)
		// Committed means Redis acknowledged: the board is final.
		total, rows, err := rsredis.NewReader(p.Redis).BoardPage(context.Background(),
			rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Shards: 2}, 0, rsredis.MaxBoardLimit)
		if err != nil {
			t.Fatal(err)
		}
		if total != int64(len(want)) || len(rows) != len(want) {
			t.Fatalf("board of %d members (%d read), want %d: %v", total, len(rows), len(want), rows)
		}
		for i, r := range rows {
			if r.Score != want[r.Member] || r.Rank != int64(i+1) || i > 0 && rows[i-1].Score < r.Score {
				t.Errorf("rank %d: %s with %d, want score %d in order", r.Rank, r.Member, r.Score, want[r.Member])
			}
		}
	})
}

//go:build peers

package peers

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/processors/steps"
)

// TestStepsPeerMergesLikeSteps is the differential test of the Kafka Streams peer's merge:
// random report sequences of 2,000 users (few request ids, steps and times, so that duplicates
// and ties abound; regions whose order differs between UTF-8 and UTF-16; more than 16 regions
// and more than 1,024 request ids in a day; days pruned) go through steps.State.Apply and
// through the peer's State.apply, each kept as its processor keeps it (decoded before each
// report, written back when changed), and after every report both must give the same outcome
// and the same stored state (the peer writes version 2 of our encoding: it names no claim a
// day was handed in, DayState.HandedIn, which Apply leaves 0; our decoder reads both). It
// needs the peer's jar (`make bench-peers` builds it) and fails without it; the tests build
// only with -tags peers.
func TestStepsPeerMergesLikeSteps(t *testing.T) {
	jar := peerJar(t, stepsProject)
	rng := rand.New(rand.NewPCG(3, 5))
	regions := []string{"", "", "", "eu-west", "us-east", "cn-east", "é", "z", "Z", "\U0001D538", "\uFF21"}
	for i := range 14 {
		regions = append(regions, "r"+strconv.Itoa(i))
	}
	days := []int{20261128, 20261129, 20261130, 20261201}
	type report struct {
		oldest int
		r      steps.Report
	}
	var users [][]report
	for u := range 2_000 {
		n := 1 + rng.IntN(60)
		if u%200 == 0 {
			n = 1_500 // past MaxRequestsPerDay
		}
		ids := 1 + rng.IntN(2*n)
		var seq []report
		for k := range n {
			oldest := 20261120
			if rng.IntN(20) == 0 {
				oldest = days[1+rng.IntN(3)]
			}
			r := steps.Report{
				RequestHash: rng.Uint64N(uint64(ids)) * 0x9E3779B97F4A7C15,
				Day:         board.Day(days[rng.IntN(len(days))]),
				Steps:       rng.Int64N(50),
				TSMs:        1796040000000 + rng.Int64N(8)*1000,
				Region:      regions[rng.IntN(len(regions))],
			}
			if n > 1_000 { // one day: more than 1,024 request ids, and a user who keeps moving
				oldest, r.Day, r.Steps = 20261120, 20261130, int64(k)
			}
			seq = append(seq, report{oldest, r})
		}
		users = append(users, seq)
	}

	var stdin bytes.Buffer
	type result struct {
		line  string // outcome, changed
		state steps.State
	}
	var want []result
	for _, seq := range users {
		stdin.WriteString("reset\n")
		var stored []byte
		for _, in := range seq {
			r := in.r
			fmt.Fprintf(&stdin, "%d\t%d\t%d\t%d\t%d\t%s\n", in.oldest, r.RequestHash, r.Day, r.Steps, r.TSMs,
				base64.StdEncoding.EncodeToString([]byte(r.Region)))
			var s steps.State
			if stored != nil {
				if err := s.UnmarshalBinary(stored); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.Apply(r, board.Day(in.oldest))
			outcome, changed := res.Outcome.String(), res.Changed
			switch {
			case errors.Is(err, steps.ErrTooManyRegions):
				outcome, changed = "too-many-regions", false
			case err != nil:
				t.Fatal(err)
			}
			if changed {
				if stored, err = s.MarshalBinary(); err != nil {
					t.Fatal(err)
				}
			}
			w := result{line: fmt.Sprintf("%s\t%v", outcome, changed)}
			if stored != nil {
				if err := w.state.UnmarshalBinary(stored); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, w)
		}
	}

	cmd := exec.Command("java", "-cp", jar, "io.rankstream.peers.steps.MergeCheck")
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("MergeCheck: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	bad, outcomes := 0, map[string]int{}
	for i, w := range want {
		if !sc.Scan() {
			t.Fatalf("MergeCheck answered %d of %d reports", i, len(want))
		}
		outcomes[w.line[:strings.IndexByte(w.line, '\t')]]++
		got := sc.Text()
		line, encoded := got, ""
		if j := strings.LastIndexByte(got, '\t'); j >= 0 {
			line, encoded = got[:j], got[j+1:]
		}
		var state steps.State
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err == nil && len(raw) > 0 {
			err = state.UnmarshalBinary(raw)
		}
		if line != w.line || err != nil || !reflect.DeepEqual(state, w.state) {
			if bad++; bad <= 10 {
				t.Errorf("report %d:\n ours: %s %+v\n peer: %.200s (%v)", i, w.line, w.state, got, err)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d reports merged differently", bad, len(want))
	}
	t.Logf("%d reports of %d users: %v", len(want), len(users), outcomes)
}

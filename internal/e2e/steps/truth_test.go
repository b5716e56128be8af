package stepse2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/rankstream/rankstream/internal/e2e"
)

// This file generates step reports and computes what the pipeline must produce from them,
// with its own code: nothing here calls the production merge, day or key functions.

type dayValue struct {
	steps   int64
	reached int64 // epoch ms
	region  string
}

// truth is the expected serving state: per "yyyymmdd/user" the merged value.
type truth map[string]*dayValue

// zone returns the named time zone, loaded once: time.LoadLocation reads and parses its file
// on every call, which for every user or record of a run took longer than the run it feeds.
func zone(name string) *time.Location {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	zones.Store(name, loc)
	return loc
}

var zones sync.Map // zone name → *time.Location

var testZones = []string{"Asia/Shanghai", "Pacific/Kiritimati", "Pacific/Pago_Pago", "America/New_York", "Europe/Berlin", "Asia/Kolkata"}
var testRegions = []string{"north", "south", "east", "west"}

type testUser struct {
	id     string
	zone   *time.Location
	region string
}

type sent struct {
	user   *testUser
	reqID  string
	steps  int64
	ts     time.Time
	record e2e.Record
}

// generate makes n reports of users across the last three local days of each user (all
// before now): ~80% fresh readings, ~10% exact duplicates of earlier ones (same request id),
// ~10% stale readings (smaller and older than one already sent, new request id).
func generate(seed uint64, n, users int, now time.Time) ([]e2e.Record, truth) {
	rng := rand.New(rand.NewPCG(seed, 42))
	us := make([]testUser, users)
	for i := range us {
		us[i] = testUser{id: fmt.Sprintf("user-%05d", i), zone: zone(testZones[i%len(testZones)]), region: testRegions[rng.IntN(len(testRegions))]}
	}
	out := make([]e2e.Record, 0, n)
	history := make([]sent, 0, n)
	for len(out) < n {
		p := rng.Float64()
		switch {
		case p < 0.1 && len(history) > 0:
			out = append(out, history[rng.IntN(len(history))].record)
			continue
		case p < 0.2 && len(history) > 0:
			h := history[rng.IntN(len(history))]
			if h.steps == 0 {
				continue
			}
			ts := h.ts.Add(-time.Duration(rng.Int64N(int64(time.Hour))))
			if e2e.DayOf(ts, h.user.zone) != e2e.DayOf(h.ts, h.user.zone) {
				continue
			}
			s := makeReport(h.user, fmt.Sprintf("stale-%d", len(out)), rng.Int64N(h.steps), ts)
			history = append(history, s)
			out = append(out, s.record)
		default:
			u := &us[rng.IntN(len(us))]
			ts := randomInstantOfLocalDay(rng, u.zone, now, rng.IntN(3))
			s := makeReport(u, fmt.Sprintf("fresh-%d", len(out)), rng.Int64N(30_000), ts)
			history = append(history, s)
			out = append(out, s.record)
		}
	}
	want := truth{}
	seen := map[string]bool{}
	for _, h := range history {
		if seen[h.reqID] {
			continue
		}
		seen[h.reqID] = true
		k := e2e.DayOf(h.ts, h.user.zone) + "/" + h.user.id
		v, ok := want[k]
		ms := h.ts.UnixMilli()
		switch {
		case !ok:
			want[k] = &dayValue{h.steps, ms, h.user.region}
		case h.steps > v.steps || h.steps == v.steps && ms < v.reached:
			v.steps, v.reached = h.steps, ms
		}
	}
	return out, want
}

// randomInstantOfLocalDay picks an instant of the local day `back` days before now's local
// day, not after now and not before now minus three days.
func randomInstantOfLocalDay(rng *rand.Rand, loc *time.Location, now time.Time, back int) time.Time {
	l := now.In(loc)
	start := time.Date(l.Year(), l.Month(), l.Day()-back, 0, 0, 0, 0, loc)
	end := time.Date(l.Year(), l.Month(), l.Day()-back+1, 0, 0, 0, 0, loc)
	if last := now.Add(-time.Second); last.Before(end) {
		end = last
	}
	if !start.Before(end) {
		return end
	}
	return start.Add(time.Duration(rng.Int64N(int64(end.Sub(start)))))
}

// stepReport is a step report as producers write it.
type stepReport struct {
	RequestID string `json:"request_id"`
	UserID    string `json:"user_id"`
	DeviceID  string `json:"device_id"`
	Steps     int64  `json:"steps"`
	TS        string `json:"ts"`
	TZ        string `json:"tz"`
	Region    string `json:"region"`
}

func makeReport(u *testUser, reqID string, steps int64, ts time.Time) sent {
	// A struct, not a map: json.Marshal of a map sorts its keys through reflection, which made
	// generating the 200k-report runs take longer than the runs under -race.
	v, err := json.Marshal(stepReport{
		RequestID: reqID, UserID: u.id, DeviceID: "dev-" + u.id, Steps: steps,
		TS: ts.Format(time.RFC3339Nano), TZ: u.zone.String(), Region: u.region,
	})
	if err != nil {
		panic(err)
	}
	return sent{user: u, reqID: reqID, steps: steps, ts: ts, record: e2e.Record{Key: u.id, Value: v}}
}

type boardRow struct {
	user string
	v    *dayValue
}

// boards returns the expected member order of every board: "global/yyyymmdd" and
// "region/name/yyyymmdd". Higher steps first, then earlier reach; members with equal steps
// and reach time share a Redis score, and Redis lists equal scores in reverse lexicographic
// order of the member in ZREVRANGE.
func (w truth) boards() map[string][]string {
	rows := map[string][]boardRow{}
	for k, v := range w {
		day, user := k[:8], k[9:]
		rows["global/"+day] = append(rows["global/"+day], boardRow{user, v})
		rk := "region/" + v.region + "/" + day
		rows[rk] = append(rows[rk], boardRow{user, v})
	}
	out := map[string][]string{}
	for b, rs := range rows {
		slices.SortFunc(rs, func(a, b boardRow) int {
			return cmp.Or(cmp.Compare(b.v.steps, a.v.steps), cmp.Compare(a.v.reached, b.v.reached), cmp.Compare(b.user, a.user))
		})
		for _, r := range rs {
			out[b] = append(out[b], r.user)
		}
	}
	return out
}

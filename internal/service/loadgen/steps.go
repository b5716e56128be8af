// Package loadgen generates realistic traffic for demos, load tests and benchmarks, and
// produces it into Kafka at a chosen rate with progress reports.
//
// It imports topics, board and franz-go; never processors or sinks.
package loadgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// Record is one generated Kafka record.
type Record struct {
	Key   string
	Value []byte
	// Time is the record's Kafka timestamp: the simulated wall clock.
	Time time.Time
}

// StepsConfig shapes a step-report stream. Zero fields take the defaults in brackets.
type StepsConfig struct {
	Users   int      // distinct users [20,000]
	Zones   []string // IANA zones users live in [DefaultZones]
	Regions []string // regions users belong to [DefaultRegions]
	// DupRatio of reports re-send an earlier report unchanged (same request id) [0].
	DupRatio float64
	// StaleRatio of reports are late: an earlier, smaller reading with a new request id [0].
	StaleRatio float64
	// MidnightSurge: when a zone passes local midnight, every user there sends the final count
	// of the day that ended and a first report of the new one, at once.
	MidnightSurge bool
	Seed          uint64
}

// DefaultZones spread users over UTC-11 to UTC+14, with and without daylight saving time.
var DefaultZones = []string{
	"Asia/Shanghai", "Asia/Tokyo", "Asia/Kolkata", "Europe/Berlin", "Europe/London",
	"America/New_York", "America/Los_Angeles", "Australia/Sydney", "Pacific/Kiritimati",
	"Pacific/Pago_Pago",
}

// DefaultRegions are the regions users belong to.
var DefaultRegions = []string{"cn-east", "cn-north", "eu-west", "us-east", "ap-south"}

type user struct {
	id     string
	zone   *time.Location
	region string
	goal   int64 // steps by the end of the day
}

// Steps generates step reports.
type Steps struct {
	cfg    StepsConfig
	rng    *rand.Rand
	users  []user
	zones  []*time.Location
	byZone [][]int // user indexes per zone
	days   []board.Day
	recent []Record // ring of recent reports, for duplicates
	seq    uint64
}

// NewSteps returns a generator.
func NewSteps(cfg StepsConfig) (*Steps, error) {
	if cfg.Users <= 0 {
		cfg.Users = 20_000
	}
	if len(cfg.Zones) == 0 {
		cfg.Zones = DefaultZones
	}
	if len(cfg.Regions) == 0 {
		cfg.Regions = DefaultRegions
	}
	if cfg.DupRatio < 0 || cfg.StaleRatio < 0 || cfg.DupRatio+cfg.StaleRatio > 1 {
		return nil, fmt.Errorf("loadgen: duplicate ratio %v and stale ratio %v must be >= 0 and sum to at most 1", cfg.DupRatio, cfg.StaleRatio)
	}
	g := &Steps{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), byZone: make([][]int, len(cfg.Zones)), days: make([]board.Day, len(cfg.Zones))}
	for _, z := range cfg.Zones {
		loc, err := topics.LoadZone(z)
		if err != nil {
			return nil, fmt.Errorf("loadgen: %w", err)
		}
		g.zones = append(g.zones, loc)
	}
	for i := range cfg.Users {
		z := g.rng.IntN(len(g.zones))
		g.users = append(g.users, user{
			id:     "u" + strconv.Itoa(i),
			zone:   g.zones[z],
			region: cfg.Regions[g.rng.IntN(len(cfg.Regions))],
			goal:   2_000 + g.rng.Int64N(28_000),
		})
		g.byZone[z] = append(g.byZone[z], i)
	}
	return g, nil
}

// stepsAt is a user's count at a local time of day: nothing before 06:00, the whole goal by
// 22:00, linear between. It only grows during a day, like a pedometer.
func (u *user) stepsAt(t time.Time) int64 {
	l := t.In(u.zone)
	secs := l.Hour()*3600 + l.Minute()*60 + l.Second()
	frac := min(max(float64(secs-6*3600)/(16*3600), 0), 1)
	return int64(frac * float64(u.goal))
}

func (g *Steps) report(u *user, ts time.Time, now time.Time) Record {
	g.seq++
	r := topics.StepReport{
		RequestID: "r" + strconv.FormatUint(g.cfg.Seed, 36) + "-" + strconv.FormatUint(g.seq, 36),
		UserID:    u.id,
		DeviceID:  "d-" + u.id,
		Steps:     u.stepsAt(ts),
		TS:        topics.Timestamp{Time: ts},
		TZ:        u.zone.String(),
		Region:    u.region,
	}
	v, err := json.Marshal(r)
	if err != nil {
		panic("BUG: marshal step report: " + err.Error())
	}
	return Record{Key: u.id, Value: v, Time: now}
}

// Next returns the reports sent at simulated time now: usually one, a burst when a zone
// passes midnight with MidnightSurge on.
func (g *Steps) Next(now time.Time) []Record {
	out := g.surge(now)
	var rec Record
	switch p := g.rng.Float64(); {
	case p < g.cfg.DupRatio && len(g.recent) > 0:
		rec = g.recent[g.rng.IntN(len(g.recent))]
		rec.Time = now
	case p < g.cfg.DupRatio+g.cfg.StaleRatio:
		u := &g.users[g.rng.IntN(len(g.users))]
		rec = g.report(u, now.Add(-time.Duration(g.rng.Int64N(int64(2*time.Hour)))), now)
	default:
		u := &g.users[g.rng.IntN(len(g.users))]
		rec = g.report(u, now, now)
	}
	g.remember(rec)
	return append(out, rec)
}

func (g *Steps) remember(r Record) {
	if len(g.recent) < 1024 {
		g.recent = append(g.recent, r)
		return
	}
	g.recent[g.rng.IntN(len(g.recent))] = r
}

func (g *Steps) surge(now time.Time) []Record {
	if !g.cfg.MidnightSurge {
		return nil
	}
	var out []Record
	for z, loc := range g.zones {
		d := board.DayOf(now, loc)
		if g.days[z] != 0 && d != g.days[z] {
			y, m, dd := now.In(loc).Date()
			midnight := time.Date(y, m, dd, 0, 0, 0, 0, loc)
			for _, i := range g.byZone[z] {
				u := &g.users[i]
				out = append(out,
					g.report(u, midnight.Add(-time.Second), now),
					g.report(u, midnight.Add(time.Duration(g.rng.Int64N(int64(time.Minute)))), now))
			}
		}
		g.days[z] = d
	}
	return out
}

// BenchSteps returns the first n reports of the steps benchmarks' stream (BenchmarkSliceThroughput,
// its Kafka Streams peer, the callback's and the score boards' benchmarks), sent at now: 200k
// users, 10% duplicates, 10% stale readings.
func BenchSteps(n int, now time.Time) []Record {
	gen, err := NewSteps(StepsConfig{Users: 200_000, DupRatio: 0.1, StaleRatio: 0.1, Seed: 7})
	if err != nil {
		panic("BUG: the benchmark's step stream: " + err.Error())
	}
	out := make([]Record, 0, n+1)
	for len(out) < n {
		out = append(out, gen.Next(now)...)
	}
	return out[:n]
}

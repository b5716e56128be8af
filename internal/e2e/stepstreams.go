package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Record is one record to produce: its key and value, and its Kafka timestamp (zero: when it
// is produced).
type Record struct {
	Key   string
	Value []byte
	Time  time.Time
}

// DayOf is the local date of t in loc as yyyymmdd, computed by the tests' own code.
func DayOf(t time.Time, loc *time.Location) string { return t.In(loc).Format("20060102") }

// PropertyStream makes a random stream of users' reports: days across zones (instants near
// midnight in UTC+14, UTC-11, UTC+8 and UTC), regions and no region, stale values, request
// ids retried with other values, and invalid records (some reusing a valid request id).
// ids[i] is the "user/day/request id" of a valid record, "" for an invalid one.
// Event times lie within 12 hours of base, and some at base - 23 h.
func PropertyStream(rng *rand.Rand, users, perUser int, base time.Time) (records []Record, ids []string, invalid int) {
	zones := []string{"Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Shanghai", "UTC"}
	regions := []string{"", "eu", "us", "asia"}
	for u := range users {
		user := fmt.Sprintf("user-%d", u)
		var reqs []string
		for i := range perUser {
			req := fmt.Sprintf("r%d", i)
			steps := rng.IntN(1000)
			if len(reqs) > 0 && rng.IntN(4) == 0 {
				req = reqs[rng.IntN(len(reqs))] // a retry, with other values
			}
			ts := base.Add(time.Duration(rng.IntN(48*60)-24*60) * time.Minute / 2).Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			if rng.IntN(8) == 0 {
				ts = base.Add(-23 * time.Hour) // one instant: ties on value and reach time
				steps = 900 + rng.IntN(3)
			}
			region := ""
			if r := regions[rng.IntN(len(regions))]; r != "" {
				region = `,"region":"` + r + `"`
			}
			value := fmt.Sprintf(`{"request_id":"%s","user_id":"%s","steps":%d,"ts":"%s","tz":"%s"%s}`,
				req, user, steps, ts.Format(time.RFC3339Nano), zones[u%len(zones)], region)
			loc, err := time.LoadLocation(zones[u%len(zones)])
			if err != nil {
				panic(err)
			}
			id := user + "/" + DayOf(ts, loc) + "/" + req // request ids are per user and day
			switch rng.IntN(10) {
			case 0:
				value, id = strings.Replace(value, `"steps":`, `"steps":-`, 1), ""
			case 1:
				value, id = strings.Replace(value, zones[u%len(zones)], "Mars/Olympus", 1), ""
			case 2:
				value, id = value[:len(value)/2], ""
			}
			if id == "" {
				invalid++
			} else {
				reqs = append(reqs, req)
			}
			records = append(records, Record{Key: user, Value: []byte(value)})
			ids = append(ids, id)
		}
	}
	return records, ids, invalid
}

// ShuffleStream permutes a PropertyStream keeping each request id's first valid report first.
func ShuffleStream(rng *rand.Rand, ids []string) []int {
	return ShuffleKeepingFirsts(rng, len(ids), func(i int) string {
		if ids[i] == "" {
			return strconv.Itoa(i)
		}
		return ids[i]
	})
}

// ShuffleKeepingFirsts returns a random permutation of 0..n-1 in which, for every id, the
// smallest index with that id comes before the other indexes with it: a request id is merged
// once, so which report of an id comes first is part of the input, not of its order.
func ShuffleKeepingFirsts(rng *rand.Rand, n int, id func(int) string) []int {
	out := rng.Perm(n)
	// Swap each id's smallest index into the earliest place its id takes: both places hold
	// the same id, so the other ids keep their places.
	first := map[string]int{}
	for i := n - 1; i >= 0; i-- {
		first[id(i)] = i
	}
	seen := map[string]bool{}
	for at, x := range out {
		k := id(x)
		if seen[k] {
			continue
		}
		seen[k] = true
		j := slices.Index(out, first[k])
		out[at], out[j] = out[j], out[at]
	}
	return out
}

package clickhouse

import (
	"slices"
	"testing"
	"time"
)

// Two days of hand-made snapshots of the stream "search" (ranks 1-12, counts base - 10*rank):
//
//	yesterday 10:00 (base 200)  a b c d e f g h i j | k l
//	yesterday 20:00 (base 250)  a b c d e f g h i k | j l
//	today     10:00 (base 300)  m a b c d e f g h i | j k     m enters at 10:00
//	today     12:00 (base 500)  m a n b c d e f g h | l i     n enters at 12:00
//	today     20:00 (base 400)  a m n b c d e f g l | h i     l enters at 20:00
//
// Today's 12:00 window was first written wrong (z and x on top) and then recomputed with a
// higher version, and every snapshot is written twice; another stream shares the table.
var (
	today     = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	yesterday = today.AddDate(0, 0, -1)
)

func at(day time.Time, hour int) time.Time { return day.Add(time.Duration(hour) * time.Hour) }

func writeTwoDays(t *testing.T, s *Sink) {
	t.Helper()
	window := func(stream string, end time.Time, base, version uint64, items string) []TopKRow {
		rows := make([]TopKRow, len(items))
		for i, item := range items {
			rank := uint64(i + 1)
			rows[i] = TopKRow{Stream: stream, WindowStart: end.Add(-time.Hour), WindowEnd: end, Rank: uint32(rank),
				Item: string(item), Count: base - 10*rank, Error: rank, Version: version}
		}
		return rows
	}
	batch := slices.Concat(
		window("search", at(yesterday, 10), 200, 1, "abcdefghijkl"),
		window("search", at(yesterday, 20), 250, 1, "abcdefghikjl"),
		window("search", at(today, 10), 300, 1, "mabcdefghijk"),
		window("search", at(today, 12), 500, 1, "zxmanbcdefgh"),
		window("search", at(today, 20), 400, 1, "amnbcdefglhi"),
		window("other", at(today, 12), 9000, 1, "qm"),
	)
	recomputed := window("search", at(today, 12), 500, 2, "manbcdefghli")
	for _, b := range [][]TopKRow{batch, recomputed, batch} {
		if err := s.WriteTopK(testContext(t), b); err != nil {
			t.Fatal(err)
		}
	}
}

func TestQueryTopItemsOfDay(t *testing.T) {
	s, conn := migrated(t)
	writeTwoDays(t, s)
	type row struct {
		Item     string `ch:"item"`
		Peak     uint64 `ch:"peak_count"`
		BestRank uint32 `ch:"best_rank"`
		Windows  uint64 `ch:"windows"`
	}
	want := []row{{"m", 490, 1, 3}, {"a", 480, 1, 3}, {"n", 470, 3, 2}, {"b", 460, 3, 3}, {"c", 450, 4, 3}}
	for _, day := range []any{today, "2026-11-30"} {
		var got []row
		if err := conn.Select(testContext(t), &got, QueryTopItemsOfDay, "search", day, 5); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("top items of %v = %+v, want %+v", day, got, want)
		}
	}
}

func TestQueryItemRankOverTime(t *testing.T) {
	s, conn := migrated(t)
	writeTwoDays(t, s)
	type row struct {
		End   time.Time `ch:"window_end"`
		Rank  uint32    `ch:"rank"`
		Count uint64    `ch:"count"`
	}
	for _, tc := range []struct {
		item     string
		from, to time.Time
		want     []row
	}{
		{"l", yesterday, today.AddDate(0, 0, 1), []row{
			{at(yesterday, 10), 12, 80}, {at(yesterday, 20), 12, 130}, {at(today, 12), 11, 390}, {at(today, 20), 10, 300},
		}},
		{"l", at(today, 12), at(today, 20), []row{{at(today, 12), 11, 390}}},
		{"n", today, today.AddDate(0, 0, 1), []row{{at(today, 12), 3, 470}, {at(today, 20), 3, 370}}},
		{"z", yesterday, today.AddDate(0, 0, 1), nil}, // only in the replaced computation
		{"q", yesterday, today.AddDate(0, 0, 1), nil}, // only in the other stream
	} {
		var got []row
		if err := conn.Select(testContext(t), &got, QueryItemRankOverTime, "search", tc.item, tc.from, tc.to); err != nil {
			t.Fatal(err)
		}
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = got[i].End.Equal(tc.want[i].End) && got[i].Rank == tc.want[i].Rank && got[i].Count == tc.want[i].Count
		}
		if !ok {
			t.Errorf("rank of %q in [%v, %v) = %+v, want %+v", tc.item, tc.from, tc.to, got, tc.want)
		}
	}
}

func TestQueryEnteredTop10(t *testing.T) {
	s, conn := migrated(t)
	writeTwoDays(t, s)
	type row struct {
		Item      string    `ch:"item"`
		EnteredAt time.Time `ch:"entered_at"`
		BestRank  uint32    `ch:"best_rank"`
		Peak      uint64    `ch:"peak_count"`
	}
	want := []row{{"m", at(today, 10), 1, 490}, {"n", at(today, 12), 3, 470}, {"l", at(today, 20), 10, 300}}
	var got []row
	for _, day := range []any{today, "2026-11-30"} {
		if err := conn.Select(testContext(t), &got, QueryEnteredTop10, "search", day, "search", day); err != nil {
			t.Fatal(err)
		}
		ok := len(got) == len(want)
		for i := 0; ok && i < len(got); i++ {
			ok = got[i].Item == want[i].Item && got[i].EnteredAt.Equal(want[i].EnteredAt) &&
				got[i].BestRank == want[i].BestRank && got[i].Peak == want[i].Peak
		}
		if !ok {
			t.Errorf("entered the Top-10 on %v = %+v, want %+v", day, got, want)
		}
	}
	// Yesterday every item of the Top-10 was new: the day before had no snapshots.
	if err := conn.Select(testContext(t), &got, QueryEnteredTop10, "search", yesterday, "search", yesterday); err != nil {
		t.Fatal(err)
	}
	if len(got) != 11 {
		t.Errorf("entered the Top-10 yesterday: %d items, want 11 (a to k)", len(got))
	}
}

// TestQueryRegionDaysAfterFinal: a user who moved region during a day (a later, larger value
// naming another region) counts only in the new region; a user's month lists their days of
// that month only.
func TestQueryRegionDaysAfterFinal(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	for _, batch := range [][]DailyStepsRow{
		{{UserID: "u1", Day: day, Steps: 100, Region: "a", UpdatedAt: at(1)}, {UserID: "u2", Day: day, Steps: 50, Region: "a", UpdatedAt: at(2)},
			{UserID: "u3", Day: day, Steps: 70, Region: "a", UpdatedAt: at(2)}, {UserID: "u1", Day: day.AddDate(0, 0, 1), Steps: 9, Region: "a", UpdatedAt: at(30)}},
		{{UserID: "u1", Day: day, Steps: 200, Region: "b", UpdatedAt: at(3)}},
	} {
		if err := s.WriteDailySteps(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	type stat struct {
		Day    time.Time `ch:"day"`
		Users  uint64    `ch:"users"`
		Median uint32    `ch:"median_steps"`
		Top1   uint32    `ch:"top1_threshold"`
	}
	for _, c := range []struct {
		region string
		want   []stat
	}{
		{"a", []stat{{day, 2, 70, 70}, {day.AddDate(0, 0, 1), 1, 9, 9}}},
		{"b", []stat{{day, 1, 200, 200}}},
	} {
		var got []stat
		if err := conn.Select(ctx, &got, QueryRegionDays, day, day.AddDate(0, 0, 7), c.region); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("region %s: %+v, want %+v", c.region, got, c.want)
		}
		for i := range got {
			if g, w := got[i], c.want[i]; !g.Day.Equal(w.Day) || g.Users != w.Users || g.Median != w.Median || g.Top1 != w.Top1 {
				t.Errorf("region %s: %+v, want %+v", c.region, g, w)
			}
		}
	}
	var month []struct {
		Day    time.Time `ch:"day"`
		Steps  uint32    `ch:"steps"`
		Region string    `ch:"region"`
		At     time.Time `ch:"updated_at"`
	}
	if err := conn.Select(ctx, &month, QueryUserMonth, "u1", "2026-11-15"); err != nil {
		t.Fatal(err)
	}
	if len(month) != 1 || month[0].Steps != 200 || month[0].Region != "b" {
		t.Fatalf("u1's November: %+v, want one day of 200 steps in b", month)
	}
}

package web

import (
	"slices"
	"time"

	"github.com/rankstream/rankstream/board"
)

// BoardInfo is a board as the leaderboard page lists it.
type BoardInfo struct {
	Name    string       `json:"name"`
	Zone    string       `json:"zone"`
	Periods []PeriodInfo `json:"periods"`
}

// PeriodInfo is one period a board keeps, with the query values (GET /v1/boards/{board}?period=)
// of its current and previous windows: "" when there is none (a season board between seasons,
// the total board's previous, the first season's previous).
type PeriodInfo struct {
	Period   string `json:"period"`
	Current  string `json:"current"`
	Previous string `json:"previous"`
}

// CatalogInfo is /ui/boards.json.
type CatalogInfo struct {
	Boards []BoardInfo `json:"boards"`
	Scopes []string    `json:"scopes"`
}

// Catalog lists the daily steps board and then the declared boards, each with the current and
// previous windows of its periods at now. The steps board's day is the UTC date, as the read
// API's default.
func Catalog(boards []*board.Board, scopes []string, now time.Time) CatalogInfo {
	today := board.DayOf(now, time.UTC)
	c := CatalogInfo{Boards: []BoardInfo{{Name: board.StepsBoard, Zone: "UTC", Periods: []PeriodInfo{{
		Period: string(board.PeriodDay), Current: "d:" + today.String(), Previous: "d:" + today.AddDays(-1).String()}}}}, Scopes: scopes}
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	for _, b := range boards {
		info := BoardInfo{Name: b.Name, Zone: b.Zone.String()}
		for _, p := range b.Periods {
			info.Periods = append(info.Periods, periodInfo(b, p, now))
		}
		c.Boards = append(c.Boards, info)
	}
	return c
}

// periodInfo finds the current and previous windows of period p of b at now.
func periodInfo(b *board.Board, p board.Period, now time.Time) PeriodInfo {
	info := PeriodInfo{Period: string(p)}
	ref := func(w board.Window) string { return string(p) + ":" + w.ID }
	switch p {
	case board.PeriodTotal:
		info.Current = string(p)
	case board.PeriodSeason:
		// The previous season is the latest that ended by now (or by the current one's start).
		cur, ok := b.Window(p, now)
		until := now
		if ok {
			info.Current, until = ref(cur), cur.Start
		}
		for _, s := range slices.Backward(b.Seasons) {
			if !s.EndAt.After(until) {
				info.Previous = string(p) + ":" + s.Name
				break
			}
		}
	default:
		cur, _ := b.Window(p, now)
		prev, _ := b.Window(p, cur.Start.Add(-time.Nanosecond))
		info.Current, info.Previous = ref(cur), ref(prev)
	}
	return info
}

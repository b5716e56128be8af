package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Limits of GET /v1/history/hot.
const (
	// MaxHistoryK caps k; the default is 10, as for GET /v1/hot/search.
	MaxHistoryK     = 100
	defaultHistoryK = 10
	// historyTimeout bounds the history store's read of one request.
	historyTimeout = 5 * time.Second
)

// historyQuery is GET /v1/history/hot?at=RFC3339&k=N.
type historyQuery struct {
	At time.Time
	K  int
}

// parseHistoryQuery reads at (RFC 3339, required) and k (1 to MaxHistoryK, larger values
// clamped; default 10). Its error is the reason of a 400.
func parseHistoryQuery(raw string) (historyQuery, string) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return historyQuery{}, "query string: " + err.Error()
	}
	q := historyQuery{K: defaultHistoryK}
	at := v["at"]
	switch {
	case len(at) == 0 || at[0] == "":
		return historyQuery{}, "at: required, an RFC 3339 time such as 2026-11-30T08:00:00Z"
	case len(at) > 1:
		return historyQuery{}, "at: given more than once"
	}
	if q.At, err = time.Parse(time.RFC3339, at[0]); err != nil {
		return historyQuery{}, "at: " + strconv.Quote(cutQuoted(at[0])) + " is not an RFC 3339 time such as 2026-11-30T08:00:00Z"
	}
	if ks := v["k"]; len(ks) > 1 {
		return historyQuery{}, "k: given more than once"
	} else if len(ks) == 1 && ks[0] != "" {
		n, err := strconv.ParseUint(ks[0], 10, 64)
		switch {
		case !digits(ks[0]) || err == nil && n == 0:
			return historyQuery{}, "k: " + strconv.Quote(cutQuoted(ks[0])) + " is not a count from 1 to " + strconv.Itoa(MaxHistoryK)
		case err != nil || n > MaxHistoryK: // digits beyond uint64 too: capped
			q.K = MaxHistoryK
		default:
			q.K = int(n)
		}
	}
	return q, ""
}

// cutQuoted bounds a value quoted in an error message of the history endpoint.
func cutQuoted(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// RegisterHistory adds GET /v1/history/hot, answered from h, to mux (beside the rest of the
// API, which it leaves to whatever mux holds for "/"); log receives h's failures
// (rate-limited). The endpoint is the only one not answered from Redis: the pages' time
// travel reads the history store, rankstream serve --history.
func RegisterHistory(mux *http.ServeMux, h HotHistory, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	mux.HandleFunc("GET /v1/history/hot", historyHandler(h, log))
}

// HotHistory is the history store of the hot-search snapshots (sinks/clickhouse's Sink,
// through internal/service/app: the API imports no store driver).
type HotHistory interface {
	// HotSnapshotAt returns the first k items of the snapshot of stream in effect at at: the
	// one of the latest window ending at or before at; nil when none does.
	HotSnapshotAt(ctx context.Context, stream string, at time.Time, k int) (*HotSnapshot, error)
}

// HotSnapshot is a hot-search snapshot as the history keeps it, the answer of GET
// /v1/history/hot: its items have the shape of GET /v1/hot/search's.
type HotSnapshot struct {
	Stream      string    `json:"stream"`
	At          time.Time `json:"at"` // the time asked for
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	GeneratedAt time.Time `json:"generated_at"`
	// MissingPartitions is how many partitions the snapshot missed (the history keeps their
	// number, not which).
	MissingPartitions int64             `json:"missing_partition_count"`
	Items             []topics.TopKItem `json:"items"`
}

// historyHandler answers GET /v1/history/hot: 200 with the snapshot in effect at the time
// asked for, 404 when the history holds none that early, 400 for a bad query, 503 when the
// history store fails.
func historyHandler(h HotHistory, log *slog.Logger) http.HandlerFunc {
	const route = "GET /v1/history/hot"
	var errLog obs.LogLimiter
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		code, v := http.StatusOK, any(nil)
		q, reason := parseHistoryQuery(r.URL.RawQuery)
		if reason != "" {
			code, v = http.StatusBadRequest, map[string]string{"error": reason}
		} else {
			ctx, cancel := context.WithTimeout(r.Context(), historyTimeout)
			snap, err := h.HotSnapshotAt(ctx, topics.SearchStream, q.At, q.K)
			cancel()
			switch {
			case err != nil:
				errLog.Log(r.Context(), log, slog.LevelError, "history: read failed", "err", err)
				w.Header().Set("Retry-After", "1")
				code, v = http.StatusServiceUnavailable, map[string]string{"error": "history store unavailable; retry"}
			case snap == nil:
				code, v = http.StatusNotFound, map[string]string{"error": "no hot-search snapshot in the history at or before " + q.At.UTC().Format(time.RFC3339)}
			default:
				v = snap
			}
		}
		obs.WriteJSON(w, code, v)
		obs.ObserveHTTP(route, strconv.Itoa(code), time.Since(start))
	}
}

package web

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

//go:embed static
var files embed.FS

// Config is what the pages are served with.
type Config struct {
	// Boards are the declared boards (the boards file); the daily steps board is always listed.
	Boards []*board.Board
	// Scopes are suggested in the scope switcher (any scope may be typed); e.g. the demo
	// traffic's regions.
	Scopes []string
	// History, when not nil, answers GET /v1/history/hot (rankstream serve --history).
	History HotHistory
	// Log receives the history store's failures (rate-limited).
	Log *slog.Logger
	// Now is the clock of the boards' current periods; nil is time.Now.
	Now func() time.Time
}

// Register adds the pages and their resources to mux: GET / (hot search), GET /boards (the
// leaderboards), GET /ui/... (style, scripts, boards.json) and, with cfg.History, GET
// /v1/history/hot. The other paths stay with whatever mux holds for "/".
func Register(mux *http.ServeMux, cfg Config) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic("BUG: web: embedded static folder: " + err.Error())
	}
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeFileFS(w, r, static, name)
		}
	}
	mux.HandleFunc("GET /{$}", page("index.html"))
	mux.HandleFunc("GET /boards", page("boards.html"))
	mux.Handle("GET /ui/", http.StripPrefix("/ui/", noCache(http.FileServerFS(static))))
	mux.HandleFunc("GET /ui/boards.json", func(w http.ResponseWriter, _ *http.Request) {
		obs.WriteJSON(w, http.StatusOK, Catalog(cfg.Boards, cfg.Scopes, cfg.Now()))
	})
	if cfg.History != nil {
		mux.HandleFunc("GET /v1/history/hot", historyHandler(cfg.History, cfg.Log))
	}
}

// noCache makes the browser ask again (If-Modified-Since) for every embedded file, so a new
// binary's pages show at once.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// HotHistory is the history store of the hot-search snapshots (sinks/clickhouse's Sink).
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

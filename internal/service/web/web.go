package web

import (
	"embed"
	"io/fs"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
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
	// Now is the clock of the boards' current periods; nil is time.Now.
	Now func() time.Time
}

// Register adds the pages and their resources to mux: GET / (hot search), GET /boards (the
// leaderboards), GET /ui/... (style, scripts, boards.json). The other paths, the API's
// (GET /v1/history/hot among them: internal/service/api), stay with whatever mux holds for
// "/".
func Register(mux *http.ServeMux, cfg Config) {
	if cfg.Now == nil {
		cfg.Now = time.Now
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
}

// noCache makes the browser ask again (If-Modified-Since) for every embedded file, so a new
// binary's pages show at once.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// Package web serves rankstream's pages (hot search with its time travel, the leaderboards)
// from files embedded in the binary: plain HTML, CSS and a little JavaScript that read the
// query API (/v1/...) from the browser, with no build step and nothing fetched from another
// site. It also serves the two JSON resources the pages need that the read API does not
// answer: the declared boards with their current and previous periods (/ui/boards.json), and,
// only when given a HotHistory (rankstream serve --history), the hot-search list in effect at
// a past time (GET /v1/history/hot), read from the history store, never from the live path.
//
// It imports topics, board and internal/platform/obs, never a sink, Kafka or a store's driver:
// the history store comes in through the HotHistory interface.
package web

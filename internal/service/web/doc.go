// Package web serves rankstream's pages (hot search with its time travel, the leaderboards)
// from files embedded in the binary: plain HTML, CSS and a little JavaScript that read the
// query API (/v1/...) from the browser, with no build step and nothing fetched from another
// site. It also serves the one JSON resource the pages need that the read API does not
// answer: the declared boards with their current and previous periods (/ui/boards.json). The
// time travel's GET /v1/history/hot is the read API's (internal/service/api), like every
// /v1 path.
//
// It imports board and internal/platform/obs (topics too, by its rule), never a sink, Kafka or
// a store's driver.
package web

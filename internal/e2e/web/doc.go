// Package webe2e holds the browser tests of the pages: headless Chromium (chromedp) against the
// rankstream binary (dev with demo traffic; serve --history on ClickHouse for the time travel,
// the empty states and Redis down), checking that the pages show what the JSON API answers.
// With RANKSTREAM_SCREENSHOTS=<folder> (make screenshots) they save a PNG of each page there.
//
// It has tests only.
package webe2e

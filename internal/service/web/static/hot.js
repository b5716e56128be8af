// The hot-search page: the live Top-K (GET /v1/hot/search, polled every second, redrawn when a
// new window arrives, i.e. every slide) and the time travel (GET /v1/history/hot?at=).
"use strict";

const K = 10;
const $ = (id) => document.getElementById(id);

// rows fills a table body with a snapshot's items; prev maps term → rank in the snapshot to
// compare with (undefined: none to compare with).
function rows(tbody, items, prev) {
  tbody.replaceChildren(...items.map((it, i) => {
    const rank = i + 1;
    const low = it.count - it.error;
    const count = rs.el("td", { class: "num" }, rs.num(it.count),
      rs.el("br"), rs.el("span", { class: "range", text: it.error === 0 ? "exact" : "≥ " + rs.num(low) }));
    const before = prev === undefined ? undefined : (prev.has(it.item) ? prev.get(it.item) : null);
    return rs.el("tr", { "data-term": it.item, "data-count": it.count, "data-error": it.error },
      rs.el("td", { class: "num", text: rank }),
      rs.el("td", { class: "term", text: it.item }),
      count,
      rs.el("td", {}, rs.trend(rank, before)));
  }));
}

function rankMap(items) { return new Map(items.map((it, i) => [it.item, i + 1])); }

function windowText(s) {
  const mins = Math.round((Date.parse(s.window_end) - Date.parse(s.window_start)) / 60000);
  return "Window " + rs.utc(s.window_start) + " to " + rs.clock(s.window_end) + " UTC (" + mins + " min)";
}

// --- live -----------------------------------------------------------------------------------

const live = { snap: null, prev: null, slideMs: null };

// The snapshot the page saw before the one it shows, kept across reloads of the tab.
try { live.prev = JSON.parse(sessionStorage.getItem("hot.prev") || "null"); } catch (e) { live.prev = null; }

async function pollLive() {
  const r = await rs.get("/v1/hot/search?k=" + K);
  if (r.status === 404 && r.json) {
    rs.banner($("live-banner"), "");
    $("live-empty").hidden = false;
    $("live-empty").textContent = "No hot-search snapshot yet: the first list appears when the pipeline closes its first window.";
    $("live-table").hidden = true;
    return;
  }
  if (r.status !== 200) {
    // Keep the last list on screen; say why it does not move. Whether a snapshot exists is
    // unknown now.
    $("live-empty").hidden = true;
    const why = r.status === 503 ? "Redis is unavailable (503); retrying every second." : "The query API answered " + r.status + ": " + r.body.error;
    rs.banner($("live-banner"), why + (live.snap ? " Showing the last list received." : ""), true);
    return;
  }
  const s = r.body;
  rs.banner($("live-banner"), s.stale ? "Redis is unavailable: showing the last good list, " + rs.ago(s.stale_age_ms) + " old." : "");
  $("live-empty").hidden = true;
  if (live.snap && live.snap.window_end === s.window_end) return;
  if (live.snap) {
    const slide = Date.parse(s.window_end) - Date.parse(live.snap.window_end);
    if (slide > 0) live.slideMs = slide;
    live.prev = { window_end: live.snap.window_end, items: live.snap.items };
    sessionStorage.setItem("hot.prev", JSON.stringify(live.prev));
  }
  live.snap = s;
  drawLive();
}

function drawLive() {
  const s = live.snap;
  const table = $("live-table");
  table.hidden = false;
  table.dataset.windowEnd = s.window_end;
  const prev = live.prev && Date.parse(live.prev.window_end) < Date.parse(s.window_end) ? live.prev : null;
  rows(table.tBodies[0], s.items, prev ? rankMap(prev.items) : undefined);
  $("live-caption").textContent = "Top " + s.items.length + " terms" + (prev ? ", trend against the window ending " + rs.clock(prev.window_end) + " UTC" : ", trend shown from the next snapshot on");
  $("live-window").textContent = windowText(s) + (live.slideMs ? ", a new one every " + live.slideMs / 1000 + " s" : "");
  const notes = [];
  if (s.missing_partitions && s.missing_partitions.length) notes.push("Partitions " + s.missing_partitions.join(", ") + " had not reported: counts may be low.");
  if (s.dropped) notes.push(rs.num(s.dropped) + " queries were counted in no window (late or too far ahead).");
  $("live-notes").textContent = notes.join(" ");
  fresh();
}

function fresh() {
  const s = live.snap;
  if (!s) return;
  $("live-fresh").textContent = "Computed " + rs.ago(Date.now() - Date.parse(s.generated_at)) + " ago; the window ended " + rs.ago(Date.now() - Date.parse(s.window_end)) + " ago.";
}

// --- time travel ----------------------------------------------------------------------------

function chosenAt() {
  const day = $("tt-day").value;
  const m = Number($("tt-time").value);
  return new Date(Date.parse(day + "T00:00:00Z") + m * 60000);
}

function setChosen(d) {
  $("tt-day").value = d.toISOString().slice(0, 10);
  $("tt-time").value = d.getUTCHours() * 60 + d.getUTCMinutes();
}

let ttSeq = 0;

async function travel() {
  const at = chosenAt();
  if (isNaN(at)) return;
  const atText = at.toISOString().replace(/\.\d+Z$/, "Z");
  $("tt-at").textContent = rs.utc(at);
  const u = new URL(location.href);
  u.searchParams.set("at", atText);
  history.replaceState(null, "", u);
  const seq = ++ttSeq;
  const r = await rs.get("/v1/history/hot?k=" + K + "&at=" + encodeURIComponent(atText));
  if (seq !== ttSeq) return; // a later choice is on its way
  const table = $("tt-table");
  if (r.status !== 200) {
    table.hidden = true;
    $("tt-window").textContent = "";
    let why = r.body.error;
    if (r.status === 404 && !r.json) why = "Time travel is not available here: it needs rankstream serve --history (ClickHouse).";
    else if (r.status === 404) why = "No snapshot in the history at or before " + rs.utc(at) + ".";
    else if (r.status === 503) why = "The history store is unavailable (503); try again.";
    rs.banner($("tt-banner"), why, r.status !== 404);
    return;
  }
  const s = r.body;
  // The window one slide earlier: the snapshot in effect a second before this one's end.
  const before = new Date(Date.parse(s.window_end) - 1000).toISOString().replace(/\.\d+Z$/, "Z");
  const p = await rs.get("/v1/history/hot?k=" + K + "&at=" + encodeURIComponent(before));
  if (seq !== ttSeq) return;
  rs.banner($("tt-banner"), "");
  table.hidden = false;
  table.dataset.windowEnd = s.window_end;
  rows(table.tBodies[0], s.items, p.status === 200 ? rankMap(p.body.items) : undefined);
  $("tt-window").textContent = windowText(s) + (s.missing_partition_count ? "; " + s.missing_partition_count + " partitions had not reported" : "");
}

function start() {
  const at = new URLSearchParams(location.search).get("at");
  setChosen(at && !isNaN(Date.parse(at)) ? new Date(at) : new Date(Date.now() - 60000));
  $("tt-day").addEventListener("change", travel);
  $("tt-time").addEventListener("input", () => { $("tt-at").textContent = rs.utc(chosenAt()); });
  $("tt-time").addEventListener("change", travel);
  travel();
  pollLive();
  setInterval(pollLive, 1000);
  setInterval(fresh, 1000);
}

start();

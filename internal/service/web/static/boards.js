// The leaderboard page: any declared board and the steps board through GET /v1/boards/{board}
// (Top 3 set apart, pages of 20 up to rank 1000, arrows against the previous period read from
// the same API), "jump to me" (GET /v1/boards/{board}/members/{me}?neighbors=3) and the
// friends board (GET /v1/friends/...). The boards and their periods come from /ui/boards.json.
"use strict";

const LIMIT = 20, MAX_RANK = 1000, NEIGHBORS = 3, REFRESH_MS = 10000;
const PERIOD_NAMES = { h: "Hour", d: "Day", w: "Week", m: "Month", season: "Season", total: "All time" };
const $ = (id) => document.getElementById(id);

const st = { catalog: null, board: null, period: null, scope: "global", offset: 0, end: null, last: null, seq: 0 };

function boardInfo() { return st.catalog.boards.find((b) => b.name === st.board); }
function periodInfo() { return boardInfo().periods.find((p) => p.period === st.period); }

// query is the period and scope part of a board request for the period ref (e.g. "d:20261130").
function query(ref) {
  const q = new URLSearchParams({ period: ref });
  if (st.scope && st.scope !== "global") q.set("scope", st.scope);
  return q;
}

function saveURL() {
  const u = new URL(location.href);
  const p = u.searchParams;
  p.set("board", st.board); p.set("period", st.period); p.set("scope", st.scope || "global");
  if (st.offset) p.set("offset", st.offset); else p.delete("offset");
  const me = $("viewer").value.trim();
  if (me) p.set("me", me); else p.delete("me");
  history.replaceState(null, "", u);
}

function entryRow(e, extra, me) {
  return rs.el("tr", { "data-rank": e.rank, "data-member": e.member, "data-score": e.score, class: e.member === me ? "me" : null },
    rs.el("td", { class: "num", text: e.rank }),
    rs.el("td", {}, rs.avatar(e.member)),
    rs.el("td", { class: "member" }, e.member, e.member === me ? rs.el("span", { class: "sr-only", text: " (me)" }) : null),
    rs.el("td", { class: "num", text: rs.num(e.score) }),
    extra);
}

function reachedCell(e) { return rs.el("td", { class: "hide-narrow", text: rs.utc(e.reached_at) }); }

// --- controls -------------------------------------------------------------------------------

function fillControls() {
  $("board").replaceChildren(...st.catalog.boards.map((b) => rs.el("option", { value: b.name, text: b.name === "steps" ? "steps (daily steps)" : b.name })));
  $("board").value = st.board;
  $("scopes").replaceChildren(...["global", ...st.catalog.scopes].map((s) => rs.el("option", { value: s })));
  fillPeriods();
}

function fillPeriods() {
  const b = boardInfo();
  if (!b.periods.some((p) => p.period === st.period)) {
    st.period = (b.periods.find((p) => p.period === "total") || b.periods[0]).period;
  }
  $("periods").replaceChildren(...b.periods.map((p) =>
    rs.el("label", {}, rs.el("input", { type: "radio", name: "period", value: p.period, checked: p.period === st.period }),
      rs.el("span", { text: PERIOD_NAMES[p.period] || p.period }))));
}

// --- the board ------------------------------------------------------------------------------

async function load(quiet) {
  const seq = ++st.seq;
  const p = periodInfo();
  saveURL();
  $("title").textContent = "Leaderboard: " + st.board;
  if (!p.current) {
    showEmpty("No season of board " + st.board + " holds the present.");
    return;
  }
  const q = query(p.current);
  q.set("offset", st.offset); q.set("limit", LIMIT);
  const r = await rs.get("/v1/boards/" + encodeURIComponent(st.board) + "?" + q);
  if (seq !== st.seq) return;
  if (r.status === 503 || r.status === 0) {
    $("empty").hidden = true; // whether the board is empty is unknown now
    rs.banner($("banner"), "Redis is unavailable (" + (r.status || "no answer") + "); retrying." + (st.last ? " Showing the last board received." : ""), true);
    return;
  }
  if (r.status !== 200) {
    showEmpty(r.body.error || "The query API answered " + r.status + ".");
    rs.banner($("banner"), "");
    return;
  }
  const page = r.body;
  rs.banner($("banner"), page.stale ? "Redis is unavailable: showing the last good board, " + rs.ago(page.stale_age_ms) + " old." : "");
  st.last = page;
  st.end = page.period_end ? Date.parse(page.period_end) : null;
  tick();
  draw(page, p);
  if (!quiet) $("me-section").hidden = $("friends-section").hidden = true;
}

function showEmpty(text) {
  st.last = null;
  $("empty").hidden = false;
  $("empty").textContent = text;
  $("board-table").hidden = true;
  $("podium-section").hidden = true;
  $("page-info").textContent = "";
  $("prev").disabled = $("next").disabled = true;
  $("beyond").hidden = true;
}

function draw(page, p) {
  if (page.total === 0 || page.items.length === 0) {
    showEmpty(page.total === 0 ? "Nobody is on this board yet for this period: it fills as scores arrive." : "No members on this page.");
    return;
  }
  $("empty").hidden = true;
  const me = $("viewer").value.trim();
  const items = page.items;
  const podium = st.offset === 0 ? items.slice(0, 3) : [];
  const rest = items.slice(podium.length);
  $("podium-section").hidden = podium.length === 0;
  const trendCells = new Map();
  $("podium").replaceChildren(...podium.map((e) => {
    const t = rs.el("div", { class: "trend" });
    trendCells.set(e.member, t);
    return rs.el("li", { class: "r" + e.rank + (e.member === me ? " me" : ""), "data-rank": e.rank, "data-member": e.member, "data-score": e.score },
      rs.el("div", { class: "place", text: "#" + e.rank }), rs.avatar(e.member),
      rs.el("div", { class: "who", text: e.member }), rs.el("div", { class: "score", text: rs.num(e.score) }), t);
  }));
  const table = $("board-table");
  table.hidden = rest.length === 0;
  table.tBodies[0].replaceChildren(...rest.map((e) => {
    const t = rs.el("td", { class: "trend" });
    trendCells.set(e.member, t);
    return entryRow(e, t, me);
  }));
  $("board-caption").textContent = st.board + ", " + (PERIOD_NAMES[st.period] || st.period).toLowerCase() + " " + page.period + ", " + page.scope +
    (p.previous ? "; arrows against " + p.previous : "; no previous period to compare with");
  const shownTo = page.offset + items.length;
  $("page-info").textContent = "Ranks " + (page.offset + 1) + " to " + shownTo + " of " + rs.num(page.total);
  $("prev").disabled = st.offset === 0;
  const last = Math.min(page.total, MAX_RANK);
  $("next").disabled = st.offset + LIMIT >= last;
  const beyond = page.total > MAX_RANK && st.offset + LIMIT >= MAX_RANK;
  $("beyond").hidden = !beyond;
  $("beyond").textContent = beyond ? "Only the first " + rs.num(MAX_RANK) + " ranks are listed; " + rs.num(page.total - MAX_RANK) +
    " more members are on this board. Use “Jump to me” to see your own rank and neighbours." : "";
  trends(items, p, trendCells);
}

// trends fills each member's move against the previous period: its rank there, read from the
// API (neighbors=0), "new" when it was not on that board.
async function trends(items, p, cells) {
  if (!p.previous) {
    for (const c of cells.values()) c.replaceChildren(rs.trend(0, undefined));
    return;
  }
  const q = query(p.previous);
  q.set("neighbors", 0);
  await Promise.all(items.map(async (e) => {
    const r = await rs.get("/v1/boards/" + encodeURIComponent(st.board) + "/members/" + encodeURIComponent(e.member) + "?" + q);
    const cell = cells.get(e.member);
    if (!cell) return;
    if (r.status === 200) cell.replaceChildren(rs.trend(e.rank, r.body.member.rank));
    else if (r.status === 404 && r.json) cell.replaceChildren(rs.trend(e.rank, null));
    else cell.replaceChildren(rs.trend(e.rank, undefined));
  }));
}

// --- countdown ------------------------------------------------------------------------------

function tick() {
  if (st.end === null) {
    $("countdown").textContent = st.period === "total" ? "All-time board: it never resets." : "";
    return;
  }
  let s = Math.max(0, Math.floor((st.end - Date.now()) / 1000));
  if (s === 0) {
    $("countdown").textContent = "This period has ended; loading the next one.";
    return;
  }
  const parts = [];
  const d = Math.floor(s / 86400); s %= 86400;
  const h = Math.floor(s / 3600); s %= 3600;
  const m = Math.floor(s / 60); s %= 60;
  if (d) parts.push(d + " d");
  if (d || h) parts.push(h + " h");
  parts.push(m + " min", s + " s");
  $("countdown").textContent = "Resets in " + parts.join(" ") + " (at " + rs.utc(st.end) + ").";
}

async function rollover() {
  if (st.end !== null && Date.now() >= st.end) {
    st.end = null;
    const r = await rs.get("/ui/boards.json");
    if (r.status === 200) st.catalog = r.body;
    st.offset = 0;
    load(true);
  }
}

// --- jump to me and friends -----------------------------------------------------------------

function needViewer(section, msg) {
  const me = $("viewer").value.trim();
  $(section).hidden = false;
  if (!me) {
    $(msg).hidden = false;
    $(msg).textContent = "Type your member id in “Me” first.";
    $(msg).nextElementSibling.hidden = true;
    $("viewer").focus();
  }
  return me;
}

async function jump() {
  $("friends-section").hidden = true;
  const me = needViewer("me-section", "me-msg");
  if (!me) return;
  load(true); // the board too, so that both show the same moment and mark me
  const q = query(periodInfo().current);
  q.set("neighbors", NEIGHBORS);
  const r = await rs.get("/v1/boards/" + encodeURIComponent(st.board) + "/members/" + encodeURIComponent(me) + "?" + q);
  const table = $("me-table");
  if (r.status !== 200) {
    table.hidden = true;
    $("me-msg").hidden = false;
    $("me-msg").textContent = r.status === 404 && r.json ? me + " is not on this board for this period." : (r.body.error || "The query API answered " + r.status + ".");
    return;
  }
  const s = r.body;
  $("me-msg").hidden = true;
  table.hidden = false;
  $("me-caption").textContent = me + " is #" + rs.num(s.member.rank) + " of " + rs.num(s.total) + ", with " + s.above.length + " above and " + s.below.length + " below";
  table.tBodies[0].replaceChildren(...[...s.above, s.member, ...s.below].map((e) => entryRow(e, reachedCell(e), me)));
  $("me-section").scrollIntoView({ block: "nearest" });
}

async function friends() {
  $("me-section").hidden = true;
  const me = needViewer("friends-section", "friends-msg");
  if (!me) return;
  saveURL();
  const p = periodInfo();
  const url = st.board === "steps"
    ? "/v1/friends/" + encodeURIComponent(me) + "/steps?day=" + p.current.slice(2) + "&limit=50"
    : "/v1/friends/" + encodeURIComponent(me) + "/boards/" + encodeURIComponent(st.board) + "?period=" + encodeURIComponent(p.current) + "&limit=50";
  const r = await rs.get(url);
  const table = $("friends-table");
  if (r.status !== 200) {
    table.hidden = true;
    $("friends-msg").hidden = false;
    $("friends-msg").textContent = r.status === 404 && !r.json ? "Friends board not available." : (r.body.error || "The API answered " + r.status + ".");
    return;
  }
  const f = r.body;
  $("friends-msg").hidden = true;
  table.hidden = false;
  const rows = f.items.slice();
  if (f.me && !rows.some((e) => e.member === f.me.member)) rows.push(f.me);
  $("friends-caption").textContent = me + " among " + rs.num(f.total - 1) + " friends (" + f.period + ")";
  table.tBodies[0].replaceChildren(...rows.map((e) => entryRow(e, reachedCell(e), me)));
}

// --- start ----------------------------------------------------------------------------------

async function start() {
  const r = await rs.get("/ui/boards.json");
  if (r.status !== 200) {
    rs.banner($("banner"), "Could not read the list of boards: " + r.body.error, true);
    return;
  }
  st.catalog = r.body;
  const u = new URLSearchParams(location.search);
  st.board = st.catalog.boards.some((b) => b.name === u.get("board")) ? u.get("board") : st.catalog.boards[0].name;
  st.period = u.get("period");
  st.scope = u.get("scope") || "global";
  st.offset = Math.min(Math.max(0, Math.floor(Number(u.get("offset")) / LIMIT) * LIMIT || 0), MAX_RANK - LIMIT);
  $("scope").value = st.scope;
  $("viewer").value = u.get("me") || "";
  fillControls();
  $("board").addEventListener("change", () => { st.board = $("board").value; st.offset = 0; fillPeriods(); load(); });
  $("periods").addEventListener("change", (e) => { st.period = e.target.value; st.offset = 0; load(); });
  $("scope").addEventListener("change", () => { st.scope = $("scope").value.trim() || "global"; st.offset = 0; load(); });
  $("prev").addEventListener("click", () => { st.offset = Math.max(0, st.offset - LIMIT); load(); });
  $("next").addEventListener("click", () => { st.offset += LIMIT; load(); });
  $("jump").addEventListener("click", jump);
  $("friends").addEventListener("click", friends);
  $("viewer").addEventListener("keydown", (e) => { if (e.key === "Enter") jump(); });
  await load();
  setInterval(tick, 1000);
  setInterval(rollover, 1000);
  setInterval(() => load(true), REFRESH_MS);
}

start();

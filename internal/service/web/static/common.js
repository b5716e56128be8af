// Shared helpers of the rankstream pages (no framework, no build step).
"use strict";

const rs = {
  // get fetches a JSON resource: {status, body, json} where json tells whether the answer was
  // JSON (an unrouted path answers text, e.g. an endpoint this binary does not serve).
  async get(url) {
    let res;
    try {
      res = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" });
    } catch (e) {
      return { status: 0, body: { error: "the server did not answer: " + e.message }, json: false };
    }
    const type = res.headers.get("Content-Type") || "";
    if (type.includes("application/json")) {
      try { return { status: res.status, body: await res.json(), json: true }; } catch (e) { /* fall through */ }
    }
    return { status: res.status, body: { error: await res.text() }, json: false };
  },
  num(n) { return Number(n).toLocaleString("en-US"); },
  // el builds an element: el("td", {class: "num"}, "12", child...).
  el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") e.textContent = v; else e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  },
  // banner shows text in the element (a role=status region), or hides it for "".
  banner(node, text, error) {
    node.textContent = text;
    node.hidden = !text;
    node.classList.toggle("error", !!error);
  },
  // ago says how long ago a time was, in words.
  ago(ms) {
    if (ms < 0) ms = 0;
    if (ms < 10000) return (ms / 1000).toFixed(1) + " s";
    if (ms < 120000) return Math.round(ms / 1000) + " s";
    if (ms < 7200000) return Math.round(ms / 60000) + " min";
    return Math.round(ms / 3600000) + " h";
  },
  utc(d) { return new Date(d).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC"); },
  clock(d) { return new Date(d).toISOString().slice(11, 19); },
  // trend is the cell content for a move from prevRank to rank: ▲ n, ▼ n, = or "new".
  // prevRank undefined means no previous list to compare with.
  trend(rank, prevRank) {
    if (prevRank === undefined) return rs.el("span", { class: "same", title: "nothing to compare with", text: "–" });
    if (prevRank === null) return rs.el("span", { class: "new", text: "new" });
    const d = prevRank - rank;
    if (d > 0) return rs.el("span", { class: "up", "aria-label": "up " + d, text: "▲ " + d });
    if (d < 0) return rs.el("span", { class: "down", "aria-label": "down " + -d, text: "▼ " + -d });
    return rs.el("span", { class: "same", "aria-label": "same place", text: "=" });
  },
  // avatar is a placeholder: the member's first and last characters on a colour from its name.
  avatar(member) {
    let h = 0;
    for (const c of member) h = (h * 31 + c.codePointAt(0)) >>> 0;
    // Dark hues only: white text keeps a contrast above 4.5:1.
    const hues = ["#1f4e79", "#6b2f8a", "#0f5e4d", "#8a3b12", "#374151", "#7a1f45"];
    return rs.el("span", { class: "avatar", "aria-hidden": "true", style: "background:" + hues[h % hues.length], text: member.slice(0, 1) + member.slice(-1) });
  },
};

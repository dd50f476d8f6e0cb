// What the status pages share (the crawl's, status.js, and a cluster
// crawl's, cluster.js): number formats, the elements that hold a number
// (each also in a data-value attribute, exact), bar tables, the charts
// drawn as hand-drawn SVG polylines, and the loop that renders the
// numbers embedded in the page (#status-data) and then polls
// /status.json. No library, no network but this server: the pages work
// offline.
"use strict";
window.ringcrawlPage = (function () {
  const $ = (id) => document.getElementById(id);
  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  function bytes(n) {
    let i = 0;
    while (n >= 1024 && i < UNITS.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + UNITS[i];
  }
  const int = (n) => Math.round(n).toLocaleString("en-US");
  function secs(s) {
    if (s < 60) return s.toFixed(1) + " s";
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = Math.floor(s % 60);
    return (h ? h + " h " : "") + m + " min " + r + " s";
  }
  function put(id, value, text) {
    const el = $(id);
    if (!el) return;
    el.dataset.value = String(value);
    el.textContent = text === undefined ? int(value) : text;
  }
  function cell(tr, text, cls) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  // Rows of [label, value, id, shown?, bad?] with a bar each, scaled to
  // the largest (or to `of`).
  function table(id, rows, of) {
    const t = $(id);
    t.replaceChildren();
    const max = of || Math.max(1, ...rows.map((r) => r[1]));
    for (const [label, value, rid, shown, bad] of rows) {
      const tr = document.createElement("tr");
      if (bad) tr.className = "bad";
      cell(tr, label);
      const n = cell(tr, shown === undefined ? int(value) : shown, "n");
      n.id = rid;
      n.dataset.value = String(value);
      const bar = cell(tr, "", "bar").appendChild(document.createElement("i"));
      bar.style.width = Math.min(100, (100 * value) / max) + "%";
      t.appendChild(tr);
    }
    if (!rows.length) cell(t.appendChild(document.createElement("tr")), "none");
  }
  // Per-second rates of `key` over the history.
  function rates(history, key) {
    const out = [];
    for (let i = 1; i < history.length; i++) {
      const dt = history[i].t - history[i - 1].t;
      if (dt > 0) out.push([history[i].t, (history[i][key] - history[i - 1][key]) / dt]);
    }
    return out;
  }
  // One line, or several (`points` an array of [class, points] pairs),
  // on a common scale.
  function chart(id, points, fmt) {
    const svg = $(id);
    const W = 600, H = 160;
    svg.replaceChildren();
    const ns = "http://www.w3.org/2000/svg";
    const lines = points.length && typeof points[0][0] === "string" ? points : [["", points]];
    const all = lines.flatMap((l) => l[1]);
    const max = Math.max(1, ...all.map((p) => p[1]));
    const t0 = all.length ? Math.min(...all.map((p) => p[0])) : 0;
    const t1 = all.length ? Math.max(...all.map((p) => p[0])) : 1;
    const x = (t) => (t1 > t0 ? ((t - t0) / (t1 - t0)) * W : W);
    const y = (v) => H - 14 - (v / max) * (H - 24);
    for (const f of [0, 0.5, 1]) {
      const line = document.createElementNS(ns, "line");
      line.setAttribute("x1", 0); line.setAttribute("x2", W);
      line.setAttribute("y1", y(max * f)); line.setAttribute("y2", y(max * f));
      svg.appendChild(line);
    }
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", 4); label.setAttribute("y", H - 2);
    label.textContent = "max " + fmt(max);
    svg.appendChild(label);
    for (const [cls, line] of lines) {
      const poly = document.createElementNS(ns, "polyline");
      if (cls) poly.setAttribute("class", cls);
      poly.setAttribute("points", line.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "));
      svg.appendChild(poly);
    }
    svg.dataset.points = String(lines[0][1].length);
  }
  // The samples' values of `key` (ms; those with none left out).
  const series = (history, key) => history.filter((h) => h[key] != null).map((h) => [h.t, h[key]]);
  // Render the numbers embedded in the page, then poll /status.json each
  // second (until `over` says the numbers are final), rendering each.
  // The history the server keeps, as far as this page has it: each poll
  // asks only for what is newer (`since`), and the sample of the moment
  // that ends an answer (not kept: the next kept one covers its second)
  // is shown once, not stored.
  let kept = [];
  function merge(status) {
    const h = status.history || [], n = status.history_kept == null ? h.length : status.history_kept;
    const fresh = h.slice(0, n), first = fresh.length ? fresh[0].t : Infinity;
    kept = kept.filter((x) => x.t < first).concat(fresh).slice(-3600);
    status.history = kept.concat(h.slice(n));
    return status;
  }
  function live(render, over) {
    const embedded = $("status-data");
    let finished = false;
    if (embedded) { const st = merge(JSON.parse(embedded.textContent)); render(st); finished = over(st); }
    async function poll() {
      try {
        const since = kept.length ? "?since=" + kept[kept.length - 1].t : "";
        const r = await fetch("/status.json" + since, { cache: "no-store" });
        if (r.ok) { const st = merge(await r.json()); render(st); finished = over(st); }
      } catch (e) { /* the server is gone: keep the last numbers */ }
      if (!finished) setTimeout(poll, 1000);
    }
    if (!finished) setTimeout(poll, 1000);
  }
  return { $, bytes, int, secs, put, cell, table, rates, chart, series, live };
})();

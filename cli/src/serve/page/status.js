// The live status page: renders /status.json into the page's elements
// (each number also in a data-value attribute, exact), and redraws the
// charts as hand-drawn SVG polylines. No library, no network but this
// server: the page works offline. The first numbers come embedded in the
// page (#status-data), so it is whole as soon as it loads; then it polls.
"use strict";
(function () {
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
  // A list of top hosts: each row its host, the list's number (with its
  // bar) and, in the title, all its numbers.
  function hosts(id, list, key, shown) {
    table(id, list.map((h) => [h.host, h[key], id + "-" + h.host, shown ? shown(h) : undefined, id !== "top-fetched" && id !== "top-queued"]));
    const rows = $(id).rows;
    list.forEach((h, i) => {
      rows[i].title = h.host + ": " + int(h.fetched) + " fetched, " + int(h.errors) + " failed, " + int(h.queued) + " queued" +
        (h.failures ? ", " + h.failures + " failures in a row" : "");
    });
  }
  function render(status) {
    const s = status.now, sum = s.summary, h = status.history || [];
    const state = $("state");
    state.textContent = s.finished ? "finished" : "crawling";
    state.className = "state" + (s.finished ? " finished" : "");
    put("elapsed", s.elapsed_s, secs(s.elapsed_s));
    put("pages", sum.urls);
    put("bytes", sum.bytes, bytes(sum.bytes));
    put("errors", sum.errors);
    put("in-flight", s.in_flight);
    put("connections-open", s.connections_open);
    put("connections-idle", s.connections_idle);
    put("queued", s.queued);
    put("queued-disk", s.queued_on_disk);
    put("hosts-live", s.hosts_live);
    put("hosts-resting", s.hosts_resting);
    put("rss", s.memory.rss, bytes(s.memory.rss));
    const pages = rates(h, "pages");
    const recent = pages.slice(-5);
    const rate = recent.length ? recent.reduce((a, p) => a + p[1], 0) / recent.length : 0;
    put("rate", Math.round(rate));
    chart("chart-pages", pages, int);
    chart("chart-bytes", rates(h, "bytes"), (v) => bytes(Math.round(v)) + "/s");
    chart("chart-latency", [["p50", series(h, "p50_ms")], ["p90", series(h, "p90_ms")], ["p99", series(h, "p99_ms")]],
      (v) => v.toFixed(1) + " ms");
    const top = s.top_hosts;
    hosts("top-fetched", top.fetched, "fetched");
    hosts("top-queued", top.queued, "queued");
    hosts("top-failing", top.failing, "errors", (h) => int(h.errors) + " of " + int(h.fetched));
    hosts("top-backoff", top.backing_off, "backoff_ms", (h) => secs(h.backoff_ms / 1000) + " (" + h.failures + " in a row)");
    table("statuses", Object.entries(sum.statuses).map(([code, n]) => [code, n, "status-" + code, undefined, code >= "400"]));
    table("errors-by-kind", Object.entries(sum.errors_by_kind).map(([k, n]) => [k, n, "error-" + k, undefined, true]));
    table("latency", [["connect", sum.connect], ["first byte", sum.first_byte], ["total", sum.total]]
      .flatMap(([phase, p]) => [["p50 " + phase, p.p50_ms, "latency-" + phase.replace(" ", "-") + "-p50", p.p50_ms.toFixed(2)],
                                 ["p99 " + phase, p.p99_ms, "latency-" + phase.replace(" ", "-") + "-p99", p.p99_ms.toFixed(2)]]));
    table("shards", s.shards.map((sh) => ["#" + sh.shard + " (" + sh.cpu_s.toFixed(1) + " s cpu)", sh.pages, "shard-" + sh.shard + "-pages"]));
    const m = s.memory, l = m.limits;
    table("memory", [
      ["hosts of " + bytes(l.hosts), m.hosts, "mem-hosts", bytes(m.hosts)],
      ["seen-set of " + bytes(l.seen), m.seen, "mem-seen", bytes(m.seen)],
      ["queues of " + bytes(l.queues), m.queues, "mem-queues", bytes(m.queues)],
      ["TLS sessions", m.tls_sessions, "mem-tls-sessions", bytes(m.tls_sessions)],
      ["DNS cache", m.dns_cache, "mem-dns-cache", bytes(m.dns_cache)],
      ...(l.cookies == null ? [] : [["cookies of " + bytes(l.cookies), m.cookies, "mem-cookies", bytes(m.cookies)]]),
      ["resident (all)", m.rss, "mem-rss", bytes(m.rss)],
    ], Math.max(1, m.rss));
    const b = s.budgets, rows = [];
    let eta = Infinity;
    if (b.max_pages != null) {
      rows.push(["pages of " + int(b.max_pages), b.pages, "budget-pages"]);
      if (rate > 0) eta = Math.min(eta, Math.max(0, b.max_pages - b.pages) / rate);
    }
    if (b.max_bytes != null) {
      rows.push(["bytes of " + bytes(b.max_bytes), b.bytes, "budget-bytes", bytes(b.bytes)]);
      const br = rates(h, "bytes").slice(-5), r = br.length ? br.reduce((a, p) => a + p[1], 0) / br.length : 0;
      if (r > 0) eta = Math.min(eta, Math.max(0, b.max_bytes - b.bytes) / r);
    }
    if (b.max_time_s != null) {
      rows.push(["seconds of " + int(b.max_time_s), s.elapsed_s, "budget-time", secs(s.elapsed_s)]);
      eta = Math.min(eta, Math.max(0, b.max_time_s - s.elapsed_s));
    }
    if (rows.length && !s.finished) rows.push(["ETA", isFinite(eta) ? eta : 0, "eta", isFinite(eta) ? secs(eta) : "?"]);
    $("budgets-box").hidden = !rows.length;
    table("budgets", rows);
  }
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
  const embedded = $("status-data");
  if (embedded) render(merge(JSON.parse(embedded.textContent)));
  let finished = false;
  async function poll() {
    try {
      const since = kept.length ? "?since=" + kept[kept.length - 1].t : "";
      const r = await fetch("/status.json" + since, { cache: "no-store" });
      if (r.ok) { const st = merge(await r.json()); render(st); finished = st.now.finished; }
    } catch (e) { /* the crawl is over and the server gone: keep the last numbers */ }
    if (!finished) setTimeout(poll, 1000);
  }
  if (!(embedded && JSON.parse(embedded.textContent).now.finished)) setTimeout(poll, 1000);
})();

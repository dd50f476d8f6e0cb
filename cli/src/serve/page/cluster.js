// The live status page of a cluster crawl (ringcrawl cluster status
// --serve): renders /status.json, the crawl as last read from Redis,
// with the helpers of common.js (loaded before it). Polls for as long
// as the page is open: the watcher outlives the crawl.
"use strict";
(function () {
  const { $, int, secs, put, cell, rates, chart, live } = window.ringcrawlPage;
  // Up to six nodes get a colour of their own (.series-0 to .series-5);
  // the others share the last.
  const series = (i) => "series-" + Math.min(i, 5);
  function nodes(list) {
    const t = $("nodes");
    t.replaceChildren();
    const head = t.appendChild(document.createElement("tr"));
    for (const [name, cls] of [["node", ""], ["alive", ""], ["partitions", "n"], ["records", "n"], ["pages/s", "n"]]) {
      const th = head.appendChild(document.createElement("th"));
      th.textContent = name;
      if (cls) th.className = cls;
    }
    list.forEach((n, i) => {
      const tr = t.appendChild(document.createElement("tr"));
      if (!n.alive) tr.className = "bad";
      const name = cell(tr, n.name);
      name.className = "key " + series(i);
      const alive = cell(tr, n.alive ? "yes" : "no");
      alive.id = "node-" + n.name + "-alive";
      alive.dataset.value = n.alive ? "1" : "0";
      for (const [key, value, shown] of [["partitions", n.partitions], ["records", n.records],
                                          ["rate", n.pages_per_sec, n.pages_per_sec.toFixed(1)]]) {
        const td = cell(tr, shown === undefined ? int(value) : shown, "n");
        td.id = "node-" + n.name + "-" + key;
        td.dataset.value = String(value);
      }
    });
    if (!list.length) cell(t.appendChild(document.createElement("tr")), "no node has joined");
  }
  function render(status) {
    const now = status.now, s = now.status, h = status.history || [];
    $("crawl").textContent = status.crawl;
    $("redis").textContent = status.redis;
    const error = $("error");
    error.hidden = !now.error;
    error.textContent = now.error ? "Redis: " + now.error + (s ? " (the numbers below are the last read)" : "") : "";
    const state = $("state");
    const alive = s ? s.nodes.filter((n) => n.alive).length : 0;
    state.textContent = now.error ? "error" : !s ? "starting" : alive ? "crawling" : s.entries === 0 && s.records > 0 ? "over" : "no node alive";
    state.className = "state" + (now.error ? " error" : alive ? "" : " finished");
    put("read-at", now.read_at == null ? 0 : now.read_at, now.read_at == null ? "never" : secs(Math.max(0, now.t - now.read_at)) + " ago");
    if (!s) return;
    put("nodes-alive", alive);
    put("records", s.records);
    put("partitions", s.partitions);
    put("unowned", s.unowned);
    put("entries", s.entries);
    put("in-flight", s.in_flight);
    put("urls-added", s.urls_added);
    put("roots", s.roots);
    const pages = rates(h, "records");
    const recent = pages.slice(-5);
    put("rate", Math.round(recent.length ? recent.reduce((a, p) => a + p[1], 0) / recent.length : 0));
    chart("chart-pages", pages, int);
    const names = s.nodes.map((n) => n.name);
    // Each node's rate as it reported it (its records move in steps, a
    // heartbeat apart).
    const lines = names.map((name, i) => [series(i), h.filter((x) => name in x.nodes).map((x) => [x.t, x.nodes[name].pages_per_sec])]);
    chart("chart-nodes", lines, int);
    const keys = $("node-keys");
    keys.replaceChildren();
    names.forEach((name, i) => {
      const key = keys.appendChild(document.createElement("i"));
      key.className = "key " + series(i);
      key.textContent = name + " ";
    });
    nodes(s.nodes);
  }
  live(render, () => false);
})();

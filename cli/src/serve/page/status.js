// The live status page of a crawl: renders /status.json into the
// page's elements with the helpers of common.js (loaded before it).
"use strict";
(function () {
  const { $, bytes, int, secs, put, table, rates, chart, series, live } = window.ringcrawlPage;
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
  live(render, (st) => st.now.finished);
})();

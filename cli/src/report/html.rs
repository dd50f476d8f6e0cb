//! The report page: a [`Tally`] as one HTML file with its styles inside
//! (the live page's, `include_str!`) and its charts as SVG drawn here:
//! nothing fetched, so it opens offline and anywhere. Every number is in
//! the file, in an element with an `id` and its exact value in
//! `data-value` (`#records`, `#status-200`, `#error-dns`,
//! `#mime-text/html`, `#host-HOST-urls`, `#chain-hops-2`), as on the live
//! page. One small inline script ([`SORT`]) sorts the hosts' table by the
//! column clicked (or named in the address: `#sort=errors`); without it
//! the table is in its first order (most URLs first), every number shown.
//!
//! Not the counting (`mod.rs`).

use std::fmt::Write;

use super::chains::{Chains, End};
use super::{HostRow, Tally};

/// The live page's styles, shared.
const STYLES: &str = include_str!("../serve/page/status.css");
/// Hosts in the hosts' table: the most of each column's, together (so a
/// sort by any column shows its true top ones).
const HOST_ROWS: usize = 200;
/// Hosts in the table of the slowest.
const SLOWEST: usize = 20;
/// The columns of the hosts' table: id, head.
const HOST_COLUMNS: [(&str, &str); 6] = [
    ("urls", "URLs"),
    ("errors", "errors"),
    ("redirects", "redirects"),
    ("bytes", "received"),
    ("mean", "mean ms"),
    ("max", "max ms"),
];
/// Sorts a `table.sortable` by the column whose head is clicked (again:
/// the other way; numbers largest first, text A to Z), by each cell's
/// `data-value` or text; `#sort=COLUMN` in the address sorts on load.
const SORT: &str = r#"<script>
"use strict";
(function () {
  function sort(table, th, down) {
    const i = th.cellIndex, body = table.tBodies[0];
    const key = (tr) => tr.cells[i].dataset.value ?? tr.cells[i].textContent;
    const rows = Array.from(body.rows).sort((a, b) => {
      const x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
      const c = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
      return down ? -c : c;
    });
    body.append(...rows);
    for (const h of th.parentNode.cells) delete h.dataset.order;
    th.dataset.order = down ? "down" : "up";
  }
  for (const table of document.querySelectorAll("table.sortable")) {
    table.tHead.addEventListener("click", (e) => {
      const th = e.target.closest("th");
      if (th) sort(table, th, th.dataset.order ? th.dataset.order === "up" : th.dataset.key !== "host");
    });
    const want = /^#sort=(\w+)$/.exec(location.hash);
    const th = want && table.tHead.querySelector("th[data-key='" + want[1] + "']");
    if (th) sort(table, th, th.dataset.key !== "host");
  }
})();
</script>"#;
/// The most points a chart draws (seconds are summed into wider steps).
const POINTS: usize = 1200;

/// The page for `t`, read from `files`.
pub fn page(t: &Tally, files: &[String]) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let first = t.seconds.keys().next().copied().unwrap_or(0);
    let last = t.seconds.keys().next_back().copied().unwrap_or(0);
    let span = (last - first + 1).max(1) as u64;
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>ringcrawl report</title><style>{STYLES}</style></head><body>\
         <header><h1>ringcrawl report</h1><span>{}</span></header><main>\
         <section class=\"tiles\">",
        escape(&files.join(", "))
    );
    let int = |n: u64| group(n);
    for (id, label, value, shown) in [
        ("records", "records", t.records, int(t.records)),
        ("bytes", "received", t.bytes, bytes(t.bytes)),
        ("errors", "errors", t.errors, int(t.errors)),
        ("redirects", "redirects", t.redirects, int(t.redirects)),
        (
            "hosts",
            "hosts",
            t.hosts.len() as u64,
            int(t.hosts.len() as u64),
        ),
        ("duration", "seconds", span, int(span)),
        (
            "rate",
            "pages/s (mean)",
            t.records / span,
            int(t.records / span),
        ),
        (
            "unreadable",
            "unreadable lines",
            t.unreadable,
            int(t.unreadable),
        ),
    ] {
        let _ = write!(
            h,
            "<div><label>{label}</label><b id=\"{id}\" data-value=\"{value}\">{shown}</b></div>"
        );
    }
    h.push_str("</section><section class=\"charts\">");
    let steps = series(t, first, span);
    chart(&mut h, "pages/s", "chart-pages", &steps, |s| s.0, group);
    chart(&mut h, "bytes/s", "chart-bytes", &steps, |s| s.1, bytes);
    h.push_str("</section><section class=\"tables\">");
    let rows = |map: &mut dyn Iterator<Item = (String, u64)>| map.collect::<Vec<_>>();
    table(
        &mut h,
        "status",
        "status",
        &rows(&mut t.statuses.iter().map(|(s, n)| (s.to_string(), *n))),
    );
    table(
        &mut h,
        "errors by kind",
        "error",
        &rows(&mut t.error_kinds.iter().map(|(k, n)| (k.clone(), *n))),
    );
    let mut mime: Vec<(String, u64)> = t.mime.iter().map(|(k, n)| (k.clone(), *n)).collect();
    mime.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    table(&mut h, "by MIME type", "mime", &mime);
    let mut hosts: Vec<(&String, &HostRow)> = t.hosts.iter().collect();
    hosts.sort_by(|a, b| mean(b.1).total_cmp(&mean(a.1)).then_with(|| a.0.cmp(b.0)));
    slowest(&mut h, hosts.iter().take(SLOWEST));
    chains(&mut h, &t.chains);
    h.push_str("</section><section class=\"tables\">");
    host_table(&mut h, &mut hosts);
    h.push_str("</section></main>");
    h.push_str(SORT);
    h.push_str("</body></html>\n");
    h
}

/// A host's value in a column of the hosts' table.
fn column(row: &HostRow, id: &str) -> f64 {
    match id {
        "urls" => row.urls as f64,
        "errors" => row.errors as f64,
        "redirects" => row.redirects as f64,
        "bytes" => row.bytes as f64,
        "mean" => mean(row),
        _ => row.max_ms,
    }
}

/// The hosts' table, sortable: the [`HOST_ROWS`] most of each column
/// (`hosts` is reordered), most URLs first.
fn host_table(h: &mut String, hosts: &mut [(&String, &HostRow)]) {
    let mut shown = std::collections::BTreeSet::new();
    for (id, _) in HOST_COLUMNS {
        hosts.sort_by(|a, b| {
            column(b.1, id)
                .total_cmp(&column(a.1, id))
                .then_with(|| a.0.cmp(b.0))
        });
        shown.extend(hosts.iter().take(HOST_ROWS).map(|(host, _)| *host));
    }
    hosts.sort_by(|a, b| b.1.urls.cmp(&a.1.urls).then_with(|| a.0.cmp(b.0)));
    let _ = write!(
        h,
        "<div class=\"wide\"><h2>hosts: <span id=\"hosts-shown\" data-value=\"{n}\">{n}</span> \
         of {all} (the most of each column; click a column's head to sort by it)</h2>\
         <table id=\"hosts-table\" class=\"sortable\"><thead><tr><th data-key=\"host\">host</th>",
        n = shown.len(),
        all = group(hosts.len() as u64),
    );
    for (id, head) in HOST_COLUMNS {
        let _ = write!(h, "<th class=\"n\" data-key=\"{id}\">{head}</th>");
    }
    h.push_str("</tr></thead><tbody>");
    for (host, row) in hosts.iter().filter(|(host, _)| shown.contains(host)) {
        let host = escape(host);
        let _ = write!(h, "<tr><td>{host}</td>");
        for (id, _) in HOST_COLUMNS {
            let value = column(row, id);
            let text = match id {
                "bytes" => bytes(row.bytes),
                "mean" | "max" => format!("{value:.1}"),
                _ => group(value as u64),
            };
            let exact = match id {
                "mean" | "max" => format!("{value:.3}"),
                _ => format!("{}", value as u64),
            };
            let _ = write!(
                h,
                "<td class=\"n\" id=\"host-{host}-{id}\" data-value=\"{exact}\">{text}</td>"
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></div>");
}

/// The slowest hosts by mean fetch time.
fn slowest<'a>(h: &mut String, rows: impl Iterator<Item = &'a (&'a String, &'a HostRow)>) {
    h.push_str(
        "<div><h2>slowest hosts (mean ms)</h2><table><tr><td>host</td><td class=\"n\">URLs</td>\
         <td class=\"n\">mean ms</td><td class=\"n\">max ms</td></tr>",
    );
    for (host, row) in rows {
        let host = escape(host);
        let _ = write!(
            h,
            "<tr><td>{host}</td><td class=\"n\" id=\"slow-{host}-urls\" data-value=\"{}\">{}</td>\
             <td class=\"n\" id=\"slow-{host}-mean\" data-value=\"{:.3}\">{:.1}</td>\
             <td class=\"n\">{:.1}</td></tr>",
            row.urls,
            group(row.urls),
            mean(row),
            mean(row),
            row.max_ms
        );
    }
    h.push_str("</table></div>");
}

/// The redirect chains: how many, by length, and the longest.
fn chains(h: &mut String, c: &Chains) {
    let _ = write!(h, "<div><h2>redirect chains</h2><table>");
    for (id, label, n) in [
        ("chains", "chains", c.count()),
        ("chain-loops", "loops", c.loops),
        ("chain-errors", "ending in an error", c.errors),
        (
            "chain-unresolved",
            "end not recorded after them",
            c.unresolved,
        ),
        ("chain-joined", "joined another", c.joined),
        (
            "chain-not-followed",
            "not followed (too many open)",
            c.not_followed,
        ),
    ] {
        let _ = write!(
            h,
            "<tr><td>{label}</td><td class=\"n\" id=\"{id}\" data-value=\"{n}\">{}</td></tr>",
            group(n)
        );
    }
    h.push_str("</table></div>");
    let by_hops: Vec<(String, u64)> = c.by_hops.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    table(h, "chains by redirects", "chain-hops", &by_hops);
    h.push_str("<div class=\"wide\"><h2>longest redirect chains</h2><table>");
    for (i, chain) in c.longest.iter().enumerate() {
        let how = match &chain.how {
            End::Page(Some(status)) => status.to_string(),
            End::Page(None) => "no answer".to_string(),
            End::Error(kind) => kind.clone(),
            End::Loop => "loop".to_string(),
            End::Unresolved => "end not recorded after it".to_string(),
        };
        let bad = match &chain.how {
            End::Page(Some(status)) => *status >= 400,
            End::Page(None) => false,
            _ => true,
        };
        let _ = write!(
            h,
            "<tr{}><td class=\"n\" id=\"chain-longest-{i}\" data-value=\"{}\">{}</td>\
             <td>{} &rarr; {}</td><td>{}</td></tr>",
            if bad { " class=\"bad\"" } else { "" },
            chain.hops,
            chain.hops,
            escape(&chain.start),
            escape(&chain.end),
            escape(&how),
        );
    }
    if c.longest.is_empty() {
        h.push_str("<tr><td>none</td></tr>");
    }
    h.push_str("</table></div>");
}

/// Mean fetch time of a host's URLs, ms.
fn mean(row: &HostRow) -> f64 {
    row.total_ms / row.urls.max(1) as f64
}

/// Pages and bytes a second, in at most [`POINTS`] steps: (seconds from
/// the start, pages/s, bytes/s).
fn series(t: &Tally, first: i64, span: u64) -> Vec<(f64, f64, f64)> {
    let width = span.div_ceil(POINTS as u64).max(1);
    let mut steps = vec![(0u64, 0u64); span.div_ceil(width) as usize];
    for (second, (pages, bytes)) in &t.seconds {
        let at = ((second - first) as u64 / width) as usize;
        if let Some(step) = steps.get_mut(at) {
            step.0 += pages;
            step.1 += bytes;
        }
    }
    let w = width as f64;
    steps
        .iter()
        .enumerate()
        .map(|(i, (p, b))| (i as f64 * w, *p as f64 / w, *b as f64 / w))
        .collect()
}

/// An SVG line of `value` over the steps.
fn chart(
    h: &mut String,
    caption: &str,
    id: &str,
    steps: &[(f64, f64, f64)],
    value: impl Fn(&(f64, f64)) -> f64,
    unit: fn(u64) -> String,
) {
    let (w, ht) = (600.0, 160.0);
    let points: Vec<(f64, f64)> = steps.iter().map(|s| (s.0, value(&(s.1, s.2)))).collect();
    let max = points.iter().map(|p| p.1).fold(1.0, f64::max);
    let end = points.last().map_or(1.0, |p| p.0.max(1.0));
    let line: Vec<String> = points
        .iter()
        .map(|(x, v)| {
            format!(
                "{:.1},{:.1}",
                x / end * w,
                ht - 14.0 - v / max * (ht - 24.0)
            )
        })
        .collect();
    let _ = write!(
        h,
        "<figure><figcaption>{caption}</figcaption><svg id=\"{id}\" data-points=\"{}\" \
         viewBox=\"0 0 600 160\" preserveAspectRatio=\"none\">\
         <line x1=\"0\" x2=\"600\" y1=\"146\" y2=\"146\"></line>\
         <text x=\"4\" y=\"158\">max {}/s over {} s</text>\
         <polyline points=\"{}\"></polyline></svg></figure>",
        points.len(),
        unit(max.round() as u64),
        group(end as u64),
        line.join(" ")
    );
}

/// A table of (label, count) with bars; each count's id is `prefix-label`.
fn table(h: &mut String, title: &str, prefix: &str, rows: &[(String, u64)]) {
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let _ = write!(h, "<div><h2>{title}</h2><table>");
    for (label, n) in rows {
        let _ = write!(
            h,
            "<tr><td>{l}</td><td class=\"n\" id=\"{prefix}-{l}\" data-value=\"{n}\">{}</td>\
             <td class=\"bar\"><i style=\"width:{:.1}%\"></i></td></tr>",
            group(*n),
            100.0 * *n as f64 / max as f64,
            l = escape(label),
        );
    }
    if rows.is_empty() {
        h.push_str("<tr><td>none</td></tr>");
    }
    h.push_str("</table></div>");
}

/// `n` with thousands separators.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units.
fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{n} B"),
        _ => format!("{v:.1} {}", units.get(unit).copied().unwrap_or("")),
    }
}

/// Text for HTML (element content and quoted attributes).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_holds_every_number_and_escapes_what_records_say() {
        let mut t = Tally::default();
        t.line(r#"{"url":"http://a.test/","status":200,"size":2048,"content_type":"text/<b>","timestamp":"2026-11-27T09:50:20.123Z","elapsed_ms":2.0}"#);
        t.line(r#"{"url":"http://a.test/x","status":404,"size":1,"timestamp":"2026-11-27T09:50:22.900Z","elapsed_ms":1.0}"#);
        let page = page(&t, &["r.jsonl".to_string()]);
        assert!(page.contains(r#"id="records" data-value="2""#), "{page}");
        assert!(page.contains(r#"id="status-404" data-value="1""#));
        assert!(page.contains(r#"id="host-a.test-urls" data-value="2""#));
        assert!(page.contains(r#"id="host-a.test-max" data-value="2.000""#));
        assert!(page.contains(r#"id="chains" data-value="0""#));
        assert!(page.contains(r#"<th class="n" data-key="errors">"#));
        assert!(page.contains("text/&lt;b&gt;") && !page.contains("text/<b>"));
        assert!(page.contains(r#"id="duration" data-value="3""#));
        assert!(page.contains(r#"data-points="3""#), "a point a second");
        assert_eq!(
            (group(1234567), bytes(2048)),
            ("1,234,567".into(), "2.0 KiB".into())
        );
    }
}

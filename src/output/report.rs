//! The end report as text for people (stderr): the chapter's first line
//! and a few more, sizes in binary units (KiB, MiB, GiB) only.
//!
//! Not the numbers themselves (`stats.rs` counts them; `--report-json`
//! writes them as they are) nor what the binary says after it (the exit
//! code's line).

use std::fmt::Write as _;

use crate::output::stats::Summary;

/// The end report as people read it: the chapter's line, then bytes,
/// latencies, DNS, shard balance and memory. Its first line says
/// `Finished`, or `Interrupted` when a signal (or an `Interrupt`) stopped
/// the crawl.
impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&text(self))
    }
}

fn text(r: &Summary) -> String {
    let interrupted = r.interrupted;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} urls in {:.3} secs ({:.1} urls/sec)",
        if interrupted {
            "Interrupted after"
        } else {
            "Finished"
        },
        r.urls,
        r.elapsed_s,
        r.urls_per_s
    );
    let _ = writeln!(
        out,
        "  html {}  other {}  redirect {}  error {}  cut at a limit {}  incomplete {}",
        r.html, r.other, r.redirects, r.errors, r.truncated_by_limit, r.truncated_in_transfer
    );
    if !r.errors_by_kind.is_empty() {
        let _ = writeln!(out, "  errors: {}", counts(&r.errors_by_kind));
    }
    if !r.warnings_by_kind.is_empty() {
        let _ = writeln!(out, "  warnings: {}", counts(&r.warnings_by_kind));
    }
    let statuses: Vec<String> = r
        .statuses
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let _ = writeln!(
        out,
        "  status: {}",
        if statuses.is_empty() {
            "-".into()
        } else {
            statuses.join(", ")
        }
    );
    let per_s = if r.elapsed_s > 0.0 {
        r.bytes as f64 / r.elapsed_s
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "  {} received ({}/s), {} links",
        binary_size(r.bytes as f64),
        binary_size(per_s),
        r.links
    );
    if r.skipped_depth + r.skipped_url_length + r.skipped_host_full > 0 {
        let _ = writeln!(
            out,
            "  not queued: {} past --max-depth, {} past --max-url-length, {} past --max-pages-per-host",
            r.skipped_depth, r.skipped_url_length, r.skipped_host_full
        );
    }
    if r.backed_off.count > 0 {
        let named: Vec<String> = r
            .backed_off
            .hosts
            .iter()
            .map(|b| format!("{} ({})", b.host, b.failures))
            .collect();
        let _ = writeln!(
            out,
            "  backed off: {} times a host failed {} times in a row; most: {}",
            r.backed_off.count,
            crate::output::backoffs::BACKED_OFF_AFTER,
            named.join(", ")
        );
    }
    let v = &r.revalidations;
    if !v.is_empty() {
        let _ = writeln!(
            out,
            "  recrawl: {} unchanged (304, {} not sent again), {} changed, {} fetched again in full",
            v.not_modified,
            binary_size(v.bytes_saved as f64),
            v.modified,
            v.refetched
        );
    }
    for p in &r.proxies {
        let _ = writeln!(
            out,
            "  proxy {}: {} fetches, {} failed, parked {} times{}",
            p.proxy,
            p.fetches,
            p.failures,
            p.parked_times,
            if p.parked { " (parked at the end)" } else { "" }
        );
    }
    if r.spill_lost > 0 {
        let _ = writeln!(
            out,
            "  lost: {} queued URLs the spill could not read back (not fetched)",
            r.spill_lost
        );
    }
    let d = &r.dns;
    if d.lookups + d.cache_hits + d.negative_hits > 0 {
        let per_s = if r.elapsed_s > 0.0 {
            d.queries as f64 / r.elapsed_s
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "  dns: {} lookups, {} queries ({per_s:.1}/s), {} answers, {} time-outs, \
             {} cache hits, {} negative hits, {} waited for a slot, {} answered on one family",
            d.lookups,
            d.queries,
            d.answers,
            d.timeouts,
            d.cache_hits,
            d.negative_hits,
            d.waited,
            d.early
        );
    }
    for (name, p) in [
        ("connect", &r.connect),
        ("first byte", &r.first_byte),
        ("total", &r.total),
    ] {
        if p.count > 0 {
            let _ = writeln!(
                out,
                "  {name:<10} ms  p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
                p.p50_ms, p.p90_ms, p.p99_ms, p.max_ms
            );
        }
    }
    if r.shards.len() > 1 {
        let shards: Vec<String> = r
            .shards
            .iter()
            .enumerate()
            .map(|(i, s)| format!("#{i} {} urls {:.0} ms cpu", s.urls, s.cpu_ms))
            .collect();
        let _ = writeln!(out, "  shards: {}", shards.join(" | "));
    }
    if r.peak_rss_kib > 0 {
        let _ = writeln!(
            out,
            "  peak RSS {}",
            binary_size(r.peak_rss_kib as f64 * 1024.0)
        );
    }
    out
}

/// `kind n, kind n`.
fn counts<K: std::fmt::Display>(map: &std::collections::BTreeMap<K, u64>) -> String {
    let kinds: Vec<String> = map.iter().map(|(k, v)| format!("{k} {v}")).collect();
    kinds.join(", ")
}

/// Bytes in the largest binary unit that keeps them at 1 or more: `512 B`,
/// `1.5 KiB`, `9.6 MiB`, `2.0 GiB`, `1.1 TiB`.
pub(crate) fn binary_size(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024.0 {
        return format!("{bytes:.0} B");
    }
    let mut value = bytes / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    format!("{value:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record::Record;
    use crate::output::stats::Stats;
    use std::time::Duration;

    #[test]
    fn sizes_are_shown_in_binary_units_only() {
        assert_eq!(binary_size(0.0), "0 B");
        assert_eq!(binary_size(1023.0), "1023 B");
        assert_eq!(binary_size(1536.0), "1.5 KiB");
        assert_eq!(binary_size(10_027_981.0), "9.6 MiB");
        assert_eq!(binary_size(3.0 * 1024.0 * 1024.0 * 1024.0), "3.0 GiB");
        assert_eq!(binary_size(2.0 * 1024f64.powi(4)), "2.0 TiB");
        assert_eq!(binary_size(5.0 * 1024f64.powi(5)), "5120.0 TiB");
    }

    fn page() -> Record {
        let mut r = Record::new("http://a.test/".into(), 0);
        r.status = Some(200);
        r.size = 3 << 20;
        r.content_type = Some("text/html".into());
        r
    }

    #[test]
    fn an_interrupted_crawl_does_not_say_it_finished() {
        let mut s = Stats::default();
        s.add(&page());
        let text = s.report_data(Duration::from_secs(1), true).to_string();
        assert!(
            text.starts_with("Interrupted after 1 urls in 1.000 secs"),
            "{text}"
        );
        let text = s.report_data(Duration::from_secs(1), false).to_string();
        assert!(text.starts_with("Finished 1 urls"), "{text}");
    }

    #[test]
    fn bytes_have_one_unit_system_and_no_raw_count() {
        let mut s = Stats::default();
        s.add(&page());
        let text = s.report_data(Duration::from_secs(2), false).to_string();
        assert!(
            text.contains("  3.0 MiB received (1.5 MiB/s), 0 links"),
            "{text}"
        );
        assert!(!text.contains(" MB"), "{text}");
        assert!(!text.contains("bytes"), "{text}");
    }

    #[test]
    fn bodies_cut_at_a_limit_and_cut_in_transfer_are_counted_apart() {
        use crate::output::record::{CUT_AT_LIMIT, CUT_IN_TRANSFER};
        let mut s = Stats::default();
        let mut capped = page();
        capped.cut(CUT_AT_LIMIT);
        let mut short = page();
        short.cut(CUT_IN_TRANSFER);
        short.cut(CUT_AT_LIMIT);
        s.add(&capped);
        s.add(&short);
        s.add(&page());
        let text = s.report_data(Duration::from_secs(1), false).to_string();
        assert!(text.contains("cut at a limit 1  incomplete 1"), "{text}");
        assert!(!text.contains("truncated"), "{text}");
        let data = s.report_data(Duration::from_secs(1), false);
        assert_eq!(
            (
                data.truncated,
                data.truncated_by_limit,
                data.truncated_in_transfer
            ),
            (2, 1, 1)
        );
        assert_eq!(
            short.truncated_by.as_deref(),
            Some(CUT_IN_TRANSFER),
            "the first reason stays"
        );
    }

    #[test]
    fn warnings_are_listed_apart_from_errors() {
        let mut s = Stats::default();
        let mut r = page();
        r.warn("tls_certificate_untrusted", "unknown issuer");
        s.add(&r);
        let text = s.report_data(Duration::from_secs(1), false).to_string();
        assert!(text.contains("error 0"), "{text}");
        assert!(!text.contains("errors:"), "{text}");
        assert!(
            text.contains("  warnings: tls_certificate_untrusted 1\n"),
            "{text}"
        );
    }
}

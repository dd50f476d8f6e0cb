//! The line the binary prints when a crawl fetched nothing: which roots
//! failed and why, from the report's [`Summary`], and what may help.
//!
//! Not the exit code (main.rs maps the outcome to it) nor the report.

use ringcrawl::{StartFailure, Summary};

/// `URL: why; URL: why` for the roots (and seeds, and their redirects'
/// targets) that got no page, the first of each origin; the counts by
/// kind and status if none was kept. A sitemap the crawl guessed is not
/// among them: nobody asked for it.
pub fn failed_starts(summary: &Summary) -> String {
    if summary.failed_starts.is_empty() {
        let mut counts: Vec<String> = summary
            .errors_by_kind
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        counts.extend(
            summary
                .statuses
                .iter()
                .map(|(s, n)| format!("status {s}: {n}")),
        );
        return counts.join(", ");
    }
    let mut lines: Vec<String> = summary.failed_starts.iter().map(describe).collect();
    if lines.len() == ringcrawl::MAX_FAILED_STARTS {
        lines.push("...".to_string());
    }
    lines.join("; ")
}

/// When a root's server answered with a certificate this crawl does not
/// trust: that, and the flags that help, in words.
pub fn untrusted_certificate(summary: &Summary) -> Option<String> {
    let refused = summary
        .failed_starts
        .iter()
        .find(|f| f.error_kind == Some(ringcrawl::ErrorKind::TlsCertificate))?;
    Some(format!(
        "the server of {} answered with a certificate that is not trusted ({}): \
         trust its CA with --ca-cert FILE, or fetch anyway with --insecure",
        refused.url,
        refused.error.as_deref().unwrap_or("refused")
    ))
}

fn describe(failure: &StartFailure) -> String {
    match (&failure.error, failure.status) {
        (Some(error), _) => format!("{}: {error}", failure.url),
        (None, Some(status)) => format!("{}: status {status}", failure.url),
        (None, None) => format!(
            "{}: {}",
            failure.url,
            failure
                .error_kind
                .map_or("failed".to_string(), |k| k.to_string())
        ),
    }
}

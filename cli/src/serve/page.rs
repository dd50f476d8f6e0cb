//! The live status pages at `/`, a crawl's and a cluster crawl's: an HTML
//! file and a script each, the script and the styles they share
//! (`common.js`, `status.css`), all inside the binary (`include_str!`), so
//! the pages work offline, on a machine reached over a tunnel, with no CDN. The page as served holds
//! the numbers of the moment (`/status.json`'s, in a
//! `<script type="application/json">`), so it is whole as soon as it
//! loads; its script then polls `/status.json` each second.
//!
//! The charts are hand-drawn SVG (polylines and bars, some 70 lines of
//! the script), not a charting library: three time series (pages/s,
//! bytes/s, and each second's latency percentiles) and a few bar tables
//! (among them the top hosts) need no more, and vendoring one (uPlot is ~50 KB with its CSS
//! and licence) would be code to keep up to date for nothing the page
//! uses.
//!
//! Not the numbers (`/status.json`, `history.rs`) nor the server.

/// The crawl page's script.
pub const SCRIPT: &str = include_str!("page/status.js");
/// The cluster page's script.
pub const CLUSTER_SCRIPT: &str = include_str!("page/cluster.js");
/// What both scripts use: formats, tables, charts, the polling loop.
pub const COMMON: &str = include_str!("page/common.js");
/// The pages' styles.
pub const STYLES: &str = include_str!("page/status.css");
/// The files both servers serve as they are, by path: their content type
/// and bytes (each page loads the scripts and styles it needs).
pub fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    const JS: &str = "text/javascript; charset=utf-8";
    match path {
        "/status.js" => Some((JS, SCRIPT)),
        "/cluster.js" => Some((JS, CLUSTER_SCRIPT)),
        "/common.js" => Some((JS, COMMON)),
        "/status.css" => Some(("text/css; charset=utf-8", STYLES)),
        _ => None,
    }
}

/// The crawl's page, where `<!--STATUS-->` stands for the numbers.
pub const CRAWL: &str = include_str!("page/index.html");
/// The cluster crawl's page, the same way.
pub const CLUSTER: &str = include_str!("page/cluster.html");

/// `page` (one of the pages above) with `status_json` (the body of
/// `/status.json`) inside it.
pub fn html(page: &str, status_json: &[u8]) -> String {
    let json = String::from_utf8_lossy(status_json);
    // Inside a <script> element "</" would end it: JSON lets "/" be
    // written "\/".
    let data = format!(
        "<script id=\"status-data\" type=\"application/json\">{}</script>",
        json.replace("</", "<\\/")
    );
    page.replacen("<!--STATUS-->", &data, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_numbers_go_inside_the_page_and_cannot_end_their_script() {
        let page = html(CRAWL, br#"{"now":{"x":"</script><b>"}}"#);
        assert!(
            page.contains(r#"{"now":{"x":"<\/script><b>"}}</script>"#),
            "{page}"
        );
        assert!(!page.contains("<!--STATUS-->"));
        assert!(page.contains(r#"<script src="/status.js">"#));
    }

    #[test]
    fn both_pages_load_the_shared_script_first_and_have_a_place_for_the_numbers() {
        for (page, own) in [(CRAWL, "/status.js"), (CLUSTER, "/cluster.js")] {
            assert!(page.contains("<!--STATUS-->"));
            let common = page.find(r#"<script src="/common.js">"#).unwrap();
            let script = page.find(&format!(r#"<script src="{own}">"#)).unwrap();
            assert!(common < script, "{own}");
        }
    }
}

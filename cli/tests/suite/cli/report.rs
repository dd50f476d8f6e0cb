//! The end report and the records, as a user reads them: a body cut at
//! `--max-body` and one the connection cut short have names of their own.

use std::sync::Arc;

use ringcrawl_site::server::{Reply, Request, Server, Step};

use super::ringcrawl;

#[test]
fn a_body_cut_at_max_body_and_one_cut_in_transfer_are_told_apart() {
    let server = Server::start(Arc::new(|req: &Request| match req.path.as_str() {
        "/" => Reply::html(200, "<a href=\"/big\">b</a><a href=\"/short\">s</a>"),
        "/big" => Reply::html(200, vec![b'x'; 64 * 1024]),
        // Says 1000 bytes, sends 10, closes.
        _ => Reply::Script(vec![
            Step::Write(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n0123456789"
                    .to_vec(),
            ),
            Step::Close,
        ]),
    }))
    .unwrap();
    let root = format!("http://{}/", server.addr());
    let out = ringcrawl(&[
        "--ignore-robots",
        "--no-sitemaps",
        "--max-tries",
        "1",
        "--max-body",
        "16K",
        "-o",
        "-",
        &root,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let records: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by = |path: &str| {
        records
            .iter()
            .find(|r| r["url"].as_str().unwrap().ends_with(path))
            .unwrap_or_else(|| panic!("no record of {path}: {records:?}"))
            .clone()
    };
    let big = by("/big");
    assert_eq!(
        (big["truncated"].as_bool(), big["truncated_by"].as_str()),
        (Some(true), Some("limit")),
        "{big}"
    );
    assert!(big["error_kind"].is_null(), "{big}");
    let short = by("/short");
    assert_eq!(
        (short["truncated"].as_bool(), short["truncated_by"].as_str()),
        (Some(true), Some("transfer")),
        "{short}"
    );
    let whole = by(&root);
    assert!(whole.get("truncated_by").is_none(), "{whole}");
    assert!(
        stderr.contains("cut at a limit 1  incomplete 1"),
        "{stderr}"
    );
}

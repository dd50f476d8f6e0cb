//! The `ringcrawl` binary as a user meets it: exit codes, one-line errors,
//! the demo crawl and its report, JSON Lines output.

use std::process::Command;

fn ringcrawl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(args)
        .output()
        .expect("binary runs")
}

#[test]
fn bad_flags_give_a_one_line_error_and_exit_code_2() {
    for args in [
        vec!["--exclude", "(", "example.com"],
        vec!["--max-tasks", "0", "example.com"],
        vec!["--resolve", "bad", "example.com"],
        vec!["ftp://example.com/"],
        vec!["http://"],
        vec![],
    ] {
        let out = ringcrawl(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let out = ringcrawl(&["--no-such-flag", "example.com"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn demo_crawl_finds_every_page_and_reports() {
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("records.jsonl");
    let out = ringcrawl(&["--demo", "300", "--output", jsonl.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Finished "), "{stderr}");
    assert!(stderr.contains(" 0 missing, 0 unexpected"), "{stderr}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("whole JSON line"))
        .collect();
    assert!(records.len() > 300);
    assert!(records
        .iter()
        .all(|r| r["url"].is_string() && r.get("num_new_urls").is_some()));
    std::fs::remove_dir_all(&dir).ok();
}

//! The programs in examples/ run against the synthetic site and do what
//! they say. `cargo test` builds them next to the test binaries.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};

/// target/<profile>/examples/<name>, beside target/<profile>/deps/<test>.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().unwrap().parent().unwrap();
    profile.join("examples").join(name)
}

fn run(name: &str, root: &str, dir: &std::path::Path) -> String {
    let out = Command::new(example(name))
        .arg(root)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e} (`cargo test --workspace` builds the examples; `--test suite` alone does not)"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_examples_crawl_the_synthetic_site() {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 200,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).unwrap();
    let root = format!("http://{}/", server.addr());
    let dir = std::env::temp_dir().join(format!("ringcrawl-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The site's URLs and the root's guessed /sitemap.xml (a 404: the
    // synthetic site has none).
    let urls = site.expected_paths().len() + 1;

    let counts = run("status_counts", &root, &dir);
    assert!(counts.contains(&format!("{urls} URLs in")), "{counts}");
    assert!(
        counts.lines().any(|l| l.trim().starts_with("200 ")),
        "{counts}"
    );

    let titles = run("titles_csv", &root, &dir);
    assert!(titles.contains(&format!("{urls} URLs")), "{titles}");
    let csv = std::fs::read_to_string(dir.join("titles.csv")).unwrap();
    assert!(csv.starts_with("url,title\n"), "{csv}");
    assert!(csv.lines().count() > 200, "a title per HTML page");

    // The site has no /docs/: the rule leaves the root alone (and its
    // guessed sitemap, which is no link).
    let docs = run("docs_only", &root, &dir);
    assert!(docs.contains(&format!("200 {root}\n")), "{docs}");
    assert!(docs.contains(&format!("404 {root}sitemap.xml\n")), "{docs}");
    assert!(docs.contains("2 URLs in"), "{docs}");

    // The same count as status_counts, from pages read as a Stream in a
    // tokio runtime and handed on through a tokio channel.
    let tokio = run("tokio_stream", &root, &dir);
    assert!(tokio.contains(&format!("{urls} URLs in")), "{tokio}");
    let statuses = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.contains("URLs in"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(statuses(&tokio), statuses(&counts), "{tokio}");
    std::fs::remove_dir_all(&dir).ok();
}

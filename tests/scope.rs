//! The crawl's scope through the public API alone (`ringcrawl::Scope`,
//! `Crawler::scope`): which URLs a crawl keeps, asked of a built crawl
//! and of a scope made from roots, as a library user asks it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test's helpers may panic too (clippy.toml allows it only in #[test] functions)"
)]

use ringcrawl::{Crawler, Scope, ScopeMode, Setting, Url};

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

#[test]
fn a_built_crawl_says_which_links_it_would_follow() {
    let crawler = Crawler::builder()
        .root("example.com/docs/")
        .scope(ScopeMode::Lenient)
        .exclude(r"\.pdf$")
        .include("/docs/")
        .no_parent(true)
        .build()
        .unwrap();
    let scope = crawler.scope();
    assert_eq!(scope.mode(), ScopeMode::Lenient);
    assert_eq!(scope.exclude(), Some(r"\.pdf$"));
    assert_eq!(scope.include(), ["/docs/"]);
    assert!(scope.no_parent());
    assert!(scope.allows(&url("http://example.com/docs/a.html")));
    assert!(scope.allows(&url("https://www.example.com/docs/b")));
    assert!(
        !scope.allows(&url("http://example.com/docs/a.pdf")),
        "excluded"
    );
    assert!(
        !scope.allows(&url("http://example.com/blog/docs/")),
        "a parent"
    );
    assert!(
        scope.allows(&url("http://api.example.com/x/docs/")),
        "a lenient sibling is not held to no_parent"
    );
    assert!(
        !scope.allows(&url("http://other.test/docs/")),
        "another site"
    );
    // A root, a seed or a sitemap needs the host rule and exclude alone;
    // a page requisite only exclude.
    assert!(scope.allows_start(&url("http://example.com/blog/")));
    assert!(!scope.allows_start(&url("http://other.test/docs/")));
    assert!(scope.allows_embed(&url("http://cdn.other.test/logo.png")));
    assert!(!scope.allows_embed(&url("http://cdn.other.test/doc.pdf")));
    assert!(scope.allows_host("EXAMPLE.com."));
}

#[test]
fn a_scope_made_from_roots_keeps_their_hosts_by_its_mode() {
    let roots = [
        url("http://www.example.co.uk/"),
        url("http://127.0.0.1:8080/"),
    ];
    let strict = Scope::new(&roots, ScopeMode::Strict);
    assert!(
        strict.allows(&url("http://example.co.uk/x")),
        "the www twin"
    );
    assert!(!strict.allows(&url("http://blog.example.co.uk/x")));
    assert!(strict.allows(&url("http://127.0.0.1:9/x")), "any port");
    assert!(!strict.allows(&url("http://127.0.0.2/x")));
    let lenient = Scope::new(&roots, ScopeMode::Lenient);
    assert!(lenient.allows(&url("http://blog.example.co.uk/x")));
    assert!(
        !lenient.allows(&url("http://other.co.uk/x")),
        "a public suffix"
    );
    assert!(!Scope::new(&[], ScopeMode::Lenient).allows(&roots[0]));

    let excluding = strict.clone().excluding(r"\.(pdf|zip)$").unwrap();
    assert_eq!(excluding.exclude(), Some(r"\.(pdf|zip)$"));
    assert!(!excluding.allows(&url("http://example.co.uk/a.zip")));
    assert!(strict.allows(&url("http://example.co.uk/a.zip")));
    let refused = strict.excluding("(unclosed").unwrap_err();
    assert_eq!(refused.setting(), Setting::Exclude);
    assert!(!refused.problem().contains('\n'), "{refused}");
}

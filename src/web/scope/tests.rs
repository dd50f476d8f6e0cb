//! The scope's rules, by example: hosts, `--exclude`, `--include`,
//! `--no-parent`, and what starts a crawl versus what it follows.
use super::*;

fn u(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn scope(roots: &[&str], mode: ScopeMode) -> Scope {
    let roots: Vec<Url> = roots.iter().map(|r| u(r)).collect();
    Scope::build(&roots, mode, None)
}

fn check_table(scope: &Scope, table: &[(&str, bool)]) {
    for &(host, want) in table {
        assert_eq!(scope.allows_host(host), want, "host {host:?}");
        let url = u(&format!("http://{host}/some/path"));
        assert_eq!(scope.allows(&url), want, "url for {host:?}");
    }
}

#[test]
fn strict_allows_root_and_www_twin_only() {
    let s = scope(&["http://example.com/"], ScopeMode::Strict);
    check_table(
        &s,
        &[
            ("example.com", true),
            ("www.example.com", true),
            ("sub.example.com", false),
            ("www.www.example.com", false),
            ("wwwexample.com", false),
            ("example.org", false),
            ("notexample.com", false),
            ("com", false),
        ],
    );
}

#[test]
fn strict_www_root_allows_bare_host() {
    let s = scope(&["https://www.example.com/start"], ScopeMode::Strict);
    check_table(
        &s,
        &[
            ("www.example.com", true),
            ("example.com", true),
            ("blog.example.com", false),
            ("www.www.example.com", false),
        ],
    );
}

#[test]
fn strict_subdomain_root_does_not_allow_parent() {
    let s = scope(&["http://a.example.co.uk/"], ScopeMode::Strict);
    check_table(
        &s,
        &[
            ("a.example.co.uk", true),
            ("www.a.example.co.uk", true),
            ("example.co.uk", false),
            ("b.example.co.uk", false),
        ],
    );
}

#[test]
fn lenient_same_registrable_domain_under_co_uk() {
    let s = scope(&["http://a.example.co.uk/"], ScopeMode::Lenient);
    check_table(
        &s,
        &[
            ("a.example.co.uk", true),
            ("b.example.co.uk", true),
            ("example.co.uk", true),
            ("www.example.co.uk", true),
            ("deep.x.example.co.uk", true),
            ("other.co.uk", false),
            ("a.other.co.uk", false),
            ("co.uk", false),
            ("example.com", false),
        ],
    );
}

#[test]
fn lenient_root_on_registrable_domain() {
    let s = scope(&["http://example.co.uk/"], ScopeMode::Lenient);
    check_table(
        &s,
        &[
            ("example.co.uk", true),
            ("sub.example.co.uk", true),
            ("other.co.uk", false),
        ],
    );
    let s = scope(&["http://example.com/"], ScopeMode::Lenient);
    check_table(
        &s,
        &[
            ("example.com", true),
            ("www.example.com", true),
            ("a.b.example.com", true),
            ("evilexample.com", false),
            ("example.com.evil.org", false),
            ("example.org", false),
        ],
    );
}

#[test]
fn lenient_private_suffix_sites_are_separate() {
    // github.io is a public suffix: each user's site is its own domain.
    let s = scope(&["https://alice.github.io/"], ScopeMode::Lenient);
    check_table(
        &s,
        &[
            ("alice.github.io", true),
            ("www.alice.github.io", true),
            ("bob.github.io", false),
        ],
    );
}

#[test]
fn lenient_without_registrable_domain_falls_back_to_strict() {
    let s = scope(&["http://localhost:8080/"], ScopeMode::Lenient);
    check_table(
        &s,
        &[
            ("localhost", true),
            ("www.localhost", true),
            ("a.localhost", false),
            ("example.com", false),
        ],
    );
    let s = scope(&["http://co.uk/"], ScopeMode::Lenient);
    check_table(
        &s,
        &[
            ("co.uk", true),
            ("www.co.uk", true),
            ("example.co.uk", false),
        ],
    );
}

#[test]
fn ip_roots_match_exactly_in_both_modes() {
    for mode in [ScopeMode::Strict, ScopeMode::Lenient] {
        let s = scope(&["http://192.168.1.1:8080/", "http://[::1]/"], mode);
        check_table(
            &s,
            &[
                ("192.168.1.1", true),
                ("10.0.1.1", false),
                ("192.168.1.2", false),
                ("[::1]", true),
                ("[::2]", false),
            ],
        );
        assert!(!s.allows_host("www.192.168.1.1"));
    }
}

#[test]
fn ip_hosts_never_match_a_domain_root_leniently() {
    let s = scope(&["http://example.com/"], ScopeMode::Lenient);
    check_table(&s, &[("1.1.1.1", false), ("[::1]", false)]);
}

#[test]
fn port_is_ignored() {
    let s = scope(&["http://example.com:8080/"], ScopeMode::Strict);
    assert!(s.allows(&u("http://example.com/")));
    assert!(s.allows(&u("https://www.example.com:9999/x")));
    assert!(s.allows(&u("http://example.com:8080/y")));
    let s = scope(&["http://127.0.0.1:3000/"], ScopeMode::Strict);
    assert!(s.allows(&u("http://127.0.0.1:4000/")));
}

#[test]
fn exclude_regex_searches_anywhere_in_the_url() {
    let roots = [u("http://example.com/")];
    let s = Scope::build(
        &roots,
        ScopeMode::Strict,
        Some(Regex::new(r"logout|\.pdf$").unwrap()),
    );
    assert!(s.allows(&u("http://example.com/docs/")));
    assert!(!s.allows(&u("http://example.com/account/logout?x=1")));
    assert!(!s.allows(&u("http://example.com/files/report.pdf")));
    assert!(s.allows(&u("http://example.com/files/report.pdf.html")));
    // The host rule still applies first.
    assert!(!s.allows(&u("http://other.example/")));
    // allows_host ignores the regex.
    assert!(s.allows_host("example.com"));
}

#[test]
fn exclude_regex_sees_the_whole_url_text() {
    let roots = [u("http://example.com/")];
    let s = Scope::build(
        &roots,
        ScopeMode::Lenient,
        Some(Regex::new("^https:").unwrap()),
    );
    assert!(s.allows(&u("http://example.com/")));
    assert!(!s.allows(&u("https://example.com/")));
}

#[test]
fn multiple_roots_each_count() {
    let s = scope(
        &["http://example.com/", "https://shop.example.org/"],
        ScopeMode::Strict,
    );
    check_table(
        &s,
        &[
            ("example.com", true),
            ("shop.example.org", true),
            ("www.shop.example.org", true),
            ("example.org", false),
        ],
    );
}

#[test]
fn host_case_and_trailing_dot_are_ignored() {
    let s = scope(&["http://example.com/"], ScopeMode::Strict);
    assert!(s.allows_host("WWW.Example.COM"));
    assert!(s.allows_host("example.com."));
    let s = scope(&["http://example.co.uk/"], ScopeMode::Lenient);
    assert!(s.allows_host("Blog.EXAMPLE.co.uk"));
}

#[test]
fn urls_without_host_and_empty_hosts_are_refused() {
    let s = scope(&["http://example.com/"], ScopeMode::Lenient);
    assert!(!s.allows(&u("mailto:someone@example.com")));
    assert!(!s.allows(&u("data:text/plain,example.com")));
    assert!(!s.allows_host(""));
    assert!(!s.allows_host("."));
}

#[test]
fn no_roots_allow_nothing() {
    let s = Scope::build(&[], ScopeMode::Lenient, None);
    assert!(!s.allows(&u("http://example.com/")));
}

#[test]
fn odd_host_strings_do_not_panic() {
    let s = scope(&["http://example.com/"], ScopeMode::Lenient);
    for h in [
        "..",
        "...",
        "www.",
        "a..b",
        ".com",
        "é.example.com",
        "\u{0}",
        "[",
        "]:",
    ] {
        let _ = s.allows_host(h);
    }
}

fn narrowed(roots: &[&str], include: &[&str], no_parent: bool) -> Scope {
    let roots: Vec<Url> = roots.iter().map(|r| u(r)).collect();
    Scope::build(&roots, ScopeMode::Strict, None)
        .with_include(include.iter().map(|r| Regex::new(r).unwrap()).collect())
        .with_no_parent(no_parent)
}

#[test]
fn a_link_must_match_one_include_regex_to_be_followed() {
    let s = narrowed(&["http://example.com/"], &["/docs/", r"\.html$"], false);
    assert!(s.allows(&u("http://example.com/docs/a")));
    assert!(s.allows(&u("http://example.com/b.html")));
    assert!(!s.allows(&u("http://example.com/blog/")));
    // The host rule still comes first.
    assert!(!s.allows(&u("http://other.test/docs/")));
    assert_eq!(s.include(), vec!["/docs/", r"\.html$"]);
}

#[test]
fn roots_seeds_and_sitemaps_start_whatever_include_and_no_parent_say() {
    let s = narrowed(&["http://example.com/docs/"], &["/docs/api/"], true);
    assert!(!s.allows(&u("http://example.com/docs/")));
    assert!(s.allows_start(&u("http://example.com/docs/")));
    assert!(s.allows_start(&u("http://example.com/sitemap.xml")));
    // --exclude still applies to starts.
    let roots = [u("http://example.com/")];
    let s = Scope::build(
        &roots,
        ScopeMode::Strict,
        Some(Regex::new("sitemap").unwrap()),
    );
    assert!(!s.allows_start(&u("http://example.com/sitemap.xml")));
}

#[test]
fn no_parent_keeps_links_under_the_roots_directory_on_its_host() {
    let s = narrowed(&["http://example.com/docs/guide/index.html"], &[], true);
    assert!(s.allows(&u("http://example.com/docs/guide/")));
    assert!(s.allows(&u("http://example.com/docs/guide/part/2.html")));
    assert!(s.allows(&u("https://www.example.com:8443/docs/guide/x")));
    assert!(!s.allows(&u("http://example.com/docs/")));
    assert!(!s.allows(&u("http://example.com/docs/guide")));
    assert!(!s.allows(&u("http://example.com/")));
    assert!(!s.allows(&u("http://example.com/docs/guidebook/")));
    // Without it, the whole host.
    let s = narrowed(&["http://example.com/docs/guide/index.html"], &[], false);
    assert!(s.allows(&u("http://example.com/")));
}

#[test]
fn no_parent_takes_each_root_of_a_host_and_leaves_other_hosts_alone() {
    let roots: Vec<Url> = [
        "http://a.example.com/x/",
        "http://a.example.com/y/z",
        "http://b.example.com/q/",
    ]
    .iter()
    .map(|r| u(r))
    .collect();
    let s = Scope::build(&roots, ScopeMode::Lenient, None).with_no_parent(true);
    assert!(s.allows(&u("http://a.example.com/x/1")));
    assert!(s.allows(&u("http://a.example.com/y/2")));
    assert!(!s.allows(&u("http://a.example.com/z/")));
    assert!(!s.allows(&u("http://b.example.com/x/")));
    assert!(s.allows(&u("http://b.example.com/q/r")));
    // A sibling host in lenient scope, with no root of its own.
    assert!(s.allows(&u("http://c.example.com/anything")));
}

#[test]
fn a_scope_over_other_roots_keeps_its_rules() {
    let s = narrowed(&["http://example.com/docs/"], &["/docs/"], true);
    let wider = s.with_roots(&[u("http://example.com/docs/"), u("http://other.test/a/b")]);
    assert!(wider.no_parent());
    assert_eq!(wider.include(), vec!["/docs/"]);
    assert!(wider.allows(&u("http://other.test/a/docs/")));
    assert!(!wider.allows(&u("http://other.test/docs/")));
    assert!(!wider.allows(&u("http://other.test/a/x")));
}

#[test]
fn a_link_local_or_metadata_host_is_out_of_scope_unless_a_root_names_it() {
    let s = scope(&["http://example.com/"], ScopeMode::Lenient);
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://metadata.google.internal/computeMetadata/v1/",
    ] {
        // A page requisite may come from any host, a redirect may go
        // anywhere the rule allows: never to these.
        assert!(!s.allows_embed(&u(url)), "{url}");
        assert!(!s.allows_start(&u(url)), "{url}");
    }
    assert!(s.allows_embed(&u("http://cdn.test/i.png")));
    let named = scope(&["http://169.254.169.254/"], ScopeMode::Strict);
    assert!(named.allows(&u("http://169.254.169.254/latest/")));
    assert!(named.allows_embed(&u("http://169.254.169.254/x.png")));
    assert!(!named.allows_embed(&u("http://169.254.170.2/")));
}

#[test]
fn a_name_resolving_to_a_link_local_or_metadata_address_may_not_connect_unless_a_root_names_it() {
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let s = scope(&["http://example.com/"], ScopeMode::Lenient);
    for addr in ["169.254.169.254", "169.254.3.4", "fe80::1", "fd00:ec2::254"] {
        assert!(!s.may_connect("cdn.example.com", ip(addr)), "{addr}");
    }
    assert!(s.may_connect("cdn.example.com", ip("93.184.216.34")));
    assert!(s.may_connect("cdn.example.com", ip("::1")));
    // The root's own host: it names it.
    assert!(s.may_connect("example.com", ip("169.254.169.254")));
    // A root naming the host, or the address, lets it connect.
    let by_name = scope(&["http://metadata.internal.test/"], ScopeMode::Strict);
    assert!(by_name.may_connect("METADATA.internal.test.", ip("169.254.169.254")));
    assert!(!by_name.may_connect("other.test", ip("169.254.169.254")));
    let by_address = scope(&["http://[fe80::1]/"], ScopeMode::Strict);
    assert!(by_address.may_connect("link.test", ip("fe80::1")));
    assert!(!by_address.may_connect("link.test", ip("fe80::2")));
}

//! Tests of the link extraction (`extract`): the conformance corpus, the
//! scanner against the tokenizer, and the property tests.

use super::*;
use crate::directives;
use proptest::prelude::*;

fn page() -> Url {
    Url::parse("http://example.com/dir/page.html").unwrap()
}

fn links(html: &str) -> Vec<String> {
    links_bytes(html.as_bytes())
}

/// The links of `html` as [`extract_links`] gives them, after checking
/// that the scanner, when it is sure, and html5gum agree.
fn links_bytes(html: &[u8]) -> Vec<String> {
    let reference = tokenize_links(html, &page());
    if let Some(scanned) = scan_links(html, &page()) {
        assert_eq!(scanned, reference, "scanner and html5gum differ");
    }
    let found = extract_links(html, &page());
    assert_eq!(found, reference);
    found.into_iter().map(String::from).collect()
}

/// Like [`links`], and the scanner handled the page itself.
fn scanned(html: &str) -> Vec<String> {
    assert!(
        scan_links(html.as_bytes(), &page()).is_some(),
        "scanner gave up on {html:?}"
    );
    links(html)
}

/// Like [`links`], and the page needed html5gum.
fn tokenized(html: &str) -> Vec<String> {
    assert!(
        scan_links(html.as_bytes(), &page()).is_none(),
        "scanner should give up on {html:?}"
    );
    links(html)
}

#[test]
fn unquoted_href_with_slash_is_found() {
    assert_eq!(
        links("<a href=/about>About</a>"),
        ["http://example.com/about"]
    );
}

#[test]
fn uppercase_tag_and_attribute_names_are_found() {
    assert_eq!(
        links(r#"<A HREF="x">X</A><Area hReF="y">"#),
        ["http://example.com/dir/x", "http://example.com/dir/y"]
    );
}

#[test]
fn single_quoted_value_is_found() {
    assert_eq!(
        links("<a href='single'>s</a>"),
        ["http://example.com/dir/single"]
    );
}

#[test]
fn amp_entity_in_href_is_decoded() {
    assert_eq!(
        links(r#"<a href="/s?a=1&amp;b=2">"#),
        ["http://example.com/s?a=1&b=2"]
    );
}

#[test]
fn numeric_entities_in_href_are_decoded() {
    assert_eq!(
        links(r#"<a href="&#47;x&#x2F;y&#X2f;z">"#),
        ["http://example.com/x/y/z"]
    );
}

#[test]
fn legacy_entity_before_equals_in_attribute_is_not_decoded() {
    // HTML: "&copy=" inside an attribute value stays literal.
    assert_eq!(
        links(r#"<a href="/s?a=1&copy=2">"#),
        ["http://example.com/s?a=1&copy=2"]
    );
}

#[test]
fn markup_inside_script_yields_nothing() {
    assert!(links(r#"<script>var s = '<a href="/no">'</script>"#).is_empty());
}

#[test]
fn markup_inside_style_yields_nothing() {
    assert!(links(r#"<style>/* <a href="/no"> */ a{}</style>"#).is_empty());
}

#[test]
fn markup_inside_textarea_and_title_yields_nothing() {
    assert!(links(r#"<title><a href="/no"></title><textarea><a href=/no2></textarea>"#).is_empty());
}

#[test]
fn links_after_script_and_style_are_found() {
    assert_eq!(
        links(
            r#"<SCRIPT>if (a </b) x = "</scr" + "ipt>";</SCRIPT><a href=/one>
                   <style>a{}</STYLE ><a href=/two>"#
        ),
        ["http://example.com/one", "http://example.com/two"]
    );
}

#[test]
fn comment_yields_nothing() {
    assert!(links(r#"<!-- <a href="/no"> -->"#).is_empty());
    assert_eq!(
        links(r#"<!-- <a href="/no"> --><a href="/yes">"#),
        ["http://example.com/yes"]
    );
}

#[test]
fn relative_base_applies_to_later_links() {
    assert_eq!(
        links(r#"<head><base href="/sub/"></head><a href="x">"#),
        ["http://example.com/sub/x"]
    );
}

#[test]
fn absolute_base_to_another_host_applies() {
    assert_eq!(
        links(r#"<base href="https://cdn.example.org/b/"><a href="x"><a href="/y">"#),
        ["https://cdn.example.org/b/x", "https://cdn.example.org/y"]
    );
}

#[test]
fn base_after_links_applies_to_earlier_links_too() {
    assert_eq!(
        links(r#"<a href="x"><a href="x"><base href="/sub/"><a href="y">"#),
        ["http://example.com/sub/x", "http://example.com/sub/y"]
    );
}

#[test]
fn late_base_restarts_once_and_later_bases_are_ignored() {
    assert_eq!(
        links(r#"<a href="x"><base href="/one/"><base href="/two/"><a href="y">"#),
        ["http://example.com/one/x", "http://example.com/one/y"]
    );
}

#[test]
fn late_unusable_base_keeps_the_links_before_it() {
    assert_eq!(
        links(r#"<a href="x"><base href="javascript:0"><a href="y">"#),
        ["http://example.com/dir/x", "http://example.com/dir/y"]
    );
}

#[test]
fn late_base_applies_on_the_html5gum_path_too() {
    assert_eq!(
        tokenized(r#"<a href="a&lt;b"><base href="/sub/"><a href="y">"#),
        ["http://example.com/sub/a%3Cb", "http://example.com/sub/y"]
    );
}

/// What each reader finds of `html`'s `<meta>` robots tags, for us.
fn meta_robots(html: &str) -> [directives::Directives; 3] {
    let robots = |found: Found| found.robots.for_agent("ringcrawl");
    let mut scanned = None;
    let mut tokenized = None;
    for (slot, tokenize) in [(&mut scanned, false), (&mut tokenized, true)] {
        let Ok(found) = in_passes(&page(), None, false, false, None, |set| {
            if tokenize {
                tokenizer::tokenize(html.as_bytes(), set);
            } else {
                // The scanner is sure of these pages.
                scanner::scan(html.as_bytes(), set).unwrap_or_else(|_| panic!("unsure of {html}"));
            }
            Ok::<(), std::convert::Infallible>(())
        });
        *slot = Some(robots(found));
    }
    let requisites = page_links_with(html.as_bytes(), &page(), None, Extract::Requisites, false);
    [
        scanned.unwrap(),
        tokenized.unwrap(),
        requisites.robots.for_agent("ringcrawl"),
    ]
}

#[test]
fn meta_robots_is_read_whichever_reader_reads_the_page() {
    use directives::Directives;
    let both = Directives {
        nofollow: true,
        noindex: true,
    };
    let nofollow = Directives {
        nofollow: true,
        noindex: false,
    };
    for (html, want) in [
        (
            r#"<head><META Name="Robots" CONTENT="noindex, NOFOLLOW"></head><a href=/a>"#,
            both,
        ),
        (r#"<meta content='nofollow' name='ringcrawl'/>"#, nofollow),
        (r#"<meta name=robots content=none>"#, both),
        (
            r#"<meta name="otherbot" content="nofollow">"#,
            Directives::default(),
        ),
        (
            r#"<meta name="description" content="nofollow">"#,
            Directives::default(),
        ),
        (r#"<meta name="robots">"#, Directives::default()),
        (
            r#"<!-- <meta name="robots" content="nofollow"> -->"#,
            Directives::default(),
        ),
        (
            r#"<script><meta name="robots" content="nofollow"></script>"#,
            Directives::default(),
        ),
    ] {
        assert_eq!(meta_robots(html), [want; 3], "{html}");
    }
    // A character reference the scanner leaves to html5gum.
    let page_of = |html: &[u8]| page_links(html, &page(), None);
    let page = page_of(br#"<meta name="robots" content="noindex,&#32;nofollow">"#);
    assert_eq!(page.robots.for_agent("ringcrawl"), both);
    // The links are read as before.
    let page = page_of(br#"<meta name="robots" content="nofollow"><a href="/x">x</a>"#);
    assert_eq!(page.links.len(), 1);
}

#[test]
fn rel_nofollow_links_are_left_out_only_when_asked_by_every_reader() {
    let html = br#"<a href=/a rel="nofollow">a</a> <a rel='UGC NoFollow' href=/b>b</a>
            <a href=/c rel=noopener>c</a> <area href=/d rel=nofollow> <a href=/e>e</a>"#;
    let urls = |page: PageLinks| -> Vec<String> {
        page.links.iter().map(|u| u.path().to_string()).collect()
    };
    for extract in [Extract::Links, Extract::Requisites] {
        let all = urls(page_links_with(html, &page(), None, extract, false));
        assert_eq!(all, ["/a", "/b", "/c", "/d", "/e"], "{extract:?}");
        let kept = urls(page_links_with(html, &page(), None, extract, true));
        assert_eq!(kept, ["/c", "/e"], "{extract:?}");
    }
    // html5gum where the scanner is unsure (a character reference).
    let unsure = br#"<a href="/x&#32;y" rel=nofollow>x</a><a href=/z>z</a>"#;
    let kept = urls(page_links_with(unsure, &page(), None, Extract::Links, true));
    assert_eq!(kept, ["/z"]);
}

#[test]
fn only_first_base_counts() {
    assert_eq!(
        links(r#"<base href="/one/"><base href="/two/"><a href="x">"#),
        ["http://example.com/one/x"]
    );
}

#[test]
fn base_without_href_or_with_javascript_is_ignored() {
    assert_eq!(
        links(r#"<base target="_blank"><base href="/sub/"><a href="x">"#),
        ["http://example.com/sub/x"]
    );
    assert_eq!(
        links(r#"<base href="javascript:alert(1)"><a href="x">"#),
        ["http://example.com/dir/x"]
    );
}

#[test]
fn area_link_frame_iframe_are_found() {
    assert_eq!(
        links(
            r#"<link rel=stylesheet href=/s.css><map><area href=/area></map>
                   <frameset><frame src=/frame></frameset><iframe src="/iframe"></iframe>"#
        ),
        [
            "http://example.com/s.css",
            "http://example.com/area",
            "http://example.com/frame",
            "http://example.com/iframe",
        ]
    );
}

#[test]
fn img_and_script_src_are_not_links() {
    assert!(
        links(r#"<img src=/i.png><script src="/s.js"></script><a src=/no><iframe href=/no2>"#)
            .is_empty()
    );
}

#[test]
fn fragment_dropped_and_fragment_only_ignored() {
    assert_eq!(
        links(r##"<a href="#top">t</a><a href="/p#sec">p</a><a href="">e</a>"##),
        ["http://example.com/p"]
    );
}

#[test]
fn javascript_and_mailto_ignored() {
    assert!(links(
            r#"<a href="javascript:void(0)"><a href="mailto:x@example.com"><a href="tel:1"><a href="data:,x">"#
        )
        .is_empty());
}

#[test]
fn duplicates_collapse_in_order_of_first_appearance() {
    assert_eq!(
        links(r#"<a href="/b"><a href="/a"><a href="/b#x"><a href="http://EXAMPLE.com/a">"#),
        ["http://example.com/b", "http://example.com/a"]
    );
}

#[test]
fn whitespace_around_href_is_trimmed() {
    assert_eq!(
        links("<a href=\"  \t\n/x\r\n \">"),
        ["http://example.com/x"]
    );
}

#[test]
fn latin1_bytes_around_links_do_not_hide_them() {
    let mut html = b"<p>caf\xe9 \xe9\xe9</p><a href=\"/one\">r\xe9sum\xe9</a>\xff\xfe".to_vec();
    html.extend_from_slice(b"<a title=\"\xe9\" href=/two>");
    assert_eq!(
        links_bytes(&html),
        ["http://example.com/one", "http://example.com/two"]
    );
}

#[test]
fn latin1_byte_inside_href_is_percent_encoded() {
    assert_eq!(
        links_bytes(b"<a href=\"/caf\xe9\">"),
        ["http://example.com/caf%E9"]
    );
    assert_eq!(
        links("<a href=\"/café\">"),
        ["http://example.com/caf%C3%A9"]
    );
}

#[test]
fn spaces_inside_href_are_percent_encoded() {
    assert_eq!(
        links(r#"<a href="/a b/c?d e">"#),
        ["http://example.com/a%20b/c?d%20e"]
    );
}

#[test]
fn dot_dot_relative_resolves() {
    assert_eq!(links(r#"<a href="../x">"#), ["http://example.com/x"]);
    assert_eq!(
        links(r#"<a href="./y/../z">"#),
        ["http://example.com/dir/z"]
    );
}

#[test]
fn protocol_relative_link_takes_page_scheme() {
    assert_eq!(
        links(r#"<a href="//other.example/p">"#),
        ["http://other.example/p"]
    );
}

#[test]
fn uppercase_host_is_normalised() {
    assert_eq!(
        links(r#"<a href="HTTP://WWW.Example.COM:80/P">"#),
        ["http://www.example.com/P"]
    );
}

#[test]
fn anchor_without_href_is_skipped() {
    assert_eq!(
        links(r#"<a name="top">x</a><a id=1 href=/y>"#),
        ["http://example.com/y"]
    );
}

#[test]
fn self_closing_and_valueless_attributes() {
    assert_eq!(
        links(r#"<a download href=/f.zip/><link href="/l" hidden /><a href><a href=/z>"#),
        [
            "http://example.com/f.zip/",
            "http://example.com/l",
            "http://example.com/z",
        ]
    );
}

#[test]
fn repeated_attribute_first_one_wins() {
    assert_eq!(
        links(r#"<a href=/first href=/second>"#),
        ["http://example.com/first"]
    );
    // An empty first href is still the href (a link to the page itself).
    assert!(links(r#"<a href="" href=/second>"#).is_empty());
}

#[test]
fn noscript_content_is_parsed_as_markup() {
    assert_eq!(
        links(r#"<noscript><a href=/nojs>no js</a></noscript>"#),
        ["http://example.com/nojs"]
    );
}

#[test]
fn attributes_on_end_tags_are_ignored() {
    assert!(links(r#"</a href=/no>"#).is_empty());
}

#[test]
fn nothing_after_plaintext() {
    assert_eq!(
        links(r#"<a href=/yes><plaintext><a href=/no>"#),
        ["http://example.com/yes"]
    );
}

#[test]
fn empty_and_textless_inputs_give_nothing() {
    assert!(links("").is_empty());
    assert!(links("just text, no tags").is_empty());
    assert!(links("<a href=").is_empty());
    assert!(links("<a href=\"/unterminated").is_empty());
}

#[test]
fn hundred_thousand_nested_tags_do_not_crash() {
    let mut html = String::new();
    for _ in 0..100_000 {
        html.push_str("<div><span>");
    }
    html.push_str("<a href=/deep>");
    for _ in 0..100_000 {
        html.push_str("</span></div>");
    }
    assert_eq!(links(&html), ["http://example.com/deep"]);
}

#[test]
fn million_links_are_capped() {
    let mut html = String::with_capacity(20 * 1_000_000);
    for i in 0..1_000_000 {
        html.push_str("<a href=/p");
        html.push_str(&i.to_string());
        html.push('>');
    }
    let found = extract_links(html.as_bytes(), &page());
    assert_eq!(found.len(), MAX_LINKS_PER_PAGE);
    assert_eq!(found[0].as_str(), "http://example.com/p0");
    assert_eq!(
        found[MAX_LINKS_PER_PAGE - 1].as_str(),
        format!("http://example.com/p{}", MAX_LINKS_PER_PAGE - 1)
    );
}

#[test]
fn duplicates_do_not_count_towards_the_cap() {
    let mut html = String::new();
    for _ in 0..3 {
        for i in 0..MAX_LINKS_PER_PAGE + 5 {
            html.push_str(&format!("<a href=/p{i}>"));
        }
    }
    let found = extract_links(html.as_bytes(), &page());
    assert_eq!(found.len(), MAX_LINKS_PER_PAGE);
}

#[test]
fn quoted_gt_does_not_end_a_tag() {
    assert_eq!(
        scanned(r#"<p title="a > b" data-x='>'><a title=">" href="/x">"#),
        ["http://example.com/x"]
    );
}

#[test]
fn quote_inside_attribute_name_or_unquoted_value_is_literal() {
    assert_eq!(
        scanned(r#"<p a"b='c>'><a href=/y"z'>"#),
        ["http://example.com/y%22z'"]
    );
}

#[test]
fn slash_and_equals_between_attributes() {
    assert_eq!(
        scanned(r#"<a/href=/one><a =href=/no href=/two><a href = "/three" / >"#),
        [
            "http://example.com/one",
            "http://example.com/two",
            "http://example.com/three",
        ]
    );
}

#[test]
fn cr_and_form_feed_separate_attributes() {
    assert_eq!(
        scanned("<a\rhref=/cr><a\x0chref=/ff><a\r\nhref\r=\r'/crlf'>"),
        [
            "http://example.com/cr",
            "http://example.com/ff",
            "http://example.com/crlf",
        ]
    );
}

#[test]
fn abrupt_and_bang_comment_ends() {
    assert_eq!(
        scanned("<!--><a href=/1><!---><a href=/2><!-- x --!><a href=/3><!----><a href=/4>"),
        [
            "http://example.com/1",
            "http://example.com/2",
            "http://example.com/3",
            "http://example.com/4",
        ]
    );
}

#[test]
fn comment_dashes_must_be_inside_the_comment() {
    // `<!---!>` does not end the comment; the `-->` later does.
    assert_eq!(
        scanned("<!---!><a href=/no>--><a href=/yes>"),
        ["http://example.com/yes"]
    );
    assert_eq!(
        scanned("<!-- <!-- nested --> <a href=/after>"),
        ["http://example.com/after"]
    );
}

#[test]
fn doctype_cdata_processing_instruction_and_bogus_end_tags_end_at_gt() {
    assert_eq!(
        scanned(
            "<!DOCTYPE html PUBLIC \"a\"><![CDATA[ x ]]><?xml version=1?></ junk>\
                 </><!><a href=/ok>"
        ),
        ["http://example.com/ok"]
    );
}

#[test]
fn end_tag_of_raw_text_may_carry_attributes() {
    assert_eq!(
        scanned(r#"<style>a{}</style x="><a href=/in-x>"><a href=/after>"#),
        ["http://example.com/after"]
    );
}

#[test]
fn raw_text_end_needs_the_whole_name() {
    assert_eq!(
        scanned("<title></titles><a href=/no></title\t><a href=/yes>"),
        ["http://example.com/yes"]
    );
}

#[test]
fn tags_without_links_still_end_at_their_tokenizer_gt() {
    // The fast path for tags the scanner does not act on reads their
    // attributes all the same: a quoted `>` does not end them.
    assert_eq!(
        scanned(r#"<p title="<a href=/no>"><EM class='>'>x</EM><li data-x=a>b><a href=/yes></li>"#),
        ["http://example.com/yes"]
    );
    assert_eq!(
        scanned(r#"</p x="><a href=/no>"><a href=/end></p/><P/><p/ ><a href=/slash>"#),
        ["http://example.com/end", "http://example.com/slash"]
    );
    // Cut off by the end of input, with and without attributes.
    for html in [
        "<p",
        "</em",
        "<p class=\"x",
        "</li x='>",
        "<em ",
        "<strong/",
    ] {
        assert!(scanned(html).is_empty(), "{html:?}");
    }
}

#[test]
fn tags_named_like_link_and_raw_text_tags_are_told_apart() {
    // Same first letter and length as a link or raw-text tag, but not one:
    // not raw text, no link taken.
    assert_eq!(
        scanned(
            "<abbr href=/no1><bdi href=/no2><mark content=x><strong><table>\
             <nav><frames><noframesx><scripts><a href=/yes></strong>"
        ),
        ["http://example.com/yes"]
    );
    // And every one that is, in any case.
    assert_eq!(
        scanned(
            "<TiTlE><a href=/no></tItLe><XMP><a href=/no></xmp><NoFrames><a href=/no>\
             </noframes><noframe><a href=/no></NOFRAME><noembed><a href=/no></noembed>\
             <TEXTAREA><a href=/no></textarea><STYLE><a href=/no></style>\
             <SCRIPT><a href=/no></script><AREA HREF=/area><Link href=/link>\
             <IFRAME SRC=/iframe></iframe><frame src=/frame><A href=/a>"
        ),
        [
            "http://example.com/area",
            "http://example.com/link",
            "http://example.com/iframe",
            "http://example.com/frame",
            "http://example.com/a",
        ]
    );
    assert_eq!(
        scanned("<BASE href=/b/><a href=x><PlainText><a href=/no>"),
        ["http://example.com/b/x"]
    );
    // A name too long to be any of them is none of them.
    assert_eq!(
        scanned("<scriptscriptscriptscript><a href=/yes>"),
        ["http://example.com/yes"]
    );
}

#[test]
fn tags_across_block_edges_are_found() {
    // The scanner finds `<` a 64-byte block at a time: each tag at every
    // offset around the first two block edges.
    for pad in 0..140 {
        let html = format!(
            "{}<p>t</p><a href=/x{pad}>x</a><!-- <a href=/no> --><em>",
            " ".repeat(pad)
        );
        assert_eq!(scanned(&html), [format!("http://example.com/x{pad}")]);
        let html = format!("<title>{}</title><a href=/y>", "<".repeat(pad));
        assert_eq!(scanned(&html), ["http://example.com/y"]);
    }
}

#[test]
fn lone_lt_and_stray_bytes_are_text() {
    assert_eq!(
        scanned("a < b <3 <<a href=/x> <\u{e9}<a href=/y>"),
        ["http://example.com/x", "http://example.com/y"]
    );
}

#[test]
fn tag_cut_off_by_end_of_input_is_dropped() {
    assert!(scanned("<a href=/x").is_empty());
    assert!(scanned("<a href='/x'").is_empty());
    assert!(scanned("<a href=").is_empty());
    assert!(scanned("<a href=/x /").is_empty());
}

#[test]
fn amp_is_decoded_without_the_tokenizer() {
    assert_eq!(
        scanned(r#"<a href="/s?a=1&amp;b=2&=3& 4&">"#),
        ["http://example.com/s?a=1&b=2&=3&%204&"]
    );
}

#[test]
fn other_references_and_nul_in_links_go_to_the_tokenizer() {
    assert_eq!(tokenized("<a href=/a&lt;b>"), ["http://example.com/a%3Cb"]);
    assert_eq!(tokenized("<a href=/a&#47;b>"), ["http://example.com/a/b"]);
    assert_eq!(
        tokenized("<a href=\"/a\0b\">"),
        ["http://example.com/a%EF%BF%BDb"]
    );
    // References outside link values need no decoding.
    assert_eq!(
        scanned("<p title=\"&lt;&#47;\">&copy; <a href=/x>"),
        ["http://example.com/x"]
    );
}

#[test]
fn escaped_script_goes_to_the_tokenizer() {
    assert_eq!(
        tokenized("<script><!-- document.write('<script></script>'); --></script><a href=/x>"),
        ["http://example.com/x"]
    );
    assert_eq!(
        tokenized("<script><!--<script></script><a href=/no>--></script><a href=/yes>"),
        ["http://example.com/yes"]
    );
}

#[test]
fn synthetic_site_pages_are_scanned_without_the_tokenizer() {
    let site = ringcrawl_site::synth::SynthSite::new(ringcrawl_site::synth::SiteSpec {
        pages: 50,
        ..ringcrawl_site::synth::SiteSpec::default()
    });
    for n in 1..50 {
        let path = format!("/p/{n}.html");
        let ringcrawl_site::server::Reply::Http { body, .. } = site.respond(&path) else {
            continue;
        };
        let url = Url::parse(&format!("http://example.com{path}")).unwrap();
        let scanned = scan_links(&body, &url).expect("scanner handles the site");
        assert_eq!(scanned, tokenize_links(&body, &url), "{path}");
        assert!(!scanned.is_empty(), "{path}");
    }
}

/// A ~6 KB page with ~15 links, shaped like an ordinary site page.
fn typical_page() -> String {
    let mut html = String::from(
            "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Example page</title>\
             <link rel=stylesheet href=/static/site.css><link rel=icon href=/favicon.ico>\
             <script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}\
             </script><style>body{font:16px/1.5 sans-serif}nav a{margin:0 1em}</style></head><body>\
             <nav><a href=/>Home</a><a href=/about>About</a><a href=/blog/>Blog</a>\
             <a href=\"/contact?from=nav&amp;x=1\">Contact</a></nav><main>",
        );
    let para = "<p class=\"text\">Lorem ipsum dolor sit amet, consectetur adipiscing elit, \
                    sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim \
                    ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip \
                    ex ea commodo consequat. <em>Duis aute</em> irure dolor in reprehenderit in \
                    voluptate velit esse cillum dolore eu fugiat nulla pariatur.</p>\n";
    for i in 0..13 {
        html.push_str(para);
        if i % 2 == 0 {
            html.push_str(&format!(
                "<p>See <a href=\"/blog/post-{i}.html\" title=\"Post {i}\">post {i}</a>.</p>"
            ));
        }
    }
    html.push_str(
        "</main><footer><a href=\"https://twitter.com/example\">tw</a>\
             <a href=\"#top\">top</a><a href=\"mailto:hi@example.com\">mail</a>\
             <a href=/privacy>Privacy</a></footer></body></html>",
    );
    html
}

#[test]
fn typical_page_yields_its_links() {
    let html = typical_page();
    let found = extract_links(html.as_bytes(), &page());
    assert!((5_000..8_000).contains(&html.len()), "{}", html.len());
    assert_eq!(found.len(), 15, "{found:?}");
}

/// Pages glued from the pieces that move tag boundaries: link and
/// raw-text tags, comment and bogus-comment openers and closers, quotes,
/// `=`, `/`, whitespace with CR, character references, text, any byte.
fn tag_soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("<a href=".to_string()),
            Just("<A HREF='/".to_string()),
            Just("<base href=".to_string()),
            Just("<iframe src=".to_string()),
            Just("<script>".to_string()),
            Just("</script>".to_string()),
            Just("<title>".to_string()),
            Just("</TITLE ".to_string()),
            Just("<style>".to_string()),
            Just("</style>".to_string()),
            Just("<plaintext>".to_string()),
            Just("<p>".to_string()),
            Just("</P>".to_string()),
            Just("<em ".to_string()),
            Just("<strong>".to_string()),
            Just("<xmp>".to_string()),
            Just("<noframe>".to_string()),
            Just("<!--".to_string()),
            Just("-->".to_string()),
            Just("--!>".to_string()),
            Just("<!".to_string()),
            Just("<?".to_string()),
            Just("</".to_string()),
            Just("<".to_string()),
            Just("/".to_string()),
            Just("=".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just(">".to_string()),
            Just(" ".to_string()),
            Just("\r\n".to_string()),
            Just("&amp;".to_string()),
            Just("&#".to_string()),
            Just("&".to_string()),
            "[a-z/.]{1,6}",
            "[ -~]{0,12}",
            any::<u8>().prop_map(|b| char::from(b).to_string()),
        ],
        0..64,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn extract_links_never_panics_on_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048)
    ) {
        let found = extract_links(&bytes, &page());
        prop_assert!(found.len() <= MAX_LINKS_PER_PAGE);
    }

    #[test]
    fn scanner_agrees_with_html5gum_on_tag_soup(html in tag_soup()) {
        let reference = tokenize_links(html.as_bytes(), &page());
        if let Some(scanned) = scan_links(html.as_bytes(), &page()) {
            prop_assert_eq!(scanned, reference, "{:?}", html);
        }
    }

    #[test]
    fn extract_links_never_panics_on_tag_soup(html in tag_soup()) {
        let found = extract_links(html.as_bytes(), &page());
        for url in &found {
            prop_assert!(matches!(url.scheme(), "http" | "https"));
            prop_assert!(url.fragment().is_none());
        }
    }
}

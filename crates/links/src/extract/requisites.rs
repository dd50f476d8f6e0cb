//! Which HTML elements and attributes load a page's requisites (wget's
//! `-p`): the images, scripts, stylesheets, media and objects a browser
//! fetches to show the page, as opposed to the links a reader follows.
//!
//! Pure tables and small parsers, used by the tokenizer's emitter when
//! requisites are asked for: [`Element::classify`] names the element,
//! [`Element::attributes`] the (at most [`MAX_ATTRIBUTES`]) attributes read
//! from it, and `LinkSet::offer_element` decides from their values what is
//! a link and what an embed. `srcset` candidates are split by [`srcset`] as
//! the HTML standard's "parse a srcset attribute" does.
//!
//! What it is not: no CSS (see `css`), no scripts run (a URL a script
//! builds is not found), no `<meta http-equiv=refresh>`, no `<picture>`
//! media queries (every `source` is fetched, as wget and Heritrix do).
/// The most attributes read from one element.
pub(super) const MAX_ATTRIBUTES: usize = 3;

/// The values of an element's [`Element::attributes`], in that order
/// (`None`: absent; `Some(b"")`: present and empty).
pub(super) type Values<'v> = [Option<&'v [u8]>; MAX_ATTRIBUTES];

/// An element as requisites see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Element {
    /// `a`, `area`: `href` is a link.
    Anchor,
    /// `frame`, `iframe`: `src` is a link (a page of its own).
    Frame,
    /// `base`: `href` is the base URL.
    Base,
    /// `link`: `href` is an embed if `rel` names a requisite, else a link.
    Link,
    /// `img`, `source`: `src` and `srcset`.
    Image,
    /// `script`, `embed`, `track`: `src`.
    Script,
    /// `video`, `audio`: `src` and `poster`.
    Media,
    /// `object`: `data`.
    Object,
    /// `meta`: `content` and `name`, for robots directives.
    Meta,
    /// `input`: `src` when `type=image`.
    Input,
    /// Any other element: only its `style`.
    Other,
}

impl Element {
    /// The element named `name` (ASCII-lowercase).
    pub(super) fn classify(name: &[u8]) -> Element {
        match name {
            b"a" | b"area" => Element::Anchor,
            b"frame" | b"iframe" => Element::Frame,
            b"base" => Element::Base,
            b"link" => Element::Link,
            b"img" | b"source" => Element::Image,
            b"script" | b"embed" | b"track" => Element::Script,
            b"video" | b"audio" => Element::Media,
            b"object" => Element::Object,
            b"input" => Element::Input,
            b"meta" => Element::Meta,
            _ => Element::Other,
        }
    }

    /// The attributes read, ASCII-lowercase; `style` always last.
    pub(super) fn attributes(self) -> &'static [&'static [u8]] {
        match self {
            Element::Anchor => &[b"href", b"rel", b"style"],
            Element::Base => &[b"href", b"style"],
            Element::Frame | Element::Script => &[b"src", b"style"],
            Element::Link => &[b"href", b"rel", b"style"],
            Element::Image => &[b"src", b"srcset", b"style"],
            Element::Media => &[b"src", b"poster", b"style"],
            Element::Object => &[b"data", b"style"],
            Element::Input => &[b"src", b"type", b"style"],
            Element::Meta => &[b"content", b"name", b"style"],
            Element::Other => &[b"style"],
        }
    }

    /// The slot of attribute `name` in [`Element::attributes`].
    pub(super) fn slot(self, name: &[u8]) -> Option<usize> {
        self.attributes().iter().position(|&a| a == name)
    }
}

/// Whether a `link`'s `rel` (space-separated, any case) makes its `href` a
/// requisite: a stylesheet, an icon, or something preloaded.
pub(super) fn rel_is_requisite(rel: &[u8]) -> bool {
    rel.split(|b| b.is_ascii_whitespace()).any(|word| {
        [
            &b"stylesheet"[..],
            b"icon",
            b"apple-touch-icon",
            b"preload",
            b"modulepreload",
        ]
        .iter()
        .any(|r| word.eq_ignore_ascii_case(r))
    })
}

/// Whether an `input`'s `type` is `image` (any case, spaces around).
pub(super) fn is_image_input(kind: &[u8]) -> bool {
    kind.trim_ascii().eq_ignore_ascii_case(b"image")
}

/// Call `found` with each candidate URL of a `srcset` value: candidates are
/// separated by commas, each a URL and descriptors (`2x`, `480w`) after
/// whitespace; a URL ending in commas ends its candidate there.
pub(super) fn srcset(value: &[u8], found: &mut impl FnMut(&[u8])) {
    let mut rest = value;
    loop {
        rest = trim_start(rest, |b| b.is_ascii_whitespace() || b == b',');
        if rest.is_empty() {
            return;
        }
        let end = rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (url, after) = rest.split_at_checked(end).unwrap_or((rest, &[]));
        let trimmed = trim_end(url, |b| b == b',');
        if !trimmed.is_empty() {
            found(trimmed);
        }
        rest = after;
        if trimmed.len() < url.len() {
            // `a.png, b.png`: trailing commas ended the candidate.
            continue;
        }
        // Descriptors, up to a comma outside parentheses.
        let mut depth = 0usize;
        let mut cut = rest.len();
        for (i, &b) in rest.iter().enumerate() {
            match b {
                b'(' => depth = depth.saturating_add(1),
                b')' => depth = depth.saturating_sub(1),
                b',' if depth == 0 => {
                    cut = i;
                    break;
                }
                _ => {}
            }
        }
        rest = rest.get(cut..).unwrap_or_default();
    }
}

fn trim_start(s: &[u8], drop: impl Fn(u8) -> bool) -> &[u8] {
    let start = s.iter().position(|&b| !drop(b)).unwrap_or(s.len());
    s.get(start..).unwrap_or_default()
}

fn trim_end(s: &[u8], drop: impl Fn(u8) -> bool) -> &[u8] {
    let end = s
        .iter()
        .rposition(|&b| !drop(b))
        .map_or(0, |i| i.saturating_add(1));
    s.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn candidates(value: &str) -> Vec<String> {
        let mut out = Vec::new();
        srcset(value.as_bytes(), &mut |v| {
            out.push(String::from_utf8_lossy(v).into_owned())
        });
        out
    }

    #[test]
    fn srcset_candidates_with_descriptors_are_split() {
        assert_eq!(
            candidates(" a.png 1x, b.png 2x ,c.png 480w"),
            ["a.png", "b.png", "c.png"]
        );
    }

    #[test]
    fn srcset_commas_inside_urls_and_parentheses_stay() {
        assert_eq!(candidates("a,b.png 1x, c.png"), ["a,b.png", "c.png"]);
        assert_eq!(candidates("a.png (x, y) 2x, b.png"), ["a.png", "b.png"]);
        // Commas inside a URL stay; trailing ones end its candidate.
        assert_eq!(candidates("a.png,b.png,,c.png"), ["a.png,b.png,,c.png"]);
        assert_eq!(candidates("a.png,, b.png"), ["a.png", "b.png"]);
        assert!(candidates(" , ,").is_empty());
    }

    #[test]
    fn link_rels_that_are_requisites() {
        assert!(rel_is_requisite(b"stylesheet"));
        assert!(rel_is_requisite(b"alternate StyleSheet"));
        assert!(rel_is_requisite(b"shortcut icon"));
        assert!(rel_is_requisite(b"preload"));
        assert!(!rel_is_requisite(b"next"));
        assert!(!rel_is_requisite(b"canonical"));
        assert!(!rel_is_requisite(b"stylesheets"));
    }

    #[test]
    fn every_element_reads_style_last_and_at_most_three_attributes() {
        for name in [
            &b"a"[..],
            b"iframe",
            b"base",
            b"link",
            b"img",
            b"script",
            b"video",
            b"object",
            b"input",
            b"div",
        ] {
            let attributes = Element::classify(name).attributes();
            assert!(attributes.len() <= MAX_ATTRIBUTES);
            assert_eq!(attributes.last(), Some(&&b"style"[..]));
        }
        assert!(is_image_input(b" IMAGE "));
        assert!(!is_image_input(b"submit"));
    }

    use super::super::{
        extract_links, page_links_with, stylesheet_requisites, Extract, MAX_LINKS_PER_PAGE,
    };
    use url::Url;

    fn page() -> Url {
        Url::parse("http://example.com/dir/page.html").unwrap()
    }

    /// (links, embeds) of `html` with requisites asked for.
    fn found(html: &str) -> (Vec<String>, Vec<String>) {
        let with = page_links_with(html.as_bytes(), &page(), None, Extract::Requisites, false);
        let strings = |urls: Vec<Url>| urls.into_iter().map(String::from).collect();
        (strings(with.links), strings(with.embeds))
    }

    #[test]
    fn images_scripts_stylesheets_media_and_objects_are_embeds() {
        let (links, embeds) = found(
            r#"<link rel=stylesheet href=/s.css><link rel="next" href=/n>
               <link rel="shortcut icon" href=/favicon.ico>
               <script src=app.js></script><img src=a.png srcset="b.png 2x, c.png 3x">
               <picture><source srcset=d.webp></picture>
               <video src=v.mp4 poster=p.jpg><track src=t.vtt></video>
               <audio src=/a.ogg></audio><object data=o.swf></object><embed src=e.svg>
               <input type=IMAGE src=i.png><input type=submit src=no.png>
               <a href=page2>x</a><iframe src=frame.html></iframe>"#,
        );
        assert_eq!(
            links,
            [
                "http://example.com/n",
                "http://example.com/dir/page2",
                "http://example.com/dir/frame.html"
            ]
        );
        let expected: Vec<String> = [
            "/s.css",
            "/favicon.ico",
            "/dir/app.js",
            "/dir/a.png",
            "/dir/b.png",
            "/dir/c.png",
            "/dir/d.webp",
            "/dir/v.mp4",
            "/dir/p.jpg",
            "/dir/t.vtt",
            "/a.ogg",
            "/dir/o.swf",
            "/dir/e.svg",
            "/dir/i.png",
        ]
        .iter()
        .map(|p| format!("http://example.com{p}"))
        .collect();
        assert_eq!(embeds, expected);
    }

    #[test]
    fn inline_css_in_style_elements_and_attributes_is_read() {
        let (_, embeds) = found(
            r#"<style>@import "i.css"; body{background:url(bg.png)} /* url(no.png) */</style>
               <div style="background-image: url('/d.png')">x</div>
               <p>url(not-css.png)</p>"#,
        );
        assert_eq!(
            embeds,
            [
                "http://example.com/dir/i.css",
                "http://example.com/dir/bg.png",
                "http://example.com/d.png"
            ]
        );
    }

    #[test]
    fn a_style_element_cut_off_by_the_end_of_input_is_still_read() {
        let (_, embeds) = found("<style>a{background:url(x.png)}");
        assert_eq!(embeds, ["http://example.com/dir/x.png"]);
    }

    #[test]
    fn a_late_base_applies_to_requisites_before_it() {
        let (links, embeds) =
            found(r#"<img src=a.png><base href="/b/"><a href=x></a><img src=c.png>"#);
        assert_eq!(links, ["http://example.com/b/x"]);
        assert_eq!(
            embeds,
            ["http://example.com/b/a.png", "http://example.com/b/c.png"]
        );
    }

    #[test]
    fn data_urls_fragments_and_duplicates_are_not_embeds() {
        let (_, embeds) = found(
            r#"<img src="data:image/png;base64,AAAA"><img src=a.png#x><img src=a.png><img src=""><img>"#,
        );
        assert_eq!(embeds, ["http://example.com/dir/a.png"]);
    }

    #[test]
    fn requisites_are_not_taken_without_the_flag() {
        let page_links = page_links_with(
            b"<img src=a.png><a href=b>",
            &page(),
            None,
            Extract::Links,
            false,
        );
        assert!(page_links.embeds.is_empty());
        assert_eq!(page_links.links.len(), 1);
    }

    #[test]
    fn a_page_of_endless_images_is_capped() {
        let html: String = (0..MAX_LINKS_PER_PAGE + 50)
            .map(|i| format!("<img src=/i{i}.png><a href=/p{i}>"))
            .collect();
        let (links, embeds) = found(&html);
        assert_eq!(links.len(), MAX_LINKS_PER_PAGE);
        assert_eq!(embeds.len(), MAX_LINKS_PER_PAGE);
    }

    #[test]
    fn a_stylesheet_resolves_against_its_own_url() {
        let css_url = Url::parse("https://cdn.example.org/css/site.css").unwrap();
        let found = stylesheet_requisites(
            br#"@import url("../base.css"); .a{background:url(img/a.png)} .b{x:url(/img/a.png)}"#,
            &css_url,
        );
        let found: Vec<String> = found.into_iter().map(String::from).collect();
        assert_eq!(
            found,
            [
                "https://cdn.example.org/base.css",
                "https://cdn.example.org/css/img/a.png",
                "https://cdn.example.org/img/a.png"
            ]
        );
    }

    #[test]
    fn a_windows_1252_page_writes_its_requisites_queries_in_its_encoding() {
        let html = b"<img src=\"/i.png?q=caf\xE9\">";
        let found = page_links_with(
            html,
            &page(),
            Some("windows-1252"),
            Extract::Requisites,
            false,
        );
        let embeds: Vec<String> = found.embeds.into_iter().map(String::from).collect();
        assert_eq!(embeds, ["http://example.com/i.png?q=caf%E9"]);
    }

    proptest! {
        #[test]
        fn any_bytes_give_requisites_without_panic(html in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = page_links_with(&html, &page(), None, Extract::Requisites, false);
        }

        #[test]
        // Only a `link` that loads a requisite (a stylesheet, an icon)
        // moves from the links to the embeds.
        fn html_like_text_gives_the_same_links_with_or_without_requisites(
            html in r#"(<a href=[a-c]>|<img src=[a-c] srcset="[a-c] 2x">|<base href=/b/>|<style>|</style>|url\([a-c]\)|<script>|</script>|<!--|-->| ){0,30}"#
        ) {
            let with = page_links_with(html.as_bytes(), &page(), None, Extract::Requisites, false);
            prop_assert_eq!(with.links, extract_links(html.as_bytes(), &page()));
        }

        #[test]
        fn srcset_of_any_bytes_never_panics(value in proptest::collection::vec(any::<u8>(), 0..256)) {
            srcset(&value, &mut |_| {});
        }
    }
}

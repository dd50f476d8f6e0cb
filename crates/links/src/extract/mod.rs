//! Link extraction from an HTML page: the crawler's hot path.
//!
//! [`extract_links`] finds the links of a page the way HTML's tokenizer
//! does: case-insensitive tag and attribute names, quoted, single-quoted and
//! unquoted values (`href=/about`), decoded character references (`&amp;`,
//! `&#47;`), comments skipped, and `<script>`, `<style>`, `<textarea>`,
//! `<title>`, ... content read as raw text, so markup inside a script string
//! is not a link. Two implementations give the same answer:
//!
//! - `scanner`: a hand-written scanner for the part of the WHATWG
//!   tokenizer that decides where tags and link values are. It jumps from `<`
//!   to `<` with `memchr` and copies nothing. When a page holds something it
//!   does not reproduce exactly (a character reference other than `&amp;`
//!   inside a link, a NUL in a link, `<!--` inside a `<script>`), it gives
//!   up on that page.
//! - `tokenizer`: html5gum's WHATWG tokenizer with a purpose-built
//!   emitter: the reference, and what runs when the scanner gives up.
//!
//! Both feed the same `LinkSet` (base URL, resolution, dedup, cap), and
//! the conformance corpus in `tests`, a property test and the
//! `links_differential` fuzz target check that they agree.
//!
//! Encodings: [`page_links`] first finds the page's encoding by the HTML
//! standard's rules ([`charset`]: BOM, HTTP charset, `<meta>` prescan,
//! default). A UTF-8 page is scanned as it is, with no copy; a page in any
//! other encoding is decoded to UTF-8 by encoding_rs first, and its links'
//! queries are written back in its encoding, as browsers do
//! (`encoding_tests` holds the corpus of six encodings).
//!
//! Page requisites ([`Extract::Requisites`]): the tokenizer's emitter then
//! reads every element, `requisites` says which attributes load what
//! (`img src`, `srcset`, `script src`, stylesheets, media, objects), and
//! `css` finds the `url()`s and `@import`s of inline CSS and of
//! stylesheets ([`stylesheet_requisites`]). The scanner is not involved,
//! so the fast path costs nothing more when requisites are not asked for.
//!
//! What it is not: not a tree builder (no DOM, so no stack to overflow on
//! deeply nested pages), not a JavaScript URL finder, and it does no I/O
//! and makes no scope decision (which links a crawl follows is the
//! caller's). It never panics, whatever the bytes.
mod css;
#[cfg(test)]
mod encoding_tests;
mod requisites;
mod scanner;
mod tokenizer;

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::hash::BuildHasher;

use encoding_rs::{Encoding, UTF_8};
use url::Url;

use crate::charset::{self, Sniffed};
use crate::directives::MetaRobots;
use crate::known::{KnownLinks, LinkKey};
use crate::urls;
use requisites::{Element, Values};

/// The most links [`extract_links`] returns for one page.
///
/// A memory bound against hostile or broken pages (a generated page can hold
/// millions of distinct links in a few megabytes): once this many distinct
/// links are found the rest of the page is not read. Ordinary pages have tens
/// to hundreds of links.
pub const MAX_LINKS_PER_PAGE: usize = 10_000;

/// Absolute, normalised links of an HTML page, unique, in order of first
/// appearance, at most [`MAX_LINKS_PER_PAGE`] of them.
///
/// Links are the `href` of `<a>`, `<area>` and `<link>` and the `src` of
/// `<frame>` and `<iframe>` (not `<img>`, `<script>` or any other `src`).
/// Each is resolved and normalised with [`urls::join`], so fragments are
/// dropped, fragment-only (`#top`) and empty references are skipped, and
/// anything that is not `http`/`https` (`javascript:`, `mailto:`, ...) is
/// skipped. When a tag repeats an attribute the first one counts, as in HTML.
///
/// Base URL: the first `<base href>` in the document (resolved against
/// `page_url`) is used for *all* links, including any that come before it.
/// That is what browsers do, since a document has a single base URL taken
/// from its first `<base href>` (which belongs in `<head>`, before any link).
/// A base that is not `http`/`https` once resolved (`javascript:`, `data:`)
/// is ignored and `page_url` stays the base, as the HTML standard says. The
/// one exception: if the link cap is reached before a `<base>` is seen, the
/// page is not read further, so a later base is not honoured.
///
/// Parsing: tag and attribute names are case-insensitive, values are
/// entity-decoded, unquoted values work, comments are ignored, and nothing is
/// taken from inside `<script>`, `<style>`, `<textarea>`, `<title>`, `<xmp>`,
/// `<iframe>`, `<noembed>`, `<noframes>` (their content is raw text, as
/// html5gum's `naive_next_state` switches), nor after `<plaintext>`. Unlike
/// `naive_next_state`, `<noscript>` content is parsed as markup: a crawler
/// runs no scripts, and the HTML standard parses `<noscript>` as markup when
/// scripting is disabled, so links there are ones a no-script reader sees.
///
/// The bytes are read as UTF-8 (a page in another encoding goes through
/// [`page_links`]); bytes inside a link value that are not valid UTF-8 are
/// percent-encoded as they are (`0xE9` becomes `%E9`) rather than replaced,
/// so distinct links stay distinct.
pub fn extract_links(html: &[u8], page_url: &Url) -> Vec<Url> {
    found_links(html, page_url, None, false, None).links
}

/// The links of an HTML page, its requisites if they were asked for, and
/// the encoding its text was read in.
#[derive(Debug)]
pub struct PageLinks {
    /// The page's links, as [`extract_links`] finds them: unique, in order,
    /// at most [`MAX_LINKS_PER_PAGE`].
    pub links: Vec<Url>,
    /// Page requisites ([`Extract::Requisites`]): images, scripts,
    /// stylesheets, media, objects and the `url()`s of inline CSS, unique,
    /// in order, at most [`MAX_LINKS_PER_PAGE`]. A URL can be both a link
    /// and an embed.
    pub embeds: Vec<Url>,
    /// The encoding the page was read in, and why.
    pub charset: Sniffed,
    /// What its `<meta name="robots">` tags say.
    pub robots: MetaRobots,
    /// Links the [`KnownLinks`] given to [`page_links_known`] held: counted
    /// here (unique among the page's links, within the cap), not resolved,
    /// not in `links`. 0 from the other functions.
    pub known: usize,
    /// From [`page_links_known`], for each of `links` in turn: the key to
    /// [`KnownLinks::learn`] it by, or None for a link whose resolution
    /// depends on more than its page's origin. Empty from the others.
    pub keys: Vec<Option<LinkKey>>,
}

/// What [`page_links_with`] reads from a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Extract {
    /// Links only: the fast scanner, html5gum where it gives up.
    Links,
    /// Links and page requisites (wget's `-p`): html5gum's tokenizer, which
    /// reads the attributes and `<style>` text requisites need.
    Requisites,
}

/// The links of an HTML `body` served with `Content-Type` charset
/// `header_charset`, as a browser reads them: the encoding is sniffed
/// ([`charset::sniff`]); a UTF-8 page is scanned as it is ([`extract_links`],
/// the fast path), any other is decoded to UTF-8 first (encoding_rs) and its
/// links are resolved as the HTML standard says: paths and hosts as UTF-8,
/// the query in the page's own encoding (`?q=caf%E9` on a windows-1252
/// page; characters it cannot write become `&#NNNN;` first, as browsers do).
pub fn page_links(body: &[u8], page_url: &Url, header_charset: Option<&str>) -> PageLinks {
    page_links_with(body, page_url, header_charset, Extract::Links, false)
}

/// [`page_links`], and with [`Extract::Requisites`] the page's requisites
/// too: `img` `src` and `srcset`, `source` `src` and `srcset`, `script`,
/// `embed` and `track` `src`, `video` and `audio` `src` and `poster`,
/// `object` `data`, `input type=image` `src`, `link` `href` when its `rel`
/// is `stylesheet`, `icon`, `apple-touch-icon`, `preload` or
/// `modulepreload` (an embed then, not a link), and every `url()` and
/// `@import` of `<style>` elements and `style` attributes. Resolved against
/// the page's base URL like links, `data:` and other non-http URLs skipped.
///
/// With `skip_nofollow`, a link whose `rel` says `nofollow` is left out.
pub fn page_links_with(
    body: &[u8],
    page_url: &Url,
    header_charset: Option<&str>,
    extract: Extract,
    skip_nofollow: bool,
) -> PageLinks {
    let charset = charset::sniff(body, header_charset);
    let html = body.get(charset.bom_len..).unwrap_or(body);
    let found = match extract {
        Extract::Links if charset.encoding == UTF_8 => {
            found_links(html, page_url, None, skip_nofollow, None)
        }
        Extract::Links => {
            let (text, _) = charset.encoding.decode_without_bom_handling(html);
            let query = Some(charset.encoding.output_encoding()).filter(|&e| e != UTF_8);
            found_links(text.as_bytes(), page_url, query, skip_nofollow, None)
        }
        Extract::Requisites => requisites_in(html, page_url, charset.encoding, skip_nofollow),
    };
    found.with(charset)
}

/// [`page_links`] for a caller that keeps a [`KnownLinks`]: a link the
/// table holds is counted in [`PageLinks::known`] instead of being
/// resolved, and each link resolved comes with its key in
/// [`PageLinks::keys`], for the caller to [`KnownLinks::learn`] once it
/// has done with the URL what makes the next sight of it nothing to do.
/// The links (resolved and known) are the ones [`page_links`] finds, in
/// the same order, deduplicated together. Links only, no requisites; a
/// page in an encoding other than UTF-8 is read as [`page_links`] reads
/// it (its links' queries depend on the encoding), its links with no key.
pub fn page_links_known(
    body: &[u8],
    page_url: &Url,
    header_charset: Option<&str>,
    skip_nofollow: bool,
    known: &KnownLinks,
) -> PageLinks {
    let charset = charset::sniff(body, header_charset);
    if charset.encoding != UTF_8 {
        let links = Extract::Links;
        let mut page = page_links_with(body, page_url, header_charset, links, skip_nofollow);
        page.keys = vec![None; page.links.len()];
        return page;
    }
    let html = body.get(charset.bom_len..).unwrap_or(body);
    found_links(html, page_url, None, skip_nofollow, Some(known)).with(charset)
}

/// What one extraction found: links, embeds (if collected) and the
/// `<meta>` robots directives.
struct Found {
    links: Vec<Url>,
    embeds: Vec<Url>,
    robots: MetaRobots,
    known: usize,
    keys: Vec<Option<LinkKey>>,
}

impl Found {
    fn with(self, charset: Sniffed) -> PageLinks {
        PageLinks {
            links: self.links,
            embeds: self.embeds,
            charset,
            robots: self.robots,
            known: self.known,
            keys: self.keys,
        }
    }
}

/// The links of UTF-8 `html` (queries written in `query`, if not UTF-8):
/// by the scanner, or by html5gum's tokenizer where the scanner is unsure.
fn found_links(
    html: &[u8],
    page_url: &Url,
    query: Option<&'static Encoding>,
    skip: bool,
    known: Option<&KnownLinks>,
) -> Found {
    let scan = |set: &mut LinkSet<'_>| scanner::scan(html, set);
    in_passes(page_url, query, false, skip, known, scan).unwrap_or_else(|_| {
        let Ok(found) = in_passes(page_url, query, false, skip, known, |set| {
            tokenizer::tokenize(html, set);
            Ok::<(), std::convert::Infallible>(())
        });
        found
    })
}

/// The links and requisites of a page in `encoding` (its byte order mark
/// already removed), by html5gum's tokenizer: the scanner reads only link
/// attributes, and the flag that asks for requisites is off by default, so
/// the fast path stays as it is.
fn requisites_in(html: &[u8], page_url: &Url, encoding: &'static Encoding, skip: bool) -> Found {
    let text = if encoding == UTF_8 {
        Cow::Borrowed(html)
    } else {
        let (text, _) = encoding.decode_without_bom_handling(html);
        Cow::Owned(text.into_owned().into_bytes())
    };
    let query = Some(encoding.output_encoding()).filter(|&e| e != UTF_8);
    let Ok(found) = in_passes(page_url, query, true, skip, None, |set| {
        tokenizer::tokenize(&text, set);
        Ok::<(), std::convert::Infallible>(())
    });
    found
}

/// The requisites of a stylesheet fetched from `css_url`: every `url()` and
/// `@import`, resolved against the stylesheet's URL, unique, in order, at
/// most [`MAX_LINKS_PER_PAGE`]. Bytes that are not UTF-8 are
/// percent-encoded in the URLs, as in HTML.
pub fn stylesheet_requisites(css: &[u8], css_url: &Url) -> Vec<Url> {
    let mut set = LinkSet::new(css_url, None, None).with_embeds();
    set.offer_css(css);
    set.embeds.map(|e| e.urls).unwrap_or_default()
}

/// [`extract_links`] of a page in `encoding` (its byte order mark already
/// removed): decoded to UTF-8, then scanned, with queries written in the
/// page's encoding.
pub fn extract_links_in(html: &[u8], page_url: &Url, encoding: &'static Encoding) -> Vec<Url> {
    let (text, _) = encoding.decode_without_bom_handling(html);
    let query = Some(encoding.output_encoding()).filter(|&e| e != UTF_8);
    found_links(text.as_bytes(), page_url, query, false, None).links
}

/// [`extract_links`] by the hand-written scanner alone: `None` when the page
/// holds something only the full tokenizer handles exactly. Public for the
/// differential fuzz target and benchmarks.
pub fn scan_links(html: &[u8], page_url: &Url) -> Option<Vec<Url>> {
    in_passes(page_url, None, false, false, None, |set| {
        scanner::scan(html, set)
    })
    .ok()
    .map(|found| found.links)
}

/// [`extract_links`] by html5gum's tokenizer alone: the reference the
/// scanner is checked against. Public for the differential fuzz target and
/// benchmarks.
pub fn tokenize_links(html: &[u8], page_url: &Url) -> Vec<Url> {
    let Ok(found) = in_passes(page_url, None, false, false, None, |set| {
        tokenizer::tokenize(html, set);
        Ok::<(), std::convert::Infallible>(())
    });
    found.links
}

/// Run one tokenizer (`pass`) over the page: once, or a second time when a
/// `<base>` turned up after links had already been resolved against the
/// page URL. The second pass knows the base from its start, so nothing from
/// the first needs keeping (no link value is ever copied for later).
/// `query`: the encoding queries are written in, if not UTF-8; `embeds`:
/// whether requisites are collected too; `skip_nofollow`: whether links
/// whose `rel` says `nofollow` are left out; `known`: the caller's table
/// of links met before ([`page_links_known`]). What the last pass found.
fn in_passes<'p, E>(
    page_url: &'p Url,
    query: Option<&'static Encoding>,
    embeds: bool,
    skip_nofollow: bool,
    known: Option<&'p KnownLinks>,
    mut pass: impl FnMut(&mut LinkSet<'p>) -> Result<(), E>,
) -> Result<Found, E> {
    let new = |base| {
        let mut set = LinkSet::new(page_url, base, query);
        set.skip_nofollow = skip_nofollow;
        set.known = known;
        if embeds {
            set.with_embeds()
        } else {
            set
        }
    };
    let mut set = new(None);
    pass(&mut set)?;
    if let Some(base) = set.late_base.take() {
        set = new(Some(base));
        pass(&mut set)?;
    }
    Ok(Found {
        links: set.links.urls,
        embeds: set.embeds.map(|e| e.urls).unwrap_or_default(),
        robots: set.robots,
        known: set.links.known,
        keys: set.keys,
    })
}

/// The start tags that carry links, and the one attribute each is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkTag {
    /// `a`, `area`, `link`: `href`.
    Href,
    /// `frame`, `iframe`: `src`.
    Src,
    /// `base`: `href`, sets the base URL.
    Base,
    /// `meta`: `content`, read with its `name` for robots directives.
    Meta,
}

impl LinkTag {
    /// The link tag named `name`, which must already be ASCII-lowercase.
    /// A name added here must pass the scanner's `may_act_on` too (a test
    /// there fails until it does).
    fn classify(name: &[u8]) -> Option<LinkTag> {
        match name {
            b"a" | b"area" | b"link" => Some(LinkTag::Href),
            b"frame" | b"iframe" => Some(LinkTag::Src),
            b"base" => Some(LinkTag::Base),
            b"meta" => Some(LinkTag::Meta),
            _ => None,
        }
    }

    fn attribute(self) -> &'static [u8] {
        match self {
            LinkTag::Href | LinkTag::Base => b"href",
            LinkTag::Src => b"src",
            LinkTag::Meta => b"content",
        }
    }

    /// [`LinkTag::attribute`] as a list, as the tokenizer reads them.
    fn attributes(self) -> &'static [&'static [u8]] {
        match self {
            LinkTag::Href => &[b"href", b"rel"],
            LinkTag::Base => &[b"href"],
            LinkTag::Src => &[b"src"],
            LinkTag::Meta => &[b"content", b"name"],
        }
    }
}

/// What a page's link tags add up to, whichever tokenizer found them: the
/// base URL, the resolved links (and embeds, when asked for), their dedup
/// and the cap. Owned by one pass of one extraction; the only allocations
/// are the returned `Url`s and the dedup tables.
struct LinkSet<'p> {
    page_url: &'p Url,
    /// The first `<base href>`, once seen and usable.
    base: Option<Url>,
    base_seen: bool,
    /// A link value came before any `<base>` (it was resolved against
    /// `page_url`).
    linked_before_base: bool,
    /// A usable `<base>` came after such a link: this pass stops, and
    /// another starts with this base (see [`in_passes`]).
    late_base: Option<Url>,
    /// The page's encoding, for the queries of its links (None: UTF-8).
    query: Option<&'static Encoding>,
    links: Urls,
    /// Page requisites, when asked for ([`LinkSet::with_embeds`]).
    embeds: Option<Urls>,
    /// What the page's `<meta>` tags say to robots.
    robots: MetaRobots,
    /// Links whose `rel` says `nofollow` are left out (`--skip-nofollow`).
    skip_nofollow: bool,
    hasher: foldhash::fast::RandomState,
    /// The caller's links met before ([`page_links_known`]): those it
    /// holds are counted, not resolved, and every link is deduplicated by
    /// its hash of the URL's text.
    known: Option<&'p KnownLinks>,
    /// With `known`: the key of each of `links` in turn.
    keys: Vec<Option<LinkKey>>,
}

/// Resolved URLs, unique, in order of first appearance.
struct Urls {
    urls: Vec<Url>,
    /// Hash of a URL's text -> its index in `urls` (collisions are checked),
    /// or [`KNOWN`]. (Its keys are hashes already: foldhash, not the
    /// default SipHash, hashes them for the table.)
    seen: foldhash::HashMap<u64, usize>,
    /// URLs counted but not kept: known to the caller ([`KnownLinks`]).
    known: usize,
}

/// In [`Urls::seen`], a URL known to the caller, not in `urls`: a URL
/// whose text has its hash is taken for it (see [`KnownLinks`] on
/// collisions).
const KNOWN: usize = usize::MAX;

impl Urls {
    fn new() -> Self {
        Urls {
            urls: Vec::with_capacity(LINKS_EXPECTED),
            seen: foldhash::HashMap::with_capacity_and_hasher(LINKS_EXPECTED, Default::default()),
            known: 0,
        }
    }

    fn is_full(&self) -> bool {
        self.urls.len().saturating_add(self.known) >= MAX_LINKS_PER_PAGE
    }

    /// Keep `url` if it is new.
    fn insert(&mut self, url: Url, hasher: &foldhash::fast::RandomState) {
        let hash = hasher.hash_one(url.as_str());
        self.insert_hashed(url, hash);
    }

    /// Keep `url`, whose text hashes to `hash`, if it is new; whether it was.
    fn insert_hashed(&mut self, url: Url, hash: u64) -> bool {
        let index = self.urls.len();
        match self.seen.entry(hash) {
            Entry::Vacant(slot) => {
                slot.insert(index);
            }
            Entry::Occupied(slot) => {
                let first = *slot.get();
                if first == KNOWN || self.urls.get(first) == Some(&url) {
                    return false;
                }
                // A true 64-bit collision (keys are random per call): fall
                // back to comparing with every URL kept so far.
                if self.urls.contains(&url) {
                    return false;
                }
            }
        }
        self.urls.push(url);
        true
    }

    /// Count a URL known to the caller, whose text hashes to `hash`, if it
    /// is new on this page.
    fn insert_known(&mut self, hash: u64) {
        if let Entry::Vacant(slot) = self.seen.entry(hash) {
            slot.insert(KNOWN);
            self.known = self.known.saturating_add(1);
        }
    }
}

/// Room for the links of an ordinary page before the set's tables grow.
const LINKS_EXPECTED: usize = 32;

impl<'p> LinkSet<'p> {
    /// A set for one pass; `base`: the page's `<base>`, if an earlier pass
    /// found it late (later `<base>` tags are then ignored, as in HTML).
    fn new(page_url: &'p Url, base: Option<Url>, query: Option<&'static Encoding>) -> Self {
        LinkSet {
            page_url,
            query,
            base_seen: base.is_some(),
            base,
            linked_before_base: false,
            late_base: None,
            links: Urls::new(),
            embeds: None,
            robots: MetaRobots::default(),
            skip_nofollow: false,
            hasher: foldhash::fast::RandomState::default(),
            known: None,
            keys: Vec::new(),
        }
    }

    /// This set collects page requisites too.
    fn with_embeds(mut self) -> Self {
        self.embeds = Some(Urls::new());
        self
    }

    /// Whether requisites are collected: the tokenizer then reads every
    /// element ([`LinkSet::offer_element`]), not only link tags.
    fn wants_embeds(&self) -> bool {
        self.embeds.is_some()
    }

    /// Read no further: [`MAX_LINKS_PER_PAGE`] links (and embeds, if
    /// collected) reached, or a late `<base>` means this pass starts over.
    fn is_done(&self) -> bool {
        self.late_base.is_some()
            || (self.links.is_full() && self.embeds.as_ref().is_none_or(Urls::is_full))
    }

    /// A complete start tag `tag` whose link attribute had `value` (raw
    /// bytes, character references already decoded; empty for `<a href>`).
    fn offer(&mut self, tag: LinkTag, value: &[u8]) {
        match tag {
            LinkTag::Base => {
                if !self.base_seen {
                    self.set_base(value);
                }
            }
            LinkTag::Href | LinkTag::Src => {
                self.linked_before_base |= !self.base_seen;
                self.add(value);
            }
            // Its name too: [`LinkSet::meta`].
            LinkTag::Meta => {}
        }
    }

    /// A complete start tag of `element` whose attributes (as
    /// [`Element::attributes`] lists them) had `values`: its link, base or
    /// requisites, and the `url()`s of its `style`.
    fn offer_element(&mut self, element: Element, values: &Values<'_>) {
        let [first, second, _] = *values;
        let attributes = element.attributes();
        let style = values
            .get(attributes.len().saturating_sub(1))
            .copied()
            .flatten();
        let (first, second) = if attributes.len() == requisites::MAX_ATTRIBUTES {
            (first, second)
        } else {
            (first, None)
        };
        match element {
            Element::Base => self.offer_some(LinkTag::Base, first),
            Element::Anchor if self.skips(second) => {}
            Element::Anchor | Element::Frame => self.offer_some(LinkTag::Href, first),
            Element::Link => {
                if second.is_some_and(requisites::rel_is_requisite) {
                    self.offer_embed_some(first);
                } else {
                    self.offer_some(LinkTag::Href, first);
                }
            }
            Element::Image => {
                self.offer_embed_some(first);
                if let Some(set) = second {
                    requisites::srcset(set, &mut |url| self.offer_embed(url));
                }
            }
            Element::Script | Element::Object => self.offer_embed_some(first),
            Element::Meta => self.meta(second, first),
            Element::Media => {
                self.offer_embed_some(first);
                self.offer_embed_some(second);
            }
            Element::Input => {
                if second.is_some_and(requisites::is_image_input) {
                    self.offer_embed_some(first);
                }
            }
            Element::Other => {}
        }
        if let Some(css) = style {
            self.offer_css(css);
        }
    }

    /// Whether a link whose `rel` is `rel` is left out: with
    /// `--skip-nofollow`, when its tokens name `nofollow`.
    fn skips(&self, rel: Option<&[u8]>) -> bool {
        self.skip_nofollow
            && rel.is_some_and(|rel| {
                rel.split(|b| b.is_ascii_whitespace())
                    .any(|word| word.eq_ignore_ascii_case(b"nofollow"))
            })
    }

    /// A complete `<meta>` tag with these `name` and `content` values.
    fn meta(&mut self, name: Option<&[u8]>, content: Option<&[u8]>) {
        if let (Some(name), Some(content)) = (name, content) {
            self.robots.add(name, content);
        }
    }

    fn offer_some(&mut self, tag: LinkTag, value: Option<&[u8]>) {
        if let Some(value) = value {
            self.offer(tag, value);
        }
    }

    fn offer_embed_some(&mut self, value: Option<&[u8]>) {
        if let Some(value) = value {
            self.offer_embed(value);
        }
    }

    /// The text of a `<style>` element or a `style` attribute: its `url()`s
    /// and `@import`s are embeds.
    fn offer_css(&mut self, css: &[u8]) {
        css::scan(css, &mut |url| self.offer_embed(url));
    }

    /// One raw requisite URL value (ignored unless embeds are collected).
    fn offer_embed(&mut self, raw: &[u8]) {
        if self.late_base.is_some() || self.embeds.as_ref().is_none_or(Urls::is_full) {
            return;
        }
        self.linked_before_base |= !self.base_seen;
        if let Some(url) = self.resolve(raw) {
            if let Some(embeds) = &mut self.embeds {
                embeds.insert(url, &self.hasher);
            }
        }
    }

    fn set_base(&mut self, value: &[u8]) {
        self.base_seen = true;
        let text = bytes_to_str(value);
        self.base = urls::resolve(
            self.page_url,
            text.trim_matches(|c: char| c.is_ascii_whitespace()),
            self.query,
        )
        .filter(|b| matches!(b.scheme(), "http" | "https"));
        if self.linked_before_base {
            self.late_base = self.base.take();
        }
    }

    /// Resolve one raw link value and keep it if it is new (or, if the
    /// caller's table knows it, count it).
    fn add(&mut self, raw: &[u8]) {
        if self.late_base.is_some() || self.links.is_full() {
            return;
        }
        let Some(known) = self.known else {
            if let Some(url) = self.resolve(raw) {
                self.links.insert(url, &self.hasher);
            }
            return;
        };
        let text = bytes_to_str(raw);
        // Trimmed as `urls::join_in` trims it, so the key names what resolves.
        let value = text.trim_matches(|c: char| c.is_ascii_whitespace());
        let base = self.base.as_ref().unwrap_or(self.page_url);
        let key = known.key(base, value);
        if let Some(hash) = key.and_then(|key| known.recall(key)) {
            self.links.insert_known(hash);
            return;
        }
        if let Some(url) = urls::join_in(base, value, self.query) {
            let hash = known.url_hash(url.as_str());
            if self.links.insert_hashed(url, hash) {
                self.keys.push(key);
            }
        }
    }

    /// A raw value resolved against the base URL: normalised, `http` or
    /// `https`, or `None`.
    fn resolve(&self, raw: &[u8]) -> Option<Url> {
        let text = bytes_to_str(raw);
        let base = self.base.as_ref().unwrap_or(self.page_url);
        urls::join_in(base, &text, self.query)
    }
}

/// Link values as text: UTF-8 as is; any byte that is not valid UTF-8 is
/// percent-encoded (`%E9`) so it survives URL parsing unchanged.
fn bytes_to_str(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(bytes.len().saturating_add(8));
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for &b in chunk.invalid() {
            use std::fmt::Write as _;
            let _ = write!(out, "%{b:02X}");
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod known_tests;
#[cfg(test)]
mod tests;

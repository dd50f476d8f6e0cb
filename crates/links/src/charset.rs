//! Which character encoding a page is in, by the HTML Standard's rules
//! ("determining the character encoding"), so that its links come out as a
//! browser would follow them.
//!
//! In order: a byte order mark; the `charset` of the HTTP `Content-Type`;
//! a `<meta charset>` or `<meta http-equiv=Content-Type content=...>` found
//! by the standard's *prescan* of the first 1,024 bytes; else the encoding
//! of an XML declaration the bytes start with (`<?xml version="1.0"
//! encoding="Shift_JIS"?>`, the standard's "get an XML encoding"); else UTF-8 if the
//! bytes are UTF-8, windows-1252 if they are not (what a browser without a
//! locale guess ends up with on legacy pages). Encodings and their labels
//! are encoding_rs' (Firefox's implementation of the WHATWG Encoding
//! Standard).
//!
//! The prescan is written here, step for step after the standard, because
//! no maintained crate offers it on its own (encoding_rs decodes but does
//! not sniff; html5ever and lol_html keep theirs inside their parsers).
//!
//! Not decoding (that is encoding_rs, called by `extract`), and no I/O.
// Lints: the crate's (lib.rs) apply here too.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// How many bytes the prescan reads, as the standard advises.
pub const PRESCAN_BYTES: usize = 1024;

/// Where a page's encoding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// A byte order mark at the start of the body.
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta>` declaration found by the prescan.
    Meta,
    /// The XML declaration the body starts with (no `<meta>` said).
    Xml,
    /// Nothing declared: UTF-8 if the bytes are UTF-8, else windows-1252.
    Default,
}

impl Source {
    /// The name records use.
    pub fn name(self) -> &'static str {
        match self {
            Source::Bom => "bom",
            Source::Header => "header",
            Source::Meta => "meta",
            Source::Xml => "xml",
            Source::Default => "default",
        }
    }
}

/// A page's encoding and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// The encoding the page is read in.
    pub encoding: &'static Encoding,
    /// Which rule chose it.
    pub source: Source,
    /// Bytes of byte order mark to skip before decoding.
    pub bom_len: usize,
}

/// The encoding of an HTML `body` served with `Content-Type` charset
/// `header_charset` (the parameter's value, if any).
pub fn sniff(body: &[u8], header_charset: Option<&str>) -> Sniffed {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return Sniffed {
            encoding,
            source: Source::Bom,
            bom_len,
        };
    }
    let found = |encoding, source| Sniffed {
        encoding,
        source,
        bom_len: 0,
    };
    if let Some(encoding) = header_charset.and_then(|l| Encoding::for_label(l.as_bytes())) {
        return found(encoding, Source::Header);
    }
    let start = body.get(..PRESCAN_BYTES).unwrap_or(body);
    if let Some(encoding) = prescan(start) {
        return found(encoding, Source::Meta);
    }
    if let Some(encoding) = xml_encoding(start) {
        return found(encoding, Source::Xml);
    }
    let utf8 = match std::str::from_utf8(body) {
        Ok(_) => true,
        // A multi-byte character cut by the body cap is still UTF-8.
        Err(e) => e.error_len().is_none(),
    };
    found(if utf8 { UTF_8 } else { WINDOWS_1252 }, Source::Default)
}

/// The encoding a `<meta>` in `bytes` declares, by the standard's "prescan a
/// byte stream to determine its encoding"; None if the bytes end first.
pub fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    if bytes.starts_with(&[0x3C, 0, 0x3F, 0, 0x78, 0]) {
        return Some(UTF_16LE);
    }
    if bytes.starts_with(&[0, 0x3C, 0, 0x3F, 0, 0x78]) {
        return Some(UTF_16BE);
    }
    let mut scan = Scan { bytes, at: 0 };
    loop {
        let rest = bytes.get(scan.at..)?;
        if rest.starts_with(b"<!--") {
            // To the first '>' after two dashes; they may be the opening's.
            let from = scan.at.saturating_add(2);
            let close = bytes.get(from..)?.windows(3).position(|w| w == b"-->")?;
            scan.at = from.saturating_add(close).saturating_add(2);
        } else if is_meta_start(rest) {
            scan.at = scan.at.saturating_add(6);
            if let Some(encoding) = scan.meta()? {
                return Some(encoding);
            }
            // `scan.meta` stops on the tag's '>' (or one past it).
            continue;
        } else if rest.len() >= 2
            && rest.first() == Some(&b'<')
            && (rest.get(1).is_some_and(u8::is_ascii_alphabetic)
                || rest.get(1) == Some(&b'/') && rest.get(2).is_some_and(u8::is_ascii_alphabetic))
        {
            scan.at = scan.at.saturating_add(1);
            while !matches!(scan.byte()?, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'>') {
                scan.at = scan.at.saturating_add(1);
            }
            while scan.attribute()?.is_some() {}
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            let close = rest.get(1..)?.iter().position(|&b| b == b'>')?;
            scan.at = scan.at.saturating_add(1).saturating_add(close);
        }
        scan.at = scan.at.saturating_add(1);
    }
}

/// The encoding an XML declaration at the very start of `bytes` names,
/// by the HTML Standard's "get an XML encoding": `<?xml`, then within the
/// declaration (up to its first `>`) `encoding`, `=` and a quoted label
/// (bytes up to 0x20 may surround the `=`; none may be in the label).
/// UTF-16 labels mean UTF-8 here (the bytes were read as ASCII).
pub fn xml_encoding(bytes: &[u8]) -> Option<&'static Encoding> {
    let rest = bytes.strip_prefix(b"<?xml")?;
    let declaration = rest.get(..memchr::memchr(b'>', rest)?)?;
    let at = memchr::memmem::find(declaration, b"encoding")?;
    let rest = declaration.get(at.saturating_add(8)..)?;
    let rest = rest.get(rest.iter().position(|&b| b > 0x20)?..)?;
    let rest = rest.strip_prefix(b"=")?;
    let rest = rest.get(rest.iter().position(|&b| b > 0x20)?..)?;
    let (&quote, rest) = rest.split_first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let label = rest.get(..memchr::memchr(quote, rest)?)?;
    if label.iter().any(|&b| b <= 0x20) {
        return None;
    }
    let encoding = Encoding::for_label(label)?;
    Some(if encoding == UTF_16BE || encoding == UTF_16LE {
        UTF_8
    } else {
        encoding
    })
}

/// `<meta` (any case) followed by whitespace or `/`.
fn is_meta_start(rest: &[u8]) -> bool {
    rest.get(..5)
        .is_some_and(|tag| tag.eq_ignore_ascii_case(b"<meta"))
        && matches!(
            rest.get(5),
            Some(b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/')
        )
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// The prescan's position in its bytes. Every method returns None when the
/// bytes run out, which ends the prescan.
struct Scan<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Scan<'_> {
    fn byte(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn advance(&mut self) -> Option<u8> {
        self.at = self.at.saturating_add(1);
        self.byte()
    }

    /// A `<meta>`'s attributes, from just past `<meta` and its space: the
    /// encoding it declares, if it declares one the way the standard
    /// accepts. Leaves the position on the tag's `>` (or past it).
    fn meta(&mut self) -> Option<Option<&'static Encoding>> {
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut got_pragma = false;
        let mut need_pragma: Option<bool> = None;
        let mut charset: Option<&'static Encoding> = None;
        let mut charset_failed = false;
        while let Some((name, value)) = self.attribute()? {
            if names.contains(&name) {
                continue;
            }
            match name.as_slice() {
                b"http-equiv" => got_pragma |= value == b"content-type",
                b"content" if charset.is_none() && !charset_failed => {
                    if let Some(found) = charset_from_content(&value) {
                        charset = found;
                        charset_failed = found.is_none();
                        need_pragma = Some(true);
                    }
                }
                b"charset" => {
                    charset = Encoding::for_label(&value);
                    charset_failed = charset.is_none();
                    need_pragma = Some(false);
                }
                _ => {}
            }
            names.push(name);
        }
        let declared = match need_pragma {
            None => None,
            Some(true) if !got_pragma => None,
            Some(_) => charset,
        };
        Some(declared.map(|encoding| {
            if encoding == UTF_16BE || encoding == UTF_16LE {
                UTF_8
            } else if encoding == X_USER_DEFINED {
                WINDOWS_1252
            } else {
                encoding
            }
        }))
    }

    /// The standard's "get an attribute": the next attribute's name and
    /// value (ASCII-lowercased), or `Some(None)` at the tag's `>`.
    fn attribute(&mut self) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
        let mut b = self.byte()?;
        while is_space(b) || b == b'/' {
            b = self.advance()?;
        }
        if b == b'>' {
            return Some(None);
        }
        let mut name = Vec::new();
        loop {
            match b {
                b'=' if !name.is_empty() => {
                    self.advance()?;
                    return self.value(name).map(Some);
                }
                b if is_space(b) => break,
                b'/' | b'>' => return Some(Some((name, Vec::new()))),
                b => name.push(b.to_ascii_lowercase()),
            }
            b = self.advance()?;
        }
        // Spaces after the name: an '=' may still come.
        while is_space(b) {
            b = self.advance()?;
        }
        if b != b'=' {
            return Some(Some((name, Vec::new())));
        }
        self.advance()?;
        self.value(name).map(Some)
    }

    /// An attribute's value, from just past its `=`.
    fn value(&mut self, name: Vec<u8>) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut value = Vec::new();
        let mut b = self.byte()?;
        while is_space(b) {
            b = self.advance()?;
        }
        match b {
            b'"' | b'\'' => {
                let quote = b;
                loop {
                    let c = self.advance()?;
                    if c == quote {
                        self.advance();
                        return Some((name, value));
                    }
                    value.push(c.to_ascii_lowercase());
                }
            }
            b'>' => return Some((name, value)),
            b => value.push(b.to_ascii_lowercase()),
        }
        loop {
            let c = self.advance()?;
            if is_space(c) || c == b'>' {
                return Some((name, value));
            }
            value.push(c.to_ascii_lowercase());
        }
    }
}

/// The standard's "extracting a character encoding from a meta element":
/// the `charset=` in a `content` value. None: no `charset=` at all;
/// `Some(None)`: one naming no known encoding.
fn charset_from_content(content: &[u8]) -> Option<Option<&'static Encoding>> {
    let mut at = 0usize;
    loop {
        let found = content
            .get(at..)?
            .windows(7)
            .position(|w| w.eq_ignore_ascii_case(b"charset"))?;
        at = at.saturating_add(found).saturating_add(7);
        let rest = content.get(at..)?;
        let after = rest
            .iter()
            .position(|&b| !is_space(b))
            .unwrap_or(rest.len());
        if rest.get(after) != Some(&b'=') {
            at = at.saturating_add(after);
            continue;
        }
        let value = rest.get(after.saturating_add(1)..)?;
        let value = value.get(value.iter().position(|&b| !is_space(b))?..)?;
        return match value.first() {
            Some(&quote @ (b'"' | b'\'')) => {
                let inner = value.get(1..)?;
                let end = inner.iter().position(|&b| b == quote)?;
                Some(Encoding::for_label(inner.get(..end)?))
            }
            Some(_) => {
                let end = value
                    .iter()
                    .position(|&b| is_space(b) || b == b';')
                    .unwrap_or(value.len());
                Some(Encoding::for_label(value.get(..end)?))
            }
            None => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{EUC_JP, SHIFT_JIS, WINDOWS_1251};

    fn meta(html: &str) -> Option<&'static str> {
        prescan(html.as_bytes()).map(Encoding::name)
    }

    #[test]
    fn meta_charset_in_every_spelling() {
        for (html, want) in [
            ("<meta charset=shift_jis>", Some("Shift_JIS")),
            ("<META CHARSET=\"Windows-1251\">", Some("windows-1251")),
            ("<meta charset='latin1'/>", Some("windows-1252")),
            (
                "<!doctype html><html><head><meta charset=euc-jp>",
                Some("EUC-JP"),
            ),
            ("<meta\tcharset = koi8-r >", Some("KOI8-R")),
            ("<meta/charset=utf-8>", Some("UTF-8")),
            (
                "<meta http-equiv=Content-Type content='text/html; charset=windows-1251'>",
                Some("windows-1251"),
            ),
            (
                "<meta content=\"text/html;charset = 'gbk'\" http-equiv=\"content-type\">",
                Some("GBK"),
            ),
            ("<meta charset=utf-16le>", Some("UTF-8")),
            ("<meta charset=x-user-defined>", Some("windows-1252")),
        ] {
            assert_eq!(meta(html), want, "{html}");
        }
    }

    #[test]
    fn what_the_prescan_must_not_take() {
        for html in [
            // content= without http-equiv is not a declaration.
            "<meta content='text/html; charset=koi8-r'>",
            "<!-- <meta charset=koi8-r> -->",
            "<meta charset=no-such-encoding>",
            "<title><meta charset=koi8-r",
            "<metacharset=koi8-r>",
            "<div data-x='<meta charset=koi8-r>'>",
            "",
        ] {
            assert_eq!(meta(html), None, "{html}");
        }
        // A comment closed by its own dashes ends there.
        assert_eq!(meta("<!--><meta charset=koi8-r>"), Some("KOI8-R"));
        // A repeated attribute counts once, the first time.
        assert_eq!(meta("<meta charset=gbk charset=koi8-r>"), Some("GBK"));
        // A bad charset= in content does not stop a later meta.
        assert_eq!(
            meta("<meta http-equiv=content-type content='charset=nope'><meta charset=gbk>"),
            Some("GBK")
        );
    }

    #[test]
    fn the_prescan_reads_only_what_it_is_given() {
        let late = format!("<p>{}</p><meta charset=koi8-r>", "x".repeat(PRESCAN_BYTES));
        assert_eq!(sniff(late.as_bytes(), None).source, Source::Default);
        assert_eq!(meta(&late), Some("KOI8-R"));
    }

    #[test]
    fn bom_then_header_then_meta_then_default() {
        let page = b"<meta charset=euc-jp><a href=/x>";
        let s = sniff(&[&[0xEF, 0xBB, 0xBF][..], page].concat(), Some("shift_jis"));
        assert_eq!((s.encoding, s.source, s.bom_len), (UTF_8, Source::Bom, 3));
        let s = sniff(&[0xFF, 0xFE, b'<', 0], None);
        assert_eq!(
            (s.encoding, s.source, s.bom_len),
            (UTF_16LE, Source::Bom, 2)
        );
        let s = sniff(page, Some(" Shift_JIS "));
        assert_eq!((s.encoding, s.source), (SHIFT_JIS, Source::Header));
        let s = sniff(page, Some("no-such-thing"));
        assert_eq!((s.encoding, s.source), (EUC_JP, Source::Meta));
        let s = sniff("<a href=/é>".as_bytes(), None);
        assert_eq!((s.encoding, s.source), (UTF_8, Source::Default));
        let s = sniff(b"<a href=/\xe9>", None);
        assert_eq!((s.encoding, s.source), (WINDOWS_1252, Source::Default));
        // UTF-8 cut inside a character by the body cap is still UTF-8.
        let cut = &"<p>Привет".as_bytes()[..8];
        assert_eq!(sniff(cut, None).encoding, UTF_8);
        assert_eq!(sniff(b"x", Some("cp1251")).encoding, WINDOWS_1251);
    }

    #[test]
    fn an_xml_declaration_names_the_encoding_when_no_meta_does() {
        let xml = |s: &str| xml_encoding(s.as_bytes()).map(Encoding::name);
        for (bytes, want) in [
            (
                "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>",
                Some("Shift_JIS"),
            ),
            (
                "<?xml encoding='windows-1251'?><html>",
                Some("windows-1251"),
            ),
            ("<?xml encoding \x00= \t'koi8-r'>", Some("KOI8-R")),
            ("<?xml encoding='utf-16le'?>", Some("UTF-8")),
            // Not at the very start, not in the declaration, unquoted,
            // spaces in the label, no such encoding, no end of declaration.
            (" <?xml encoding='koi8-r'?>", None),
            ("<?xml?> encoding='koi8-r'", None),
            ("<?xml encoding=koi8-r?>", None),
            ("<?xml encoding=' koi8-r'?>", None),
            ("<?xml encoding='koi8-x'?>", None),
            ("<?xml encoding='koi8-r'", None),
            ("<?xmx encoding='koi8-r'?>", None),
        ] {
            assert_eq!(xml(bytes), want, "{bytes:?}");
        }
        let page = b"<?xml version='1.0' encoding='euc-jp'?><html><head><title>x</title>";
        let s = sniff(page, None);
        assert_eq!((s.encoding, s.source), (EUC_JP, Source::Xml));
        // A <meta> wins over it; the header over both.
        let both = b"<?xml encoding='euc-jp'?><meta charset=shift_jis>";
        assert_eq!(sniff(both, None).source, Source::Meta);
        assert_eq!(sniff(page, Some("koi8-r")).source, Source::Header);
    }

    #[test]
    fn any_bytes_end_the_prescan_without_a_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"<>!-/?='\" \tmetaMETAcharsethttp-equivcontent;x<?xml encoding";
        for _ in 0..20_000 {
            let len = (seed % 64) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = prescan(&bytes);
            let _ = xml_encoding(&bytes);
        }
    }
}

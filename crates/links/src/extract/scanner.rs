//! The fast link extractor: a hand-written scanner for the part of the
//! WHATWG HTML tokenizer that decides where tags, link attributes and their
//! values are.
//!
//! It jumps from `<` to `<` with `memchr`, walks each tag's attributes with
//! the tokenizer's own rules (so a quoted `>` does not end a tag and
//! `href=/about` is a value), skips comments, doctypes and bogus comments,
//! and jumps over raw-text elements (`<script>`, `<style>`, `<title>`, ...)
//! to their end tag. Link values are slices of the page; only one holding
//! `&amp;` is copied.
//!
//! What it is not: a full tokenizer. Where its answer could differ from
//! html5gum's, it returns [`Unsure`] and the caller runs the tokenizer over
//! the whole page instead:
//! - a character reference other than `&amp;` inside a link value (named
//!   references need the 2,231-entry table and its legacy rules; numeric
//!   ones their replacement table),
//! - a NUL byte inside a link value (the tokenizer makes it U+FFFD),
//! - `<!--` inside a `<script>` (the "script data escaped" states, where
//!   `<script>` nests).
//!
//! Everything else the tokenizer does that could move a tag boundary is
//! reproduced here: CR and CRLF count as whitespace, as the input stream
//! preprocessing makes them LF; an attribute name may start with `=`; quotes
//! only open a value right after `=`; `<!-->`, `<!--->` and `--!>` end
//! comments; `<!DOCTYPE ...>`, `<![CDATA[...>`, `<?...>` and `</ x>` end at
//! the first `>`; a tag cut off by the end of input is dropped.
use std::borrow::Cow;

use html5gum::State;
use memchr::{memchr, memchr2, memmem};

use super::tokenizer::{next_state, NAME_CAP};
use super::{LinkSet, LinkTag};

/// The page holds something only the full tokenizer handles exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unsure;

/// Offer every link tag of `html` to `set`, in document order, stopping
/// early when the set is done.
pub(super) fn scan(html: &[u8], set: &mut LinkSet<'_>) -> Result<(), Unsure> {
    let mut s = Scanner { html, pos: 0 };
    while !set.is_done() {
        let Some(lt) = s.find(b'<') else {
            return Ok(());
        };
        s.pos = lt.saturating_add(1);
        let more = match s.peek() {
            Some(c) if c.is_ascii_alphabetic() => s.start_tag(set)?,
            Some(b'/') => {
                s.pos = s.pos.saturating_add(1);
                match s.peek() {
                    Some(c) if c.is_ascii_alphabetic() => s.tag().is_some(),
                    Some(b'>') => {
                        s.pos = s.pos.saturating_add(1);
                        true
                    }
                    None => false,
                    Some(_) => s.skip_past(b'>'),
                }
            }
            Some(b'!') => {
                s.pos = s.pos.saturating_add(1);
                if s.rest().starts_with(b"--") {
                    s.pos = s.pos.saturating_add(2);
                    s.comment()
                } else {
                    // DOCTYPE, CDATA (a bogus comment outside foreign
                    // content) and bogus comments all end at the first `>`.
                    s.skip_past(b'>')
                }
            }
            Some(b'?') => s.skip_past(b'>'),
            // A `<` that opens nothing is text; the byte after it is read
            // again in the data state.
            Some(_) => true,
            None => false,
        };
        if !more {
            return Ok(());
        }
    }
    Ok(())
}

/// Whitespace between attributes: the tokenizer's tab, LF, FF and space,
/// plus CR, which input preprocessing turns into LF.
#[inline]
fn is_space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | 0x0C | b'\r' | b' ')
}

/// A tag read up to its `>`.
struct ClosedTag<'h> {
    /// The raw value of the attribute asked for, if the tag had one (the
    /// first such attribute; empty for a valueless one).
    value: Option<&'h [u8]>,
}

struct Scanner<'h> {
    html: &'h [u8],
    /// Next byte to read.
    pos: usize,
}

impl<'h> Scanner<'h> {
    #[inline]
    fn rest(&self) -> &'h [u8] {
        self.html.get(self.pos..).unwrap_or_default()
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.html.get(self.pos).copied()
    }

    /// Absolute position of the next `byte` at or after `pos`.
    #[inline]
    fn find(&self, byte: u8) -> Option<usize> {
        memchr(byte, self.rest()).map(|i| self.pos.saturating_add(i))
    }

    /// Move past the next `byte`; false at end of input.
    #[inline]
    fn skip_past(&mut self, byte: u8) -> bool {
        match self.find(byte) {
            Some(i) => {
                self.pos = i.saturating_add(1);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.pos = self.pos.saturating_add(1);
        }
    }

    /// A start tag whose name begins at `pos`: offer its link, then jump
    /// over the element's content if it is raw text. False at end of input.
    fn start_tag(&mut self, set: &mut LinkSet<'_>) -> Result<bool, Unsure> {
        let name_start = self.pos;
        let name_end = self.tag_name_end();
        let mut lower = [0u8; NAME_CAP];
        let name = match self.html.get(name_start..name_end) {
            Some(name) if name.len() <= NAME_CAP => {
                let lower = lower.get_mut(..name.len()).unwrap_or_default();
                lower.copy_from_slice(name);
                lower.make_ascii_lowercase();
                &*lower
            }
            // Too long to be any name we act on.
            _ => &[],
        };
        let link = LinkTag::classify(name);
        self.pos = name_end;
        let Some(ClosedTag { value }) = self.attributes(link.map(LinkTag::attribute)) else {
            return Ok(false);
        };
        if link == Some(LinkTag::Meta) {
            // The `name` too: the tag read again for it (a few tags a
            // page, so the other tags' one-attribute read stays as is).
            let name = self
                .reread(name_end, b"name")
                .map(decode_value)
                .transpose()?;
            let content = value.map(decode_value).transpose()?;
            set.meta(name.as_deref(), content.as_deref());
        } else if let (Some(link), Some(value)) = (link, value) {
            // With --skip-nofollow a link's `rel` too: the tag read again
            // for it, only then.
            let nofollow = link == LinkTag::Href
                && set.skip_nofollow
                && set.skips(self.reread(name_end, b"rel"));
            if !nofollow {
                set.offer(link, &decode_value(value)?);
            }
        }
        match next_state(name) {
            None => Ok(true),
            Some(State::PlainText) => Ok(false),
            Some(State::ScriptData) => self.raw_text(name, true),
            Some(_) => self.raw_text(name, false),
        }
    }

    /// The value of attribute `name` (ASCII-lowercase) of the tag just
    /// read, whose attributes start at `from`: the tag read again, for
    /// the few tags whose second attribute counts.
    fn reread(&self, from: usize, name: &[u8]) -> Option<&'h [u8]> {
        let tag = self.html.get(from..self.pos)?;
        Scanner { html: tag, pos: 0 }.attributes(Some(name))?.value
    }

    /// End of the tag name starting at `pos` (which is not consumed).
    #[inline]
    fn tag_name_end(&self) -> usize {
        let rest = self.rest();
        let len = rest
            .iter()
            .position(|&c| is_space(c) || c == b'/' || c == b'>')
            .unwrap_or(rest.len());
        self.pos.saturating_add(len)
    }

    /// Read a tag whose value is not wanted (an end tag) from its name at
    /// `pos` to its `>`. `None` when the input ends inside the tag.
    fn tag(&mut self) -> Option<ClosedTag<'h>> {
        self.pos = self.tag_name_end();
        self.attributes(None)
    }

    /// Read a tag from just after its name to its `>`, keeping the value of
    /// the first attribute named `want` (ASCII-lowercase). `None` when the
    /// input ends inside the tag, which drops it.
    fn attributes(&mut self, want: Option<&[u8]>) -> Option<ClosedTag<'h>> {
        let mut value: Option<&'h [u8]> = None;
        // Tag name state, then the attribute states, by the byte after the
        // name or the last attribute.
        loop {
            match self.peek() {
                None => return None,
                Some(b'>') => {
                    self.pos = self.pos.saturating_add(1);
                    return Some(ClosedTag { value });
                }
                Some(b'/') => {
                    // Self-closing start tag state: `/>` ends the tag,
                    // anything else is read again as before an attribute.
                    self.pos = self.pos.saturating_add(1);
                    continue;
                }
                Some(c) if is_space(c) => {
                    self.pos = self.pos.saturating_add(1);
                    continue;
                }
                Some(_) => {}
            }
            // Attribute name state; its first byte may be `=`.
            let name_start = self.pos;
            self.pos = self.pos.saturating_add(1);
            while let Some(c) = self.peek() {
                if is_space(c) || matches!(c, b'/' | b'>' | b'=') {
                    break;
                }
                self.pos = self.pos.saturating_add(1);
            }
            let wanted = value.is_none()
                && want.is_some_and(|want| {
                    self.html
                        .get(name_start..self.pos)
                        .is_some_and(|name| name.eq_ignore_ascii_case(want))
                });
            // After attribute name state.
            self.skip_spaces();
            if self.peek() != Some(b'=') {
                if wanted {
                    value = Some(&[]);
                }
                continue;
            }
            self.pos = self.pos.saturating_add(1);
            // Before attribute value state.
            self.skip_spaces();
            let attr_value = match self.peek() {
                None => return None,
                Some(quote @ (b'"' | b'\'')) => {
                    let start = self.pos.saturating_add(1);
                    self.pos = start;
                    let end = self.find(quote)?;
                    self.pos = end.saturating_add(1);
                    // After attribute value (quoted): whatever follows is
                    // read as before an attribute, as the loop does.
                    self.html.get(start..end)
                }
                // A missing value: the attribute's value is empty.
                Some(b'>') => Some(&[][..]),
                Some(_) => {
                    let start = self.pos;
                    while let Some(c) = self.peek() {
                        if is_space(c) || c == b'>' {
                            break;
                        }
                        self.pos = self.pos.saturating_add(1);
                    }
                    self.peek()?;
                    self.html.get(start..self.pos)
                }
            };
            if wanted {
                value = Some(attr_value.unwrap_or_default());
            }
        }
    }

    /// Jump over the content of a raw-text element (`<title>`, `<style>`,
    /// `<script>`, ...) named `name` to after its end tag. False at end of
    /// input.
    fn raw_text(&mut self, name: &[u8], script: bool) -> Result<bool, Unsure> {
        let content_start = self.pos;
        loop {
            let Some(lt) = self.find(b'<') else {
                return Ok(false);
            };
            self.pos = lt.saturating_add(1);
            let rest = self.rest();
            let Some(candidate) = rest.strip_prefix(b"/") else {
                continue;
            };
            let is_end = candidate
                .get(..name.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
                && candidate
                    .get(name.len())
                    .is_some_and(|&c| is_space(c) || c == b'/' || c == b'>');
            if !is_end {
                continue;
            }
            if script {
                let content = self.html.get(content_start..lt).unwrap_or_default();
                if memmem::find(content, b"<!--").is_some() {
                    return Err(Unsure);
                }
            }
            // The end tag: name, then attributes (ignored) up to its `>`.
            self.pos = self.pos.saturating_add(1);
            return Ok(self.tag().is_some());
        }
    }

    /// Skip a comment whose `<!--` ends just before `pos`. False at end of
    /// input.
    fn comment(&mut self) -> bool {
        let body = self.pos;
        // `<!-->` and `<!--->` are complete (if abrupt) comments.
        match self.rest() {
            [b'>', ..] => {
                self.pos = self.pos.saturating_add(1);
                return true;
            }
            [b'-', b'>', ..] => {
                self.pos = self.pos.saturating_add(2);
                return true;
            }
            _ => {}
        }
        // Otherwise the first `-->` or `--!>` whose dashes are both inside
        // the comment ends it.
        while let Some(gt) = self.find(b'>') {
            self.pos = gt.saturating_add(1);
            let closes = |from: usize, tail: &[u8]| {
                from >= body && self.html.get(from..gt).is_some_and(|s| s == tail)
            };
            if closes(gt.wrapping_sub(2), b"--") || closes(gt.wrapping_sub(3), b"--!") {
                return true;
            }
        }
        false
    }
}

/// A link value with its character references decoded: only `&amp;` is
/// decoded here; any other reference, or a NUL, needs the full tokenizer.
fn decode_value(raw: &[u8]) -> Result<Cow<'_, [u8]>, Unsure> {
    if memchr2(b'&', 0, raw).is_none() {
        return Ok(Cow::Borrowed(raw));
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = memchr2(b'&', 0, rest) {
        let (before, from) = rest.split_at(i);
        out.extend_from_slice(before);
        match from {
            [b'&', b'a', b'm', b'p', b';', tail @ ..] => {
                out.push(b'&');
                rest = tail;
            }
            // Not a character reference: the `&` is literal.
            [b'&', next, ..] if !next.is_ascii_alphanumeric() && *next != b'#' => {
                out.push(b'&');
                rest = from.get(1..).unwrap_or_default();
            }
            [b'&'] => {
                out.push(b'&');
                rest = &[];
            }
            _ => return Err(Unsure),
        }
    }
    out.extend_from_slice(rest);
    Ok(Cow::Owned(out))
}

//! The fast link extractor: a hand-written scanner for the part of the
//! WHATWG HTML tokenizer that decides where tags, link attributes and their
//! values are.
//!
//! It jumps from `<` to `<` by a bitmask of the `<`s of each 64-byte block
//! of the page (one SSE2 compare per 16 bytes on x86_64, a word-at-a-time
//! compare elsewhere), walks each tag's attributes with
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
    let mut s = Scanner::new(html);
    let mut lts = LtBlocks::new(html);
    while !set.is_done() {
        let Some(lt) = lts.next_at_or_after(s.pos) else {
            return Ok(());
        };
        s.pos = lt.saturating_add(1);
        let more = match s.peek() {
            Some(c) if c.is_ascii_alphabetic() => {
                let name_start = s.pos;
                s.pos = s.tag_name_end();
                if may_act_on(c.to_ascii_lowercase(), s.pos.saturating_sub(name_start)) {
                    s.start_tag(name_start, set)?
                } else {
                    // Most tags (`<p>`, `<li class=x>`, `<em>`): no link,
                    // no raw text, only their `>` to find.
                    s.close_tag()
                }
            }
            Some(b'/') => {
                s.pos = s.pos.saturating_add(1);
                match s.peek() {
                    Some(c) if c.is_ascii_alphabetic() => {
                        // An end tag's name matters only in raw text.
                        s.pos = s.tag_name_end();
                        s.close_tag()
                    }
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

/// Whether a start tag whose name starts with `first` (ASCII-lowercase)
/// and is `len` bytes long may be one the scanner acts on: a link tag
/// ([`LinkTag::classify`]) or one after which the tokenizer leaves the
/// data state ([`next_state`]). Only such tags have their name lowercased
/// and classified; for the rest (most of a page's tags) finding their `>`
/// is all there is to do. A superset is harmless (the tag is classified);
/// a name missing here would be a link or raw-text element not seen, so
/// a test checks every name those two act on passes.
#[inline]
fn may_act_on(first: u8, len: usize) -> bool {
    matches!(
        (first, len),
        // a, area, base, link, meta
        (b'a', 1 | 4)
            | (b'b' | b'l' | b'm', 4)
            // frame, iframe
            | (b'f', 5)
            | (b'i', 6)
            // noembed, noframe; noframes, noscript
            | (b'n', 7 | 8)
            // plaintext
            | (b'p', 9)
            // style, script
            | (b's', 5 | 6)
            // title, textarea
            | (b't', 5 | 8)
            // xmp
            | (b'x', 3)
    )
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

/// Bytes in a block of [`LtBlocks`]: one bit of a `u64` each.
const BLOCK: usize = 64;

/// Where the `<`s of a page are, a 64-byte block at a time: the scanner's
/// walk from tag to tag. A page's tags are a few dozen bytes apart, so a
/// block's mask, made once, serves the next two or three tags, and finding
/// the next one is a mask and a `trailing_zeros`, where a `memchr` call
/// per tag paid its setup each time for a short hop.
struct LtBlocks<'h> {
    html: &'h [u8],
    /// Offset of the block in `bits` (a multiple of [`BLOCK`]).
    block: usize,
    /// Bit `i` set when `html[block + i]` is `<`.
    bits: u64,
}

impl<'h> LtBlocks<'h> {
    fn new(html: &'h [u8]) -> Self {
        LtBlocks {
            html,
            block: 0,
            bits: block_bits(html, 0).unwrap_or(0),
        }
    }

    /// Position of the first `<` at or after `from`.
    #[inline]
    fn next_at_or_after(&mut self, from: usize) -> Option<usize> {
        let mut from = from;
        loop {
            // Wraps to a large number when `from` is before the block.
            let offset = from.wrapping_sub(self.block);
            if offset >= BLOCK {
                self.block = from & !(BLOCK - 1);
                self.bits = block_bits(self.html, self.block)?;
                continue;
            }
            // `offset` < 64: the shift drops the bits before `from`.
            let bits = self.bits & u64::MAX.wrapping_shl(offset as u32);
            if bits != 0 {
                return Some(self.block.saturating_add(bits.trailing_zeros() as usize));
            }
            from = self.block.checked_add(BLOCK)?;
        }
    }
}

/// The mask of the `<`s in the block of `html` at `block`, zero-padded
/// past the end; `None` when `block` is at or past the end.
#[inline]
fn block_bits(html: &[u8], block: usize) -> Option<u64> {
    let rest = html.get(block..).filter(|rest| !rest.is_empty())?;
    match rest.first_chunk::<BLOCK>() {
        Some(chunk) => Some(lt_mask(chunk)),
        None => {
            let mut padded = [0u8; BLOCK];
            padded.get_mut(..rest.len())?.copy_from_slice(rest);
            Some(lt_mask(&padded))
        }
    }
}

/// Bit `i` set when `chunk[i]` is `<`: SSE2, part of every x86_64 CPU.
#[cfg(target_arch = "x86_64")]
#[inline]
fn lt_mask(chunk: &[u8; BLOCK]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let (lanes, _) = chunk.as_chunks::<16>();
    let mut mask = 0u64;
    for (i, lane) in lanes.iter().enumerate() {
        // SAFETY: SSE2 is in the x86_64 baseline, so every x86_64 CPU has
        // these instructions (the intrinsics are `unsafe` only because
        // they are target features); the load reads exactly the 16 bytes
        // of `lane`, a `&[u8; 16]`, and `loadu` needs no alignment.
        let lane_bits = unsafe {
            _mm_movemask_epi8(_mm_cmpeq_epi8(
                _mm_loadu_si128(lane.as_ptr().cast()),
                _mm_set1_epi8(b'<' as i8),
            ))
        };
        // `movemask` of 16 bytes sets the low 16 bits only.
        mask |= u64::from(lane_bits as u16).wrapping_shl((i as u32).wrapping_mul(16));
    }
    mask
}

/// Bit `i` set when `chunk[i]` is `<`, without SIMD.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn lt_mask(chunk: &[u8; BLOCK]) -> u64 {
    lt_mask_portable(chunk)
}

/// [`lt_mask`] a word at a time: the portable one, tested on every target.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn lt_mask_portable(chunk: &[u8; BLOCK]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let (words, _) = chunk.as_chunks::<8>();
    let mut mask = 0u64;
    for (i, word) in words.iter().enumerate() {
        // A zero byte where the byte was `<` ...
        let v = u64::from_le_bytes(*word) ^ u64::from_ne_bytes([b'<'; 8]);
        // ... gets its high bit set, and only it (no carry crosses a byte:
        // each byte's low 7 bits plus 0x7f stay below 0x100).
        let zero = !((v & LOW7).wrapping_add(LOW7) | v | LOW7);
        // Byte k's bit (bit 8k after the shift) lands at bit 56 + k: the
        // products of the multiply are distinct powers of two, so nothing
        // carries into the top byte.
        let byte_bits = (zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= byte_bits.wrapping_shl((i as u32).wrapping_mul(8));
    }
    mask
}

impl<'h> Scanner<'h> {
    fn new(html: &'h [u8]) -> Self {
        Scanner { html, pos: 0 }
    }

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

    /// A start tag whose name is `name_start..pos`: offer its link, then
    /// jump over the element's content if it is raw text. False at end of
    /// input.
    fn start_tag(&mut self, name_start: usize, set: &mut LinkSet<'_>) -> Result<bool, Unsure> {
        let name_end = self.pos;
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
        Scanner::new(tag).attributes(Some(name))?.value
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

    /// Read a tag whose attributes are not wanted from just after its name
    /// to its `>`; false when the input ends inside the tag. The commonest
    /// tags (`<p>`, `</em>`) have none, and end right away.
    #[inline]
    fn close_tag(&mut self) -> bool {
        if self.peek() == Some(b'>') {
            self.pos = self.pos.saturating_add(1);
            return true;
        }
        self.attributes(None).is_some()
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
            self.pos = self.tag_name_end();
            return Ok(self.close_tag());
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

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    reason = "test positions are small; the lint is for what servers send"
)]
mod tests {
    use super::*;

    /// The `<`s of `html` at or after each position, one by one.
    fn lts_by_blocks(html: &[u8]) -> Vec<usize> {
        let mut lts = LtBlocks::new(html);
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(lt) = lts.next_at_or_after(from) {
            found.push(lt);
            from = lt + 1;
        }
        found
    }

    fn lts_by_memchr(html: &[u8]) -> Vec<usize> {
        memchr::memchr_iter(b'<', html).collect()
    }

    /// Every tag name [`LinkTag::classify`] or [`next_state`] acts on.
    const ACTED_ON: [&str; 16] = [
        "a",
        "area",
        "base",
        "link",
        "meta",
        "frame",
        "iframe",
        "noembed",
        "noframe",
        "noframes",
        "plaintext",
        "script",
        "style",
        "textarea",
        "title",
        "xmp",
    ];

    fn acted_on(name: &[u8]) -> bool {
        LinkTag::classify(name).is_some() || next_state(name).is_some()
    }

    fn passes(name: &[u8]) -> bool {
        name.first()
            .is_some_and(|&c| may_act_on(c.to_ascii_lowercase(), name.len()))
    }

    #[test]
    fn every_name_acted_on_passes_the_name_filter() {
        for name in ACTED_ON {
            assert!(acted_on(name.as_bytes()), "{name}");
            assert!(passes(name.as_bytes()), "{name}");
            assert!(passes(name.to_ascii_uppercase().as_bytes()), "{name}");
        }
        // Every name of up to four letters, and the elements of HTML, SVG
        // and MathML: none acted on that the filter lets by.
        let mut names: Vec<Vec<u8>> = Vec::new();
        let letters = b'a'..=b'z';
        for a in letters.clone() {
            names.push(vec![a]);
            for b in letters.clone() {
                names.push(vec![a, b]);
                for c in letters.clone() {
                    names.push(vec![a, b, c]);
                    for d in letters.clone() {
                        names.push(vec![a, b, c, d]);
                    }
                }
            }
        }
        let elements = "address applet article aside audio basefont bdi bdo bgsound big \
            blink blockquote body br button canvas caption center cite code col colgroup \
            data datalist dd del details dfn dialog dir div dl dt em embed fieldset \
            figcaption figure font footer form frameset h1 h2 h3 h4 h5 h6 head header \
            hgroup hr html image img input ins isindex kbd keygen label legend li \
            listing main map mark marquee math menu menuitem meter multicol nav nextid \
            nobr noscript object ol optgroup option output param picture portal pre \
            progress q rb rp rt rtc ruby s samp search section select slot small source \
            spacer span strike strong sub summary sup svg table tbody td template tfoot \
            th thead time tr track tt u ul var video wbr foreignobject desc clippath \
            lineargradient radialgradient mi mo mn ms mtext annotation-xml";
        names.extend(elements.split_whitespace().map(|n| n.as_bytes().to_vec()));
        names.extend(ACTED_ON.iter().map(|n| n.as_bytes().to_vec()));
        for name in &names {
            if acted_on(name) {
                assert!(passes(name), "{}", String::from_utf8_lossy(name));
            }
        }
    }

    #[test]
    fn lt_masks_agree_byte_by_byte() {
        // Every byte value at every place of a block, among `<`s and
        // bytes one off `<` (where a compare that carries would err).
        let mut chunk = [0u8; BLOCK];
        for (i, b) in chunk.iter_mut().enumerate() {
            *b = [b'<', b';', b'=', 0xbc, 0x3c ^ 0x80, 0][i % 6];
        }
        for at in 0..BLOCK {
            for byte in 0..=255u8 {
                let mut c = chunk;
                c[at] = byte;
                let expect = c
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (i, &b)| m | (u64::from(b == b'<') << i));
                assert_eq!(lt_mask_portable(&c), expect, "at {at} byte {byte:#x}");
                assert_eq!(lt_mask(&c), expect, "at {at} byte {byte:#x}");
            }
        }
        assert_eq!(lt_mask(&[b'<'; BLOCK]), u64::MAX);
        assert_eq!(lt_mask_portable(&[b'<'; BLOCK]), u64::MAX);
    }

    proptest::proptest! {
        #[test]
        fn lt_masks_agree_on_any_block(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(b'<'),
                    proptest::strategy::Just(b'<' ^ 0x80),
                    proptest::prelude::any::<u8>(),
                ],
                BLOCK,
            )
        ) {
            let chunk: [u8; BLOCK] = bytes.try_into().unwrap();
            let expect = chunk
                .iter()
                .enumerate()
                .fold(0u64, |m, (i, &b)| m | (u64::from(b == b'<') << i));
            proptest::prop_assert_eq!(lt_mask_portable(&chunk), expect);
            proptest::prop_assert_eq!(lt_mask(&chunk), expect);
        }
    }

    #[test]
    fn lt_blocks_find_every_lt_across_block_edges() {
        // `<` on and around each block edge, at the end of input, in a
        // short tail block, and past long runs with none.
        for len in [0usize, 1, 2, 63, 64, 65, 127, 128, 129, 200, 1000] {
            for spots in [
                vec![],
                vec![0],
                vec![62, 63, 64],
                vec![63, 128],
                vec![64, 65, 127],
                vec![len.saturating_sub(1)],
                vec![1, 700, 999],
            ] {
                let mut html = vec![b'x'; len];
                for &i in &spots {
                    if let Some(b) = html.get_mut(i) {
                        *b = b'<';
                    }
                }
                assert_eq!(
                    lts_by_blocks(&html),
                    lts_by_memchr(&html),
                    "{len} {spots:?}"
                );
            }
        }
    }

    #[test]
    fn lt_blocks_resume_from_any_position() {
        let html: Vec<u8> = (0..500u32)
            .map(|i| {
                if i % 7 == 0 || i % 64 == 63 {
                    b'<'
                } else {
                    b'a'
                }
            })
            .collect();
        // Forward jumps of every size, as the scanner makes past tags,
        // and a restart from before the current block.
        let mut lts = LtBlocks::new(&html);
        for from in (0..=html.len() + 1).step_by(3).chain([5, 0, 300, 70]) {
            let expect =
                memchr::memchr(b'<', html.get(from..).unwrap_or_default()).map(|i| from + i);
            assert_eq!(lts.next_at_or_after(from), expect, "from {from}");
        }
    }
}

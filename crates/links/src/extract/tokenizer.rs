//! The reference link extractor: html5gum's WHATWG tokenizer driven by a
//! purpose-built [`Emitter`] that ignores text, comments and doctypes, keeps
//! only the few start tags and attributes that carry links, and copies
//! nothing else into the [`LinkSet`]. When the set wants page requisites it
//! reads every start tag's requisite attributes
//! ([`Element::attributes`], at most three) and the text of `<style>`
//! elements (up to [`MAX_STYLE_TEXT`] bytes each).
//!
//! What it is not: the fast path. It runs when the scanner gives up on a
//! page, when requisites are asked for, and in the tests and the
//! differential fuzz target as the answer the scanner must give.
use html5gum::{naive_next_state, Emitter, Error, State, Tokenizer};

use super::requisites::{Element, Values, MAX_ATTRIBUTES};
use super::{LinkSet, LinkTag};

/// The most text of one `<style>` element read for `url()`s: a memory
/// bound against hostile pages.
const MAX_STYLE_TEXT: usize = 1 << 20;

/// Run html5gum over `html`, offering every link tag to `set`.
pub(super) fn tokenize(html: &[u8], set: &mut LinkSet<'_>) {
    let mut tokenizer = Tokenizer::new_with_emitter(html, LinkEmitter::new(set));
    // The emitter yields a single token at end of input or as soon as the
    // set is done; the reader of a byte slice cannot fail.
    match tokenizer.next() {
        Some(Ok(())) | None => {}
        Some(Err(never)) => match never {},
    }
}

/// The tokenizer state after a start tag, as html5gum's `naive_next_state`,
/// except that `<noscript>` stays markup (scripting-disabled parsing) and
/// `<noframes>` (which `naive_next_state` misspells) is raw text. `name` is
/// ASCII-lowercase. Shared with the scanner, which must switch the same way
/// (and whose `may_act_on` must pass every name this switches on).
pub(super) fn next_state(name: &[u8]) -> Option<State> {
    match name {
        b"noscript" => None,
        b"noframes" => Some(State::RawText),
        _ => naive_next_state(name),
    }
}

/// Longest tag name we need to recognise ("plaintext"), with room to spare.
/// Longer names are remembered as "too long", which matches nothing.
pub(super) const NAME_CAP: usize = 16;

/// A short ASCII-lowercased name kept inline, so no tag or attribute name is
/// ever allocated.
#[derive(Debug, Clone, Copy)]
struct ShortName {
    buf: [u8; NAME_CAP],
    /// Bytes pushed so far; may exceed `NAME_CAP`, then the name is too long.
    len: usize,
}

impl ShortName {
    const EMPTY: ShortName = ShortName {
        buf: [0; NAME_CAP],
        len: 0,
    };

    #[inline]
    fn clear(&mut self) {
        self.len = 0;
    }

    #[inline]
    fn push(&mut self, s: &[u8]) {
        for &b in s {
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = b.to_ascii_lowercase();
            }
            self.len = self.len.saturating_add(1);
        }
    }

    /// The name, or `None` if it was too long to keep.
    #[inline]
    fn get(&self) -> Option<&[u8]> {
        self.buf.get(..self.len)
    }

    #[inline]
    fn is(&self, name: &[u8]) -> bool {
        self.get() == Some(name)
    }
}

/// Where the current attribute stands with respect to the ones we want.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AttrState {
    /// Name not checked yet (no value byte seen).
    Unchecked,
    /// A wanted attribute: its value goes to `LinkEmitter::values[slot]`.
    Capture(usize),
    /// Some other attribute, or the tag already has this one's value.
    Ignore,
}

/// What the current start tag is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Its link (links only).
    Link(LinkTag),
    /// Its links and requisites.
    Element(Element),
}

impl Reading {
    /// The slot of attribute `name` among the ones read, if it is one.
    fn slot(self, name: Option<&[u8]>) -> Option<usize> {
        let name = name?;
        match self {
            Reading::Link(tag) => tag.attributes().iter().position(|&a| a == name),
            Reading::Element(element) => element.slot(name),
        }
    }
}

/// Which kind of tag token is being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Current {
    Start,
    End,
}

/// The html5gum emitter behind [`tokenize`]. All per-tag state lives in
/// fixed fields and one reused value buffer.
struct LinkEmitter<'s, 'p> {
    set: &'s mut LinkSet<'p>,
    /// End of input seen, or the set is done: the pass is over.
    finished: bool,

    current: Current,
    tag_name: ShortName,
    /// Name of the start tag that switched the tokenizer to a raw-text
    /// state, for the tokenizer's "appropriate end tag" check.
    raw_tag: ShortName,
    /// `Some` while the current start tag is one we read.
    reading: Option<Reading>,
    classified: bool,
    attr_name: ShortName,
    attr_state: AttrState,
    /// The current tag already has each wanted attribute (first one wins).
    have: [bool; MAX_ATTRIBUTES],
    values: [Vec<u8>; MAX_ATTRIBUTES],
    /// Inside a `<style>` element (requisites only): its text is kept.
    in_style: bool,
    style_text: Vec<u8>,
}

impl<'s, 'p> LinkEmitter<'s, 'p> {
    fn new(set: &'s mut LinkSet<'p>) -> Self {
        LinkEmitter {
            set,
            finished: false,
            current: Current::End,
            tag_name: ShortName::EMPTY,
            raw_tag: ShortName::EMPTY,
            reading: None,
            classified: true,
            attr_name: ShortName::EMPTY,
            attr_state: AttrState::Ignore,
            have: [false; MAX_ATTRIBUTES],
            values: Default::default(),
            in_style: false,
            style_text: Vec::new(),
        }
    }

    /// Decide once per start tag, when its name is complete, whether and
    /// what for it is read.
    #[inline]
    fn classify(&mut self) {
        if !self.classified {
            self.classified = true;
            let name = self.tag_name.get();
            self.reading = if self.set.wants_embeds() {
                name.map(|n| Reading::Element(Element::classify(n)))
            } else {
                name.and_then(LinkTag::classify).map(Reading::Link)
            };
        }
    }

    /// The current attribute is complete (another starts or the tag ends).
    #[inline]
    fn finish_attribute(&mut self) {
        if let Some(reading) = self.reading {
            let slot = match self.attr_state {
                AttrState::Capture(slot) => Some(slot),
                // An attribute with an empty or no value: `<a href>`.
                AttrState::Unchecked => reading.slot(self.attr_name.get()),
                AttrState::Ignore => None,
            };
            if let Some(have) = slot.and_then(|slot| self.have.get_mut(slot)) {
                *have = true;
            }
        }
        self.attr_state = AttrState::Unchecked;
        self.attr_name.clear();
    }

    /// The current start tag is complete: offer what it carries.
    fn offer_tag(&mut self) {
        match self.reading {
            Some(Reading::Link(LinkTag::Meta)) => {
                let value = |slot: usize| {
                    let have = self.have.get(slot) == Some(&true);
                    self.values.get(slot).filter(|_| have).map(Vec::as_slice)
                };
                let (content, name) = (value(0), value(1));
                self.set.meta(name, content);
            }
            Some(Reading::Link(tag)) if self.have.first() == Some(&true) => {
                let rel = (self.have.get(1) == Some(&true))
                    .then(|| self.values.get(1).map(Vec::as_slice))
                    .flatten();
                if let Some(value) = self.values.first() {
                    if !(tag == LinkTag::Href && self.set.skips(rel)) {
                        self.set.offer(tag, value);
                    }
                }
            }
            Some(Reading::Element(element)) => {
                let mut values: Values<'_> = [None; MAX_ATTRIBUTES];
                for ((slot, have), value) in values.iter_mut().zip(&self.have).zip(&self.values) {
                    if *have {
                        *slot = Some(value.as_slice());
                    }
                }
                self.set.offer_element(element, &values);
                self.in_style = self.tag_name.is(b"style");
                self.style_text.clear();
            }
            Some(Reading::Link(_)) | None => {}
        }
        self.finished |= self.set.is_done();
    }

    /// A `<style>` element ended (or the input did): its CSS is read.
    fn finish_style(&mut self) {
        if self.in_style {
            self.in_style = false;
            self.set.offer_css(&self.style_text);
            self.finished |= self.set.is_done();
        }
    }
}

impl Emitter for LinkEmitter<'_, '_> {
    type Token = ();

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.raw_tag.clear();
        self.raw_tag.push(last_start_tag.unwrap_or_default());
    }

    fn emit_eof(&mut self) {
        self.finish_style();
        self.finished = true;
    }

    #[inline]
    fn emit_error(&mut self, _error: Error) {}

    #[inline]
    fn should_emit_errors(&mut self) -> bool {
        false
    }

    #[inline]
    fn pop_token(&mut self) -> Option<Self::Token> {
        if self.finished {
            Some(())
        } else {
            None
        }
    }

    #[inline]
    fn emit_string(&mut self, c: &[u8]) {
        if self.in_style {
            let room = MAX_STYLE_TEXT.saturating_sub(self.style_text.len());
            self.style_text
                .extend_from_slice(c.get(..room.min(c.len())).unwrap_or_default());
        }
    }

    #[inline]
    fn init_start_tag(&mut self) {
        self.current = Current::Start;
        self.tag_name.clear();
        self.reading = None;
        self.classified = false;
        self.attr_name.clear();
        self.attr_state = AttrState::Unchecked;
        self.have = [false; MAX_ATTRIBUTES];
        for value in &mut self.values {
            value.clear();
        }
    }

    #[inline]
    fn init_end_tag(&mut self) {
        self.current = Current::End;
        self.tag_name.clear();
        self.reading = None;
        self.classified = true;
    }

    #[inline]
    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        if self.current == Current::End {
            // In raw text only the element's own end tag is emitted.
            self.finish_style();
            return None;
        }
        self.classify();
        self.finish_attribute();
        self.offer_tag();
        let state = next_state(self.tag_name.get()?);
        if state.is_some() {
            self.raw_tag = self.tag_name;
        }
        state
    }

    #[inline]
    fn emit_current_comment(&mut self) {}

    #[inline]
    fn emit_current_doctype(&mut self) {}

    #[inline]
    fn set_self_closing(&mut self) {}

    #[inline]
    fn set_force_quirks(&mut self) {}

    #[inline]
    fn push_tag_name(&mut self, s: &[u8]) {
        self.tag_name.push(s);
    }

    #[inline]
    fn push_comment(&mut self, _s: &[u8]) {}

    #[inline]
    fn push_doctype_name(&mut self, _s: &[u8]) {}

    #[inline]
    fn init_doctype(&mut self) {}

    #[inline]
    fn init_attribute(&mut self) {
        if self.current == Current::Start {
            self.classify();
            self.finish_attribute();
        }
    }

    #[inline]
    fn push_attribute_name(&mut self, s: &[u8]) {
        if self.reading.is_some() {
            self.attr_name.push(s);
        }
    }

    #[inline]
    fn push_attribute_value(&mut self, s: &[u8]) {
        let Some(reading) = self.reading else {
            return;
        };
        if self.attr_state == AttrState::Unchecked {
            self.attr_state = match reading.slot(self.attr_name.get()) {
                Some(slot) if self.have.get(slot) == Some(&false) => AttrState::Capture(slot),
                _ => AttrState::Ignore,
            };
        }
        if let AttrState::Capture(slot) = self.attr_state {
            if let Some(value) = self.values.get_mut(slot) {
                value.extend_from_slice(s);
            }
        }
    }

    #[inline]
    fn set_doctype_public_identifier(&mut self, _value: &[u8]) {}

    #[inline]
    fn set_doctype_system_identifier(&mut self, _value: &[u8]) {}

    #[inline]
    fn push_doctype_public_identifier(&mut self, _s: &[u8]) {}

    #[inline]
    fn push_doctype_system_identifier(&mut self, _s: &[u8]) {}

    #[inline]
    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        self.current == Current::End
            && self.raw_tag.len > 0
            && self
                .raw_tag
                .get()
                .is_some_and(|raw| Some(raw) == self.tag_name.get())
    }
}

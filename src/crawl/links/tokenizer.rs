//! The reference link extractor: html5gum's WHATWG tokenizer driven by a
//! purpose-built [`Emitter`] that ignores text, comments and doctypes, keeps
//! only the few start tags and attributes that carry links, and copies
//! nothing else into the [`LinkSet`].
//!
//! What it is not: the fast path. It runs when the scanner gives up on a
//! page, and in the tests and the differential fuzz target as the answer the
//! scanner must give.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use html5gum::{naive_next_state, Emitter, Error, State, Tokenizer};

use super::{LinkSet, LinkTag};

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
/// ASCII-lowercase. Shared with the scanner, which must switch the same way.
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

/// Where the current attribute stands with respect to the link we want.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AttrState {
    /// Name not checked yet (no value byte seen).
    Unchecked,
    /// This is the link attribute: its value goes to `LinkEmitter::value`.
    Capture,
    /// Some other attribute, or the tag already has its link value.
    Ignore,
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
    /// `Some` while the current start tag is one we read a link from.
    tag: Option<LinkTag>,
    classified: bool,
    attr_name: ShortName,
    attr_state: AttrState,
    /// The current tag already has its link attribute (first one wins).
    have_value: bool,
    value: Vec<u8>,
}

impl<'s, 'p> LinkEmitter<'s, 'p> {
    fn new(set: &'s mut LinkSet<'p>) -> Self {
        LinkEmitter {
            set,
            finished: false,
            current: Current::End,
            tag_name: ShortName::EMPTY,
            raw_tag: ShortName::EMPTY,
            tag: None,
            classified: true,
            attr_name: ShortName::EMPTY,
            attr_state: AttrState::Ignore,
            have_value: false,
            value: Vec::new(),
        }
    }

    /// Decide once per start tag, when its name is complete, whether it
    /// carries a link.
    #[inline]
    fn classify(&mut self) {
        if !self.classified {
            self.classified = true;
            self.tag = self.tag_name.get().and_then(LinkTag::classify);
        }
    }

    /// The current attribute is complete (another starts or the tag ends).
    #[inline]
    fn finish_attribute(&mut self) {
        if let Some(tag) = self.tag {
            if !self.have_value {
                self.have_value = match self.attr_state {
                    AttrState::Capture => true,
                    // An attribute with an empty or no value: `<a href>`.
                    AttrState::Unchecked => self.attr_name.is(tag.attribute()),
                    AttrState::Ignore => false,
                };
            }
        }
        self.attr_state = AttrState::Unchecked;
        self.attr_name.clear();
    }
}

impl Emitter for LinkEmitter<'_, '_> {
    type Token = ();

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.raw_tag.clear();
        self.raw_tag.push(last_start_tag.unwrap_or_default());
    }

    fn emit_eof(&mut self) {
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
    fn emit_string(&mut self, _c: &[u8]) {}

    #[inline]
    fn init_start_tag(&mut self) {
        self.current = Current::Start;
        self.tag_name.clear();
        self.tag = None;
        self.classified = false;
        self.attr_name.clear();
        self.attr_state = AttrState::Unchecked;
        self.have_value = false;
        self.value.clear();
    }

    #[inline]
    fn init_end_tag(&mut self) {
        self.current = Current::End;
        self.tag_name.clear();
        self.tag = None;
        self.classified = true;
    }

    #[inline]
    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        if self.current == Current::End {
            return None;
        }
        self.classify();
        self.finish_attribute();
        if let Some(tag) = self.tag {
            if self.have_value {
                self.set.offer(tag, &self.value);
                self.finished = self.set.is_done();
            }
        }
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
        if self.tag.is_some() {
            self.attr_name.push(s);
        }
    }

    #[inline]
    fn push_attribute_value(&mut self, s: &[u8]) {
        let Some(tag) = self.tag else {
            return;
        };
        if self.attr_state == AttrState::Unchecked {
            self.attr_state = if !self.have_value && self.attr_name.is(tag.attribute()) {
                AttrState::Capture
            } else {
                AttrState::Ignore
            };
        }
        if self.attr_state == AttrState::Capture {
            self.value.extend_from_slice(s);
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

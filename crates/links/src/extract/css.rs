//! The URLs a piece of CSS loads: every `url(...)` and every `@import`
//! target, in order, with CSS escapes undone. Used for stylesheets, `<style>`
//! elements and `style` attributes when page requisites are fetched.
//!
//! A lexical scan, one pass, no recursion and no allocation but the values
//! that hold escapes: comments (`/* */`) are skipped, strings are skipped
//! whole (so `content: "url(x)"` loads nothing), `url(` counts only where an
//! identifier starts (`myurl(x)` is not one), and `@import` takes the string
//! or `url()` after it. This is what CSS Syntax's tokenizer decides for
//! these tokens; the cssparser crate would give the same tokens but walks
//! blocks by recursion, one level per nesting level, and a hostile
//! stylesheet nests at will, so the few token rules needed are written here.
//!
//! What it is not: no selectors, no cascade, no `image-set()` descriptors
//! (their `url()`s and strings inside are found as plain `url()`s only),
//! and no resolution: values are raw, the caller resolves them against the
//! stylesheet's URL (or the page's base URL for inline CSS).
use std::borrow::Cow;

/// Call `found` with each URL value of `css`, in document order.
pub(super) fn scan(css: &[u8], found: &mut impl FnMut(&[u8])) {
    let mut pos = 0;
    while let Some(&c) = css.get(pos) {
        match c {
            b'/' if css.get(pos.saturating_add(1)) == Some(&b'*') => {
                pos = match memchr::memmem::find(
                    css.get(pos.saturating_add(2)..).unwrap_or_default(),
                    b"*/",
                ) {
                    Some(end) => pos.saturating_add(4).saturating_add(end),
                    None => css.len(),
                };
            }
            b'"' | b'\'' => pos = string(css, pos).0,
            b'\\' => pos = pos.saturating_add(2),
            b'u' | b'U' if is_url_function(css, pos) => {
                let (end, value) = url_function(css, pos.saturating_add(4));
                if let Some(value) = value {
                    found(&value);
                }
                pos = end;
            }
            b'@' if starts_with_ignore_case(
                css.get(pos.saturating_add(1)..).unwrap_or_default(),
                b"import",
            ) && !css
                .get(pos.saturating_add(7))
                .is_some_and(|&c| is_name_byte(c)) =>
            {
                pos = import(css, pos.saturating_add(7), found);
            }
            _ => pos = pos.saturating_add(1),
        }
    }
}

/// `@import` at `pos` (just past the keyword): its string or `url()`.
fn import(css: &[u8], mut pos: usize, found: &mut impl FnMut(&[u8])) -> usize {
    pos = skip_whitespace(css, pos);
    match css.get(pos) {
        Some(b'"' | b'\'') => {
            let (end, value) = string(css, pos);
            found(&value);
            end
        }
        // `url(` is found by the main loop, which resumes here.
        _ => pos,
    }
}

/// Whether `url(` starts at `pos` as a function name, not inside a longer
/// identifier.
fn is_url_function(css: &[u8], pos: usize) -> bool {
    let name = css.get(pos..pos.saturating_add(4)).unwrap_or_default();
    name.len() == 4
        && name
            .get(..3)
            .is_some_and(|n| n.eq_ignore_ascii_case(b"url"))
        && name.get(3) == Some(&b'(')
        && !pos
            .checked_sub(1)
            .and_then(|p| css.get(p))
            .is_some_and(|&c| is_name_byte(c) || c == b'\\')
}

/// The value of a `url(` whose content starts at `pos`, and where the
/// function ends. `None` for an empty or broken value.
fn url_function(css: &[u8], pos: usize) -> (usize, Option<Cow<'_, [u8]>>) {
    let pos = skip_whitespace(css, pos);
    match css.get(pos) {
        Some(b'"' | b'\'') => {
            // `url("...")`: a function with a string argument.
            let (end, value) = string(css, pos);
            let close = skip_whitespace(css, end);
            match css.get(close) {
                Some(b')') => (
                    close.saturating_add(1),
                    Some(value).filter(|v| !v.is_empty()),
                ),
                _ => (end, None),
            }
        }
        _ => {
            // An unquoted url token: up to `)`, whitespace only at its end.
            let mut end = pos;
            let mut escaped = false;
            while let Some(&c) = css.get(end) {
                match c {
                    b')' => break,
                    b'\\' => {
                        escaped = true;
                        end = end.saturating_add(2);
                    }
                    b'"' | b'\'' | b'(' => return (end.saturating_add(1), None),
                    c if c.is_ascii_whitespace() => {
                        let after = skip_whitespace(css, end);
                        if css.get(after) != Some(&b')') {
                            return (after, None);
                        }
                        let raw = css.get(pos..end).unwrap_or_default();
                        return (after.saturating_add(1), some_value(raw, escaped));
                    }
                    _ => end = end.saturating_add(1),
                }
            }
            let raw = css.get(pos..end.min(css.len())).unwrap_or_default();
            (end.saturating_add(1), some_value(raw, escaped))
        }
    }
}

fn some_value(raw: &[u8], escaped: bool) -> Option<Cow<'_, [u8]>> {
    if raw.is_empty() {
        None
    } else if escaped {
        Some(Cow::Owned(unescape(raw)))
    } else {
        Some(Cow::Borrowed(raw))
    }
}

/// The string starting with the quote at `pos`: where it ends (past its
/// closing quote, or at an unescaped newline or the end of input, as CSS
/// ends a bad string) and its value with escapes undone.
fn string(css: &[u8], pos: usize) -> (usize, Cow<'_, [u8]>) {
    let quote = css.get(pos).copied().unwrap_or(b'"');
    let start = pos.saturating_add(1);
    let mut end = start;
    let mut escaped = false;
    while let Some(&c) = css.get(end) {
        match c {
            b'\\' => {
                escaped = true;
                end = end.saturating_add(2);
            }
            b'\n' | b'\r' | b'\x0c' => break,
            c if c == quote => break,
            _ => end = end.saturating_add(1),
        }
    }
    let end = end.min(css.len());
    let raw = css.get(start..end).unwrap_or_default();
    let next = if css.get(end) == Some(&quote) {
        end.saturating_add(1)
    } else {
        end
    };
    let value = if escaped {
        Cow::Owned(unescape(raw))
    } else {
        Cow::Borrowed(raw)
    };
    (next, value)
}

/// CSS escapes undone: `\` and 1-6 hex digits (one whitespace after them
/// eaten) is that code point (zero, surrogates and too large ones become
/// U+FFFD), `\` and a newline is nothing (a string's line continuation),
/// `\` and any other byte is that byte.
fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while let Some(&c) = raw.get(i) {
        i = i.saturating_add(1);
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let hex = raw
            .get(i..)
            .unwrap_or_default()
            .iter()
            .take(6)
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if hex > 0 {
            let digits = raw.get(i..i.saturating_add(hex)).unwrap_or_default();
            let code = digits.iter().fold(0u32, |n, &d| {
                n.saturating_mul(16)
                    .saturating_add(char::from(d).to_digit(16).unwrap_or(0))
            });
            let ch = char::from_u32(code)
                .filter(|&c| c != '\0')
                .unwrap_or('\u{FFFD}');
            let mut buf = [0; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            i = i.saturating_add(hex);
            if raw.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
                i = i.saturating_add(1);
            }
        } else {
            match raw.get(i) {
                Some(b'\n' | b'\x0c') => i = i.saturating_add(1),
                Some(b'\r') => {
                    i = i.saturating_add(if raw.get(i.saturating_add(1)) == Some(&b'\n') {
                        2
                    } else {
                        1
                    })
                }
                Some(&other) => {
                    out.push(other);
                    i = i.saturating_add(1);
                }
                None => {}
            }
        }
    }
    out
}

fn skip_whitespace(css: &[u8], mut pos: usize) -> usize {
    while css.get(pos).is_some_and(|b| b.is_ascii_whitespace()) {
        pos = pos.saturating_add(1);
    }
    pos
}

fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// A byte that continues a CSS identifier (non-ASCII bytes all do).
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn urls(css: &str) -> Vec<String> {
        let mut out = Vec::new();
        scan(css.as_bytes(), &mut |v| {
            out.push(String::from_utf8_lossy(v).into_owned())
        });
        out
    }

    #[test]
    fn url_functions_quoted_and_unquoted_are_found() {
        assert_eq!(
            urls(r#"a{background:url(a.png)} b{x:URL( "b.png" )} c{y:url('c d.png')}"#),
            ["a.png", "b.png", "c d.png"]
        );
    }

    #[test]
    fn imports_by_string_and_by_url_are_found() {
        assert_eq!(
            urls(r#"@import "one.css"; @IMPORT url(two.css) screen; @import 'three.css';"#),
            ["one.css", "two.css", "three.css"]
        );
    }

    #[test]
    fn comments_and_strings_load_nothing() {
        assert_eq!(
            urls(
                r#"/* url(no.png) @import "no.css"; */ a{content:"url(no2.png)"} b{x:url(yes.png)}"#
            ),
            ["yes.png"]
        );
    }

    #[test]
    fn a_longer_function_name_is_not_url() {
        assert_eq!(urls("a{x:myurl(no.png); y:-url(no2); z:url(yes)}"), ["yes"]);
    }

    #[test]
    fn escapes_are_undone() {
        assert_eq!(
            urls(r#"a{x:url(a\(b\).png)} b{y:url("\66 oo.png")} c{z:url(sp\ ace.png)}"#),
            ["a(b).png", "foo.png", "sp ace.png"]
        );
    }

    #[test]
    fn empty_and_broken_urls_are_skipped() {
        assert_eq!(
            urls(r#"a{x:url()} b{x:url("")} c{x:url(a b)} d{x:url(a"b)} e{x:url(ok)}"#),
            ["ok"]
        );
    }

    #[test]
    fn a_stylesheet_cut_short_still_yields_what_it_holds() {
        assert_eq!(urls("a{x:url(cut.png"), ["cut.png"]);
        assert_eq!(urls("@import \"cut.css"), ["cut.css"]);
        assert!(urls("/* never closed url(x)").is_empty());
        assert!(urls("a{x:\"never closed url(x)").is_empty());
    }

    #[test]
    fn a_bad_string_ends_at_a_newline() {
        assert_eq!(urls("a{content:\"oops\n} b{x:url(yes)}"), ["yes"]);
    }

    #[test]
    fn data_urls_are_returned_raw_for_the_caller_to_skip() {
        assert_eq!(
            urls("a{x:url(data:image/png;base64,AAAA)}"),
            ["data:image/png;base64,AAAA"]
        );
    }

    proptest! {
        #[test]
        fn any_bytes_scan_without_panic(css in proptest::collection::vec(any::<u8>(), 0..512)) {
            scan(&css, &mut |_| {});
        }

        #[test]
        fn css_like_text_scans_without_panic(css in r#"([a-z@(){};:'"\\/* \n]|url\(|@import ){0,80}"#) {
            scan(css.as_bytes(), &mut |_| {});
        }
    }
}

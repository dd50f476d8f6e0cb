//! A Redis URL as it may be printed: its password hidden. `--cluster`
//! takes `redis://:PASSWORD@HOST:PORT/` (or `redis://USER:PASSWORD@…`,
//! or a `redis+unix://` URL with `?pass=`), and every message that names
//! the server (errors, logs, reconnections, `cluster status`, the
//! settings' `Debug`) shows [`redacted`] instead: `redis://:***@HOST/`.
//!
//! Pure and total: any text gives text, never a panic. Where the text is
//! not a well-formed URL it hides more rather than less: everything
//! before the last `@` after the scheme is the userinfo.

use std::borrow::Cow;

/// What stands for a hidden secret.
pub(crate) const HIDDEN: &str = "***";

/// `url` without its password: the userinfo's password (after the first
/// `:`) becomes `***`; a userinfo without `:` is hidden whole (some
/// write the password alone there); the values of `pass=` and
/// `password=` query parameters are hidden too. Borrowed when there is
/// nothing to hide.
pub fn redacted(url: &str) -> Cow<'_, str> {
    let mut out = match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, after)) => {
                let user = match userinfo.split_once(':') {
                    Some((user, _)) => format!("{user}:"),
                    None => String::new(),
                };
                Cow::Owned(format!("{scheme}://{user}{HIDDEN}@{after}"))
            }
            None => Cow::Borrowed(url),
        },
        None => Cow::Borrowed(url),
    };
    if let Some(hidden) = hide_query_passwords(&out) {
        out = Cow::Owned(hidden);
    }
    out
}

/// `url` with its `pass=` and `password=` query values hidden; None if it
/// has none.
fn hide_query_passwords(url: &str) -> Option<String> {
    let (head, query) = url.split_once('?')?;
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let mut hid = false;
    let pairs: Vec<Cow<'_, str>> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _))
                if name.eq_ignore_ascii_case("pass") || name.eq_ignore_ascii_case("password") =>
            {
                hid = true;
                Cow::Owned(format!("{name}={HIDDEN}"))
            }
            _ => Cow::Borrowed(pair),
        })
        .collect();
    if !hid {
        return None;
    }
    let mut out = format!("{head}?{}", pairs.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_alone_or_with_a_user_is_hidden() {
        assert_eq!(
            redacted("redis://:s3cret@10.0.0.5:6379/"),
            "redis://:***@10.0.0.5:6379/"
        );
        assert_eq!(
            redacted("redis://crawler:s3cret@db:6379/0"),
            "redis://crawler:***@db:6379/0"
        );
        assert_eq!(redacted("rediss://u:p@h/"), "rediss://u:***@h/");
    }

    #[test]
    fn a_url_without_a_secret_is_borrowed_as_it_is() {
        for url in [
            "redis://127.0.0.1:6379/",
            "redis://db/",
            "not a url",
            "",
            "redis+unix:///run/redis.sock",
        ] {
            assert!(
                matches!(redacted(url), Cow::Borrowed(u) if u == url),
                "{url}"
            );
        }
    }

    #[test]
    fn a_password_with_at_signs_slashes_or_colons_does_not_leak() {
        for (url, secret) in [
            ("redis://:p@ss@h:1/", "p@ss"),
            ("redis://:pa/ss@h:1/", "pa/ss"),
            ("redis://u:a:b@h/", "a:b"),
            ("redis://justapassword@h/", "justapassword"),
        ] {
            let shown = redacted(url);
            assert!(!shown.contains(secret), "{url} -> {shown}");
            assert!(shown.contains(HIDDEN), "{shown}");
        }
    }

    #[test]
    fn a_unix_socket_urls_pass_parameter_is_hidden() {
        assert_eq!(
            redacted("redis+unix:///run/redis.sock?db=1&pass=s3cret#x"),
            "redis+unix:///run/redis.sock?db=1&pass=***#x"
        );
        assert_eq!(
            redacted("redis+unix:///s?password=s3cret"),
            "redis+unix:///s?password=***"
        );
    }
}

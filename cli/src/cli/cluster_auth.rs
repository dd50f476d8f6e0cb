//! The cluster's Redis password kept off the command line, where `ps`
//! and `/proc/PID/cmdline` show it to every user of the machine: read
//! from `--cluster-password-file FILE` (its first line) or from the
//! environment (`RINGCRAWL_CLUSTER_PASSWORD`, as redis-cli reads
//! `REDISCLI_AUTH`), and put into the `--cluster` URL the library is
//! given. A password written in the URL itself still works; the file and
//! the URL's together are refused (which one was meant?), while the
//! environment's is a default the URL's overrides.
//!
//! Not how the password is hidden in what the crawl prints (the library
//! redacts every URL it shows), nor the connection.

use std::path::Path;

use ringcrawl::Url;

use super::ArgsError;

/// The environment variable that holds the password when the URL has
/// none and no file is given.
pub const PASSWORD_ENV: &str = "RINGCRAWL_CLUSTER_PASSWORD";

/// `url` with the password of `file`, or of [`PASSWORD_ENV`], put in.
pub fn cluster_url(url: &str, file: Option<&Path>) -> Result<String, ArgsError> {
    let from_file = match file {
        Some(path) => Some(read_password(path)?),
        None => None,
    };
    let from_env = std::env::var(PASSWORD_ENV).ok().filter(|p| !p.is_empty());
    with_password(url, from_file, from_env)
}

/// The first line of `path`, without its line end; an empty one is an
/// error (a file that was meant to hold the password but does not).
fn read_password(path: &Path) -> Result<String, ArgsError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ArgsError::ClusterPassword(format!("--cluster-password-file {}: {e}", path.display()))
    })?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if line.is_empty() {
        return Err(ArgsError::ClusterPassword(format!(
            "--cluster-password-file {}: its first line is empty",
            path.display()
        )));
    }
    Ok(line.to_string())
}

/// `url` with `from_file` or else `from_env` as its password. A URL
/// that already has one keeps it (the environment's is a default) unless
/// a file is given too, which is refused.
fn with_password(
    url: &str,
    from_file: Option<String>,
    from_env: Option<String>,
) -> Result<String, ArgsError> {
    if from_file.is_none() && from_env.is_none() {
        return Ok(url.to_string());
    }
    let mut parsed = Url::parse(url).map_err(|e| {
        ArgsError::ClusterPassword(format!("--cluster {}: {e}", ringcrawl::redacted_url(url)))
    })?;
    let password = match (parsed.password().is_some(), from_file, from_env) {
        (true, Some(_), _) => return Err(both_given(url)),
        (true, None, _) | (false, None, None) => return Ok(url.to_string()),
        (false, Some(p), _) | (false, None, Some(p)) => p,
    };
    parsed.set_password(Some(&password)).map_err(|()| {
        ArgsError::ClusterPassword(format!(
            "--cluster {}: this URL cannot carry a password",
            ringcrawl::redacted_url(url)
        ))
    })?;
    Ok(parsed.to_string())
}

/// A URL with a password and a file with one: which was meant?
fn both_given(url: &str) -> ArgsError {
    let url = ringcrawl::redacted_url(url);
    ArgsError::ClusterPassword(format!(
        "--cluster {url} holds a password, and --cluster-password-file gives one too: give one"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn a_password_from_a_file_or_the_environment_goes_into_a_url_without_one() {
        let url = "redis://127.0.0.1:6379/";
        assert_eq!(
            with_password(url, some("s3cret"), None).unwrap(),
            "redis://:s3cret@127.0.0.1:6379/"
        );
        assert_eq!(
            with_password(url, None, some("env")).unwrap(),
            "redis://:env@127.0.0.1:6379/"
        );
        // The file's wins over the environment's.
        assert_eq!(
            with_password(url, some("file"), some("env")).unwrap(),
            "redis://:file@127.0.0.1:6379/"
        );
        // An ACL user keeps its name; characters a URL reserves are escaped.
        assert_eq!(
            with_password("rediss://crawler@redis.test:6380/0", some("a@b:c/d"), None).unwrap(),
            "rediss://crawler:a%40b%3Ac%2Fd@redis.test:6380/0"
        );
        assert_eq!(with_password(url, None, None).unwrap(), url);
    }

    #[test]
    fn a_url_with_a_password_keeps_it_over_the_environment_and_refuses_a_file_too() {
        let url = "redis://:inurl@127.0.0.1:6379/";
        assert_eq!(with_password(url, None, some("env")).unwrap(), url);
        let e = with_password(url, some("file"), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("give one") && !e.contains("inurl"), "{e}");
    }

    #[test]
    fn a_url_that_does_not_parse_is_named_without_its_password() {
        let e = with_password("redis://:pw@127.0.0.1:notaport/", some("file"), None)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("pw@") && !e.contains("file"), "{e}");
    }

    #[test]
    fn a_password_file_gives_its_first_line_and_an_empty_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-pwfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pw");
        std::fs::write(&file, "s3cret\r\nignored\n").unwrap();
        assert_eq!(read_password(&file).unwrap(), "s3cret");
        std::fs::write(&file, "\nlater\n").unwrap();
        assert!(read_password(&file).is_err());
        let missing = read_password(&dir.join("missing")).unwrap_err().to_string();
        assert!(missing.contains("missing"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

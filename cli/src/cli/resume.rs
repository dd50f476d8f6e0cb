//! What a resume refuses from the command line. `--resume DIR` applies
//! the crawl's stored flags, then those given now; but the crawl's
//! outputs are its manifest's (the log of records is its list of what is
//! done), so an output flag given now that differs from the crawl's would
//! be ignored: it is refused instead, and so is `--state`.

use super::Args;

/// Why the flags `given` with `--resume` cannot apply to the crawl made
/// with `stored`, in one line; None if they can. An output flag given
/// as the crawl was made with it (a script repeating its command line) is
/// accepted.
pub fn refused_at_resume(given: &Args, stored: &Args) -> Option<String> {
    if given.state.is_some() {
        return Some(
            "--resume goes on with the crawl kept in its DIR: give no --state with it".to_string(),
        );
    }
    let path = |p: &Option<std::path::PathBuf>| p.as_deref().map(|p| p.display().to_string());
    for (flag, now, then) in [
        ("-o", given.output.clone(), stored.output.clone()),
        ("--warc", path(&given.warc), path(&stored.warc)),
        ("--cdxj", path(&given.cdxj), path(&stored.cdxj)),
    ] {
        let Some(now) = now else { continue };
        if then.as_deref() == Some(now.as_str()) {
            continue;
        }
        let kept = match then {
            Some(then) => format!("{flag} {then}"),
            None if flag == "-o" => "its records in its state directory".to_string(),
            None => format!("no {flag}"),
        };
        return Some(format!(
            "--resume: {flag} {now}: a resumed crawl keeps the outputs it was made with ({kept}); give no {flag}, or start a new crawl with --state"
        ));
    }
    None
}

/// The flags the crawl in `dir` was made with, parsed alone (its roots
/// included), to compare with those given now.
pub fn stored_args(stored: &[String]) -> Result<Args, clap::Error> {
    use clap::Parser;
    Args::try_parse_from(std::iter::once("ringcrawl").chain(stored.iter().map(String::as_str)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(argv: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("ringcrawl").chain(argv.iter().copied())).unwrap()
    }

    #[test]
    fn outputs_given_at_a_resume_must_be_the_crawls() {
        let stored = args(&[
            "--state",
            "s",
            "-o",
            "out.jsonl",
            "--warc",
            "w",
            "--",
            "x.org",
        ]);
        for (given, refused) in [
            (vec!["--resume", "s"], false),
            (vec!["--resume", "s", "-o", "out.jsonl"], false),
            (
                vec!["--resume", "s", "--warc", "w", "--max-pages", "9"],
                false,
            ),
            (vec!["--resume", "s", "-o", "new.jsonl"], true),
            (vec!["--resume", "s", "--warc", "w2"], true),
            (
                vec!["--resume", "s", "--warc", "w", "--cdxj", "i.cdxj"],
                true,
            ),
            (vec!["--resume", "s", "--state", "s"], true),
        ] {
            let why = refused_at_resume(&args(&given), &stored);
            assert_eq!(why.is_some(), refused, "{given:?}: {why:?}");
            if let Some(why) = why {
                assert!(!why.contains('\n'), "{why}");
            }
        }
        let bare = args(&["--state", "s", "--", "x.org"]);
        let why = refused_at_resume(&args(&["--resume", "s", "-o", "new.jsonl"]), &bare).unwrap();
        assert!(
            why.contains("new.jsonl") && why.contains("state directory"),
            "{why}"
        );
    }
}

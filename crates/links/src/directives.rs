//! What a page tells robots about itself: `<meta name="robots"
//! content="nofollow">` (or the crawler's own product token for a name:
//! `<meta name="ringcrawl" ...>`) and the `X-Robots-Tag` header, whose
//! value may name one agent first (`X-Robots-Tag: otherbot: nofollow`
//! applies to otherbot only). `none` is `noindex, nofollow`; the other
//! directives (`noarchive`, `max-snippet: 20`, ...) are for search
//! engines and are not read.
//!
//! Pure: the scanner and the tokenizer hand the `<meta>` pairs to
//! [`MetaRobots::add`]; the page's fetch adds the header. Not what is
//! done about it (the shard drops a `nofollow` page's links).

use std::borrow::Cow;

/// The two directives a crawler acts on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Directives {
    /// Do not follow the page's links.
    pub nofollow: bool,
    /// Do not index the page (recorded; the page is still fetched and
    /// archived, as wget does).
    pub noindex: bool,
}

impl Directives {
    /// Add what a comma-separated directive list says.
    fn read(&mut self, list: &[u8]) {
        for word in list.split(|&b| b == b',') {
            let word = word.trim_ascii();
            if word.eq_ignore_ascii_case(b"nofollow") {
                self.nofollow = true;
            } else if word.eq_ignore_ascii_case(b"noindex") {
                self.noindex = true;
            } else if word.eq_ignore_ascii_case(b"none") {
                self.nofollow = true;
                self.noindex = true;
            }
        }
    }

    /// Either says so.
    pub fn or(self, other: Directives) -> Directives {
        Directives {
            nofollow: self.nofollow || other.nofollow,
            noindex: self.noindex || other.noindex,
        }
    }

    /// Nothing said.
    pub fn is_empty(self) -> bool {
        self == Directives::default()
    }

    /// What a record says of them: `noindex`, `nofollow`, both (`noindex,
    /// nofollow`) or None.
    pub fn words(self) -> Option<Cow<'static, str>> {
        match (self.noindex, self.nofollow) {
            (true, true) => Some(Cow::Borrowed("noindex, nofollow")),
            (true, false) => Some(Cow::Borrowed("noindex")),
            (false, true) => Some(Cow::Borrowed("nofollow")),
            (false, false) => None,
        }
    }
}

/// Most `<meta>` names other than `robots` kept for one page (a page that
/// names hundreds of agents is not read for more).
const MAX_AGENTS: usize = 8;

/// The `<meta>` robots directives of one page, by the name they were given
/// for: `robots` (every robot), or an agent's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaRobots {
    every: Directives,
    /// (name, ASCII-lowercase, what it says) for other names.
    agents: Vec<(Box<[u8]>, Directives)>,
}

impl MetaRobots {
    /// A `<meta>` tag's `name` and `content` (both present).
    pub fn add(&mut self, name: &[u8], content: &[u8]) {
        let name = name.trim_ascii();
        let mut said = Directives::default();
        said.read(content);
        if said.is_empty() {
            return;
        }
        if name.eq_ignore_ascii_case(b"robots") {
            self.every = self.every.or(said);
        } else if self.agents.len() < MAX_AGENTS {
            self.agents
                .push((name.to_ascii_lowercase().into_boxed_slice(), said));
        }
    }

    /// What they say to the agent whose product token is `agent`.
    pub fn for_agent(&self, agent: &str) -> Directives {
        self.agents
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case(agent.as_bytes()))
            .fold(self.every, |d, (_, said)| d.or(*said))
    }
}

/// What an `X-Robots-Tag` value says to the agent whose product token is
/// `agent`: nothing if it names another agent first.
pub fn header(value: &str, agent: &str) -> Directives {
    let mut said = Directives::default();
    let value = value.as_bytes();
    // `otherbot: noindex` names an agent; `unavailable_after: DATE` and
    // `max-snippet: 20` are directives with a value, not agents.
    let list = match value.iter().position(|&b| b == b':') {
        Some(colon) => {
            let (before, after) = value.split_at(colon);
            let before = before.trim_ascii();
            let is_agent = !before.contains(&b',') && !is_directive(before);
            match (is_agent, after.get(1..)) {
                (true, _) if !before.eq_ignore_ascii_case(agent.as_bytes()) => return said,
                (true, Some(rest)) => rest,
                _ => value,
            }
        }
        None => value,
    };
    said.read(list);
    said
}

/// A directive name that takes a value after a colon.
fn is_directive(word: &[u8]) -> bool {
    [
        &b"unavailable_after"[..],
        b"max-snippet",
        b"max-image-preview",
        b"max-video-preview",
    ]
    .iter()
    .any(|d| word.eq_ignore_ascii_case(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOFOLLOW: Directives = Directives {
        nofollow: true,
        noindex: false,
    };

    #[test]
    fn meta_robots_and_our_own_name_count_other_agents_do_not() {
        let mut meta = MetaRobots::default();
        meta.add(b"otherbot", b"nofollow");
        assert!(meta.for_agent("ringcrawl").is_empty());
        meta.add(b" RingCrawl ", b"noindex");
        assert!(meta.for_agent("ringcrawl").noindex);
        meta.add(b"Robots", b"index, NoFollow");
        assert_eq!(
            meta.for_agent("ringcrawl"),
            Directives {
                nofollow: true,
                noindex: true
            }
        );
        let mut none = MetaRobots::default();
        none.add(b"robots", b"none");
        assert!(none.for_agent("x").nofollow && none.for_agent("x").noindex);
        let mut other = MetaRobots::default();
        other.add(b"description", b"a page about nofollowing");
        assert!(other.for_agent("x").is_empty());
    }

    #[test]
    fn a_header_naming_another_agent_says_nothing_to_us() {
        assert_eq!(header("nofollow", "ringcrawl"), NOFOLLOW);
        assert_eq!(header("noarchive, nofollow", "ringcrawl"), NOFOLLOW);
        assert_eq!(header("ringcrawl: nofollow", "ringcrawl"), NOFOLLOW);
        assert!(header("otherbot: nofollow", "ringcrawl").is_empty());
        assert!(header("unavailable_after: 25 Jun 2010 15:00:00 PST", "r").is_empty());
        assert_eq!(header("max-snippet: 20, nofollow", "ringcrawl"), NOFOLLOW);
        assert!(header("", "ringcrawl").is_empty());
        assert!(header("otherbot:", "ringcrawl").is_empty());
    }
}

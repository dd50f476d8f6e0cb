//! The synthetic site (`ringcrawl-site`) served by a test on 127.0.0.1:0,
//! split over several host names (`--resolve` pins them to it), with
//! what a complete crawl of it must record and what it was asked.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{Delay, SiteSpec, SynthSite};

/// A site of `pages` pages (1,500 bytes each) over `hosts` hosts.
pub struct Site {
    pub site: Arc<SynthSite>,
    pub server: Server,
    pub authority: String,
}

impl Site {
    pub fn new(pages: usize, hosts: usize) -> Site {
        Site::with_delay(pages, hosts, 0)
    }

    /// As [`Site::new`], every answer `delay_ms` late.
    pub fn with_delay(pages: usize, hosts: usize, delay_ms: u64) -> Site {
        let delay = match delay_ms {
            0 => Delay::None,
            ms => Delay::Fixed(std::time::Duration::from_millis(ms)),
        };
        let site = Arc::new(SynthSite::new(SiteSpec {
            pages,
            hosts,
            page_bytes: 1500,
            delay,
            ..SiteSpec::default()
        }));
        let server = Server::start(site.clone().handler()).expect("site starts");
        let authority = format!("127.0.0.1:{}", server.port());
        Site {
            site,
            server,
            authority,
        }
    }

    pub fn roots(&self) -> Vec<String> {
        self.site.roots(&self.authority)
    }

    pub fn expected(&self) -> BTreeSet<String> {
        self.site
            .expected_urls(&self.authority)
            .into_iter()
            .collect()
    }

    /// `--resolve` for every host of the site.
    pub fn resolve_args(&self) -> Vec<String> {
        (0..self.site.host_count())
            .flat_map(|k| {
                [
                    "--resolve".to_string(),
                    format!(
                        "{}:{}:127.0.0.1",
                        SynthSite::host_name(k),
                        self.server.port()
                    ),
                ]
            })
            .collect()
    }

    /// Requests for pages (robots.txt left out: each run asks for it
    /// again), by `"host path"`.
    pub fn page_hits(&self) -> BTreeMap<String, usize> {
        self.server
            .hit_counts()
            .into_iter()
            .filter(|(key, _)| !key.ends_with(" /robots.txt"))
            .collect()
    }
}

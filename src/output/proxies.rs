//! Each proxy's health over the crawl ([`ProxyHealth`]), for the report,
//! `--report-json` and the metrics: the exchanges tried through it, those
//! that failed at the proxy, the times it was parked (passed over after
//! failing in a row), and whether it was parked when last looked at.
//! Named by its URL without user or password.
//!
//! Pure counting, merged over the shards (each shard keeps its own proxy
//! rotation: `net::proxy::Rotation`, which does the parking). Bounded by
//! the proxies the crawl was given.

use serde::Serialize;

/// One proxy's numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProxyHealth {
    /// Its URL without credentials (`http://proxy.example:3128`).
    pub proxy: String,
    /// Exchanges tried through it (each try; robots.txt too).
    pub fetches: u64,
    /// Of those, the ones that failed at the proxy (it could not be
    /// reached, refused the credentials or the tunnel).
    pub failures: u64,
    /// Times a shard parked it.
    pub parked_times: u64,
    /// Parked by some shard when last looked at (at the end, in the
    /// report).
    pub parked: bool,
}

impl ProxyHealth {
    /// A proxy's numbers on one shard.
    pub fn new(
        proxy: String,
        fetches: u64,
        failures: u64,
        parked_times: u64,
        parked: bool,
    ) -> Self {
        ProxyHealth {
            proxy,
            fetches,
            failures,
            parked_times,
            parked,
        }
    }
}

/// Fold one shard's list into `all` (one entry a proxy, in the order met).
pub(crate) fn merge(all: &mut Vec<ProxyHealth>, shard: &[ProxyHealth]) {
    for p in shard {
        match all.iter_mut().find(|q| q.proxy == p.proxy) {
            Some(q) => {
                q.fetches += p.fetches;
                q.failures += p.failures;
                q.parked_times += p.parked_times;
                q.parked |= p.parked;
            }
            None => all.push(p.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_add_up_and_a_proxy_parked_on_one_shard_is_parked() {
        let a = "http://p1.test:3128".to_string();
        let b = "socks5h://p2.test:1080".to_string();
        let mut all = Vec::new();
        merge(&mut all, &[ProxyHealth::new(a.clone(), 5, 3, 1, true)]);
        merge(
            &mut all,
            &[
                ProxyHealth::new(b.clone(), 2, 0, 0, false),
                ProxyHealth::new(a.clone(), 4, 0, 0, false),
            ],
        );
        assert_eq!(
            all,
            [
                ProxyHealth::new(a, 9, 3, 1, true),
                ProxyHealth::new(b, 2, 0, 0, false)
            ]
        );
    }
}

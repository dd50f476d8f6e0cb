//! A cache miss: asking the nameservers for a name, or the system
//! resolver when none is configured.
//!
//! AAAA and A go out at once (each only if its family is allowed); each
//! question goes to the nameservers in order, `attempts` tries each, a
//! truncated UDP answer is asked again over TCP, and a CNAME chain the
//! server left unfinished is followed with new questions. This file decides
//! what to ask and what the answers mean; one exchange with one server is
//! [`super::query`], the cache and the sharing of lookups are the
//! resolver's ([`super`]).

use std::hash::BuildHasher;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use super::addresses::happy_order;
use super::query::{Failure, Query};
use super::system::system_lookup;
use super::wire::{self, QType, Rcode, Response};
use super::{Answer, Inner, Lookup, NO_ADDRESS, WRONG_FAMILY};

impl Inner {
    fn next_id(&self) -> u16 {
        let n = self.id_counter.get().wrapping_add(1);
        self.id_counter.set(n);
        (self.id_key.hash_one(n) & 0xFFFF) as u16
    }

    /// Looks `name` up and says how long the answer may be kept.
    pub(super) async fn query_name(&self, name: &str) -> (Answer, Duration) {
        if self.nameservers.is_empty() {
            let owned = name.to_string();
            let families = self.opts.families;
            let answer = glommio::executor()
                .spawn_blocking(move || system_lookup(&owned))
                .await
                .and_then(|ips| happy_order(&ips, families).ok_or_else(|| WRONG_FAMILY.into()));
            if let Ok(ips) = &answer {
                self.journal.push(|| Lookup {
                    name: name.to_string(),
                    at: SystemTime::now(),
                    server: None,
                    answers: ips.iter().map(|&ip| (ip, 0)).collect(),
                });
            }
            let keep = match answer {
                Ok(_) => self.opts.max_ttl,
                Err(_) => self.opts.negative_ttl,
            };
            return (answer, keep);
        }
        match self.resolve_addrs(name).await {
            Ok((ips, ttl, server)) => {
                self.journal.push(|| Lookup {
                    name: name.to_string(),
                    at: SystemTime::now(),
                    server,
                    answers: ips.iter().map(|&ip| (ip, ttl)).collect(),
                });
                let keep = Duration::from_secs(u64::from(ttl))
                    .min(self.opts.max_ttl)
                    .max(self.opts.min_ttl);
                (Ok(ips), keep)
            }
            Err(reason) => (Err(reason), self.opts.negative_ttl),
        }
    }

    /// AAAA and A for `name` at once (each if its family is allowed),
    /// following CNAME chains the servers left unfinished. The addresses in
    /// the order to try, their TTL (seconds, the least of the answers) and
    /// the nameserver that gave them.
    async fn resolve_addrs(
        &self,
        name: &str,
    ) -> Result<(Rc<[IpAddr]>, u32, Option<IpAddr>), String> {
        const MAX_FOLLOW: usize = 8;
        let families = self.opts.families;
        let mut qname = name.to_string();
        let mut chain_ttl = u32::MAX;
        for _ in 0..MAX_FOLLOW {
            let ask = |wanted: bool, qtype| {
                let qname = &qname;
                async move {
                    match wanted {
                        true => Some(self.ask(qname, qtype).await),
                        false => None,
                    }
                }
            };
            let (aaaa, a) = futures_lite::future::zip(
                ask(families.v6(), QType::Aaaa),
                ask(families.v4(), QType::A),
            )
            .await;
            let answers: Vec<Result<(Response, SocketAddr), String>> = [aaaa, a].into_iter().flatten().collect();
            let mut ips = Vec::new();
            // The TTL of the answers that gave addresses (an empty answer
            // for the other family says nothing about how long they last).
            let mut ttl = chain_ttl;
            let mut canonical = None;
            let mut failure = None;
            let mut server = None;
            for answer in answers {
                match answer {
                    Ok((r, _)) if r.rcode == Rcode::NxDomain => {
                        return Err(Rcode::NxDomain.to_string())
                    }
                    Ok((r, from)) => {
                        let answer_ttl = r.ttl.unwrap_or(0);
                        if !r.addrs.is_empty() {
                            ttl = ttl.min(answer_ttl);
                            server = server.or(Some(from.ip()));
                        }
                        ips.extend(r.addrs);
                        if canonical.is_none() {
                            canonical = r.canonical.map(|target| (target, answer_ttl));
                        }
                    }
                    Err(reason) => failure = failure.or(Some(reason)),
                }
            }
            if let Some(ordered) = happy_order(&ips, families) {
                return Ok((ordered, ttl, server));
            }
            if let Some(reason) = failure {
                return Err(reason);
            }
            match canonical {
                Some((target, answer_ttl)) => {
                    qname = target;
                    chain_ttl = chain_ttl.min(answer_ttl);
                }
                None => return Err(NO_ADDRESS.to_string()),
            }
        }
        Err("CNAME chain too long".to_string())
    }

    /// One question to the nameservers in turn: the first NOERROR or
    /// NXDOMAIN answer and the server that gave it, or why none came.
    async fn ask(&self, name: &str, qtype: QType) -> Result<(Response, SocketAddr), String> {
        let mut last = "no nameserver".to_string();
        for &server in &self.nameservers {
            for _ in 0..self.opts.attempts.max(1) {
                let id = self.next_id();
                let query = wire::build_query(id, name, qtype).map_err(|e| e.to_string())?;
                let q = Query {
                    server,
                    bytes: &query,
                    id,
                    name,
                    qtype,
                    timeout: self.opts.timeout,
                };
                let outcome = {
                    let _permit = self
                        .permits
                        .acquire_permit(1)
                        .await
                        .map_err(|e| e.to_string())?;
                    self.count(|s| s.queries += 1);
                    match q.udp().await {
                        Ok(r) if r.truncated && r.addrs.is_empty() && r.rcode == Rcode::NoError => {
                            self.count(|s| s.queries += 1);
                            q.tcp().await
                        }
                        other => other,
                    }
                };
                match outcome {
                    Ok(r) if matches!(r.rcode, Rcode::NoError | Rcode::NxDomain) => {
                        return Ok((r, server))
                    }
                    Ok(r) => {
                        // SERVFAIL, REFUSED, ...: the next server may do better.
                        last = r.rcode.to_string();
                        break;
                    }
                    Err(Failure::Timeout) => {
                        self.count(|s| s.timeouts += 1);
                        last = "timeout".to_string();
                    }
                    Err(Failure::Other(reason)) => {
                        last = reason;
                        break;
                    }
                }
            }
        }
        Err(last)
    }
}

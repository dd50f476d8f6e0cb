//! A cache miss: asking the nameservers for a name, or the system
//! resolver when none is configured.
//!
//! AAAA and A go out at once (each only if its family is allowed), and
//! each family is asked on its own: its question goes to the nameservers in
//! order, `attempts` tries each, a truncated UDP answer is asked again over
//! TCP, and a CNAME chain the server left unfinished is followed with new
//! questions. When the callers are answered and which family is still worth
//! waiting for after that is [`super::resolution`]'s rule (RFC 8305 §3): the
//! lookup publishes its answer as soon as the rule allows, and a family that
//! answers later is merged into the cache. A family still out after the
//! answer finishes the attempt under way and starts no other (no retry, no
//! next server, no CNAME link), so it holds its query slot one `timeout`
//! at most.
//!
//! This file runs the questions; one exchange with one server is
//! [`super::query`], the cache and the sharing of lookups are the
//! resolver's ([`super`], [`super::pending`]).

use std::cell::Cell;
use std::future::Future;
use std::hash::BuildHasher;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::Poll;
use std::time::SystemTime;

use glommio::timer::Timer;

use super::addresses::happy_order;
use super::pending::Completion;
use super::query::{Failure, Query};
use super::resolution::{self, Family, Next, State, RESOLUTION_DELAY};
use super::system::system_lookup;
use super::{Inner, Lookup, WRONG_FAMILY};
use ringcrawl_dns_wire::{self as wire, QType, Rcode, Response};

/// CNAME links followed with new questions, per family.
const MAX_FOLLOW: usize = 8;

/// One family's questions, running.
type Asking<'a> = Pin<Box<dyn Future<Output = Family> + 'a>>;

/// Where one family of the lookup is.
enum Slot<'a> {
    None,
    Out(Asking<'a>),
    Done(Family),
}

impl Slot<'_> {
    fn state(&self) -> State<'_> {
        match self {
            Slot::None => State::None,
            Slot::Out(_) => State::Out,
            Slot::Done(f) => State::Done(f),
        }
    }

    fn done(&self) -> Option<&Family> {
        match self {
            Slot::Done(f) => Some(f),
            _ => None,
        }
    }

    /// Polls a family still out; true if it is in now.
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        if let Slot::Out(asking) = self {
            if let Poll::Ready(family) = asking.as_mut().poll(cx) {
                *self = Slot::Done(family);
                return true;
            }
        }
        false
    }
}

impl Inner {
    fn next_id(&self) -> u16 {
        let n = self.id_counter.get().wrapping_add(1);
        self.id_counter.set(n);
        (self.id_key.hash_one(n) & 0xFFFF) as u16
    }

    /// Looks `done.name` up and publishes the answer through `done` (to the
    /// callers and the cache), then merges a family that came late.
    pub(super) async fn run_lookup(&self, done: &Completion) {
        let name = done.name.as_str();
        if self.nameservers.is_empty() {
            return self.system(done).await;
        }
        // Set once the callers are answered: a family still out then
        // starts no new question.
        let answered = Cell::new(false);
        let families = self.opts.families;
        let ask = |wanted: bool, qtype| match wanted {
            true => Slot::Out(Box::pin(self.family(name, qtype, &answered))),
            false => Slot::None,
        };
        let mut v6 = ask(families.v6(), QType::Aaaa);
        let mut v4 = ask(families.v4(), QType::A);
        let mut delay: Option<Timer> = None;
        std::future::poll_fn(|cx| {
            v6.poll(cx);
            v4.poll(cx);
            match resolution::next(v6.state(), v4.state()) {
                Next::Answer => Poll::Ready(()),
                Next::Wait => Poll::Pending,
                Next::Delay => {
                    let timer = delay.get_or_insert_with(|| Timer::new(RESOLUTION_DELAY));
                    Pin::new(timer).poll(cx).map(|_| ())
                }
            }
        })
        .await;
        let family = resolution::combine(v6.done(), v4.done());
        let (mut late, is_v6) = match (v6, v4) {
            (Slot::Out(asking), _) => (Some(asking), true),
            (_, Slot::Out(asking)) => (Some(asking), false),
            _ => (None, false),
        };
        if late.is_some() {
            self.count(|s| s.early += 1);
            if !resolution::keep_asking(is_v6, &family) {
                late = None;
            }
        }
        self.publish(done, &family);
        answered.set(true);
        let Some(asking) = late else {
            return;
        };
        let late = asking.await;
        if let Ok(ips) = resolution::answer(&late, families) {
            self.count(|s| s.late += 1);
            done.merge(&ips, resolution::keep(&late, &self.opts));
        }
    }

    /// Hands `family` to the callers and the cache, and to the journal
    /// when it has addresses.
    fn publish(&self, done: &Completion, family: &Family) {
        let answer = resolution::answer(family, self.opts.families);
        if let (Ok(ips), Family::Found { ttl, server, .. }) = (&answer, family) {
            self.journal.push(|| Lookup {
                name: done.name.clone(),
                at: SystemTime::now(),
                server: Some(*server),
                answers: ips.iter().map(|&ip| (ip, *ttl)).collect(),
            });
        }
        done.publish(answer, resolution::keep(family, &self.opts));
    }

    /// No nameserver configured: getaddrinfo on the blocking thread pool.
    async fn system(&self, done: &Completion) {
        let owned = done.name.clone();
        let families = self.opts.families;
        let answer = glommio::executor()
            .spawn_blocking(move || system_lookup(&owned))
            .await
            .and_then(|ips| happy_order(&ips, families).ok_or_else(|| WRONG_FAMILY.into()));
        if let Ok(ips) = &answer {
            self.journal.push(|| Lookup {
                name: done.name.clone(),
                at: SystemTime::now(),
                server: None,
                answers: ips.iter().map(|&ip| (ip, 0)).collect(),
            });
        }
        let keep = match answer {
            Ok(_) => self.opts.max_ttl,
            Err(_) => self.opts.negative_ttl,
        };
        done.publish(answer, keep);
    }

    /// One family of `name`: its question, then the CNAME chain's end if
    /// the server left the chain unfinished. Once `answered` is set, no new
    /// question goes out.
    async fn family(&self, name: &str, qtype: QType, answered: &Cell<bool>) -> Family {
        let mut qname = name.to_string();
        let mut chain_ttl = u32::MAX;
        for _ in 0..MAX_FOLLOW {
            let (r, from) = match self.ask(&qname, qtype, answered).await {
                Ok(answer) => answer,
                Err(reason) => return Family::Failed(reason),
            };
            let ttl = r.ttl.unwrap_or(0);
            if r.rcode == Rcode::NxDomain {
                return Family::Absent {
                    nxdomain: true,
                    ttl: r.negative_ttl,
                };
            }
            if !r.addrs.is_empty() {
                return Family::Found {
                    ips: r.addrs,
                    ttl: chain_ttl.min(ttl),
                    server: from.ip(),
                };
            }
            match r.canonical {
                Some(target) => {
                    qname = target;
                    chain_ttl = chain_ttl.min(ttl);
                }
                None => {
                    return Family::Absent {
                        nxdomain: false,
                        ttl: r.negative_ttl,
                    }
                }
            }
        }
        Family::Failed("CNAME chain too long".to_string())
    }

    /// One question to the nameservers in turn: the first NOERROR or
    /// NXDOMAIN answer and the server that gave it, or why none came. Once
    /// `answered` is set, no new attempt starts.
    async fn ask(
        &self,
        name: &str,
        qtype: QType,
        answered: &Cell<bool>,
    ) -> Result<(Response, SocketAddr), String> {
        let mut last = "no nameserver".to_string();
        for &server in &self.nameservers {
            for _ in 0..self.opts.attempts.max(1) {
                if answered.get() {
                    return Err(last);
                }
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
                    if self.permits.available() == 0 {
                        self.count(|s| s.waited += 1);
                    }
                    let _permit = self
                        .permits
                        .acquire_permit(1)
                        .await
                        .map_err(|e| e.to_string())?;
                    self.count(|s| s.queries += 1);
                    match q.udp().await {
                        Ok(r) if r.truncated && r.addrs.is_empty() && r.rcode == Rcode::NoError => {
                            self.count(|s| {
                                s.answers += 1;
                                s.queries += 1;
                            });
                            q.tcp().await
                        }
                        other => other,
                    }
                };
                if outcome.is_ok() {
                    self.count(|s| s.answers += 1);
                }
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

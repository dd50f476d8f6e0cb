//! Session resumption: the shard's session cache, and when a new connection
//! should wait for a session rather than do a full handshake.
//!
//! A full handshake costs the server a signature and the client a chain
//! verification; a resumed one skips both. Resumption needs a session from
//! an earlier connection to the same name: a TLS 1.2 session (reusable) or
//! a TLS 1.3 ticket (single-use in rustls; servers send a few after each
//! handshake, rustls and OpenSSL two). So:
//!
//! * the first connection of a shard to a name goes alone: others to the
//!   same name wait until its exchange has ended (its tickets arrive with
//!   its answer), then resume;
//! * later, a connection that finds no ticket waits for the exchanges in
//!   flight to that name while the server has left at least 1.5 tickets
//!   per connection so far: the connections that resume then multiply the
//!   tickets, and a burst of new connections resumes instead of each doing
//!   a full handshake (rustls' server leaves two per connection, so a
//!   burst ramps up 1, 2, 4, 8...). A server that leaves fewer is not
//!   waited for: OpenSSL (nginx) leaves two after a full handshake but one
//!   after a resumption, and waiting for it would serialise the burst
//!   (measured: 313 pages took 1.3 s instead of 0.1 s).
//!
//! Every wait is bounded by the fetch's patience (its connect time-out,
//! within its deadline); then the connection does a full handshake.
//! [`Sessions`] counts the tickets it holds per name (rustls' own cache
//! cannot be asked without taking one); the count is a hint: a ticket the
//! cache dropped or found expired only costs a full handshake.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::NamedGroup;
use rustls_pki_types::ServerName;

use crate::crawl::notify::Notify;

/// TLS 1.3 tickets rustls' memory cache keeps per name.
const TICKETS_PER_NAME: usize = 8;

/// The shard's session cache (rustls' memory cache) with a count of what
/// it holds per name.
#[derive(Debug)]
pub(super) struct Sessions {
    cache: ClientSessionMemoryCache,
    held: Mutex<HashMap<ServerName<'static>, Held>>,
    /// Names counted at most (the count is dropped, not the sessions, past it).
    names: usize,
}

/// Sessions held for one name, as far as this store saw.
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    tickets: usize,
    tls12: bool,
    /// TLS 1.3 tickets received for the name, ever.
    received: u64,
}

impl Sessions {
    /// A cache of up to `names` server names' sessions.
    pub(super) fn new(names: usize) -> Self {
        Sessions {
            // rustls counts entries: up to 8 tickets a name.
            cache: ClientSessionMemoryCache::new(names.saturating_mul(TICKETS_PER_NAME)),
            held: Mutex::new(HashMap::new()),
            names,
        }
    }

    fn edit(&self, name: &ServerName<'static>, f: impl FnOnce(&mut Held)) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = held.get_mut(name) {
            f(entry);
            return;
        }
        if held.len() >= self.names {
            held.clear();
        }
        let mut entry = Held::default();
        f(&mut entry);
        held.insert(name.clone(), entry);
    }

    /// Sessions held for `name`.
    fn held(&self, name: &ServerName<'static>) -> Held {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.get(name).copied().unwrap_or_default()
    }

    /// Whether a new connection to `name` can resume; counts a ticket out
    /// for it (rustls takes the ticket when the connection starts).
    fn reserve(&self, name: &ServerName<'static>) -> bool {
        let mut resumable = false;
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = held.get_mut(name) {
            if entry.tls12 {
                resumable = true;
            } else if entry.tickets > 0 {
                entry.tickets -= 1;
                resumable = true;
            }
        }
        resumable
    }
}

impl ClientSessionStore for Sessions {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.cache.set_kx_hint(name, group);
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.cache.kx_hint(name)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.edit(&name, |h| h.tls12 = true);
        self.cache.set_tls12_session(name, value);
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.cache.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.edit(name, |h| h.tls12 = false);
        self.cache.remove_tls12_session(name);
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.edit(&name, |h| {
            h.tickets = (h.tickets + 1).min(TICKETS_PER_NAME);
            h.received += 1;
        });
        self.cache.insert_tls13_ticket(name, value);
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        let ticket = self.cache.take_tls13_ticket(name);
        if ticket.is_none() {
            // The count was ahead (evicted or expired tickets): resync.
            self.edit(name, |h| h.tickets = 0);
        }
        ticket
    }
}

/// The shard's connections under way per name, for [`Contacts::admit`].
#[derive(Default)]
pub(super) struct Contacts {
    names: RefCell<HashMap<ServerName<'static>, Contact>>,
}

#[derive(Default)]
struct Contact {
    /// Exchanges in flight on new connections to the name: each may bring
    /// tickets.
    bringing: usize,
    /// Exchanges on new connections to the name that have ended.
    exchanges: u64,
    /// Notified when one of those exchanges ends.
    ended: Rc<Notify>,
}

/// Names whose contact state a shard keeps; past it, the state of names
/// with nothing in flight is forgotten (their next connection is a first
/// contact again).
const CONTACT_NAMES: usize = 64 * 1024;

impl Contacts {
    /// See the module doc. Waits at most `patience`.
    pub(super) async fn admit<'a>(
        &'a self,
        sessions: &'a Sessions,
        name: &ServerName<'static>,
        patience: Duration,
    ) -> Admission<'a> {
        let give_up = Instant::now() + patience;
        loop {
            let wait = {
                let mut names = self.names.borrow_mut();
                if names.len() >= CONTACT_NAMES && !names.contains_key(name) {
                    names.retain(|_, c| c.bringing > 0);
                }
                let contact = names.entry(name.clone()).or_default();
                let received = sessions.held(name).received;
                // Before the first contact ends nothing is known: wait.
                let multiplies = contact.exchanges == 0 || received * 2 >= contact.exchanges * 3;
                let waiting_helps = contact.bringing > 0 && multiplies;
                if sessions.reserve(name) || !waiting_helps {
                    contact.bringing += 1;
                    None
                } else {
                    Some(contact.ended.clone())
                }
            };
            let Some(ended) = wait else {
                return Admission {
                    contacts: self,
                    name: name.clone(),
                };
            };
            let left = give_up.saturating_duration_since(Instant::now());
            if left.is_zero() {
                if let Some(contact) = self.names.borrow_mut().get_mut(name) {
                    contact.bringing += 1;
                }
                return Admission {
                    contacts: self,
                    name: name.clone(),
                };
            }
            futures_lite::future::or(glommio::timer::sleep(left), ended.notified()).await;
        }
    }
}

/// A connection's place among those to its name, until its exchange ends.
pub struct Admission<'a> {
    contacts: &'a Contacts,
    name: ServerName<'static>,
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        let mut names = self.contacts.names.borrow_mut();
        let Some(contact) = names.get_mut(&self.name) else {
            return;
        };
        contact.bringing = contact.bringing.saturating_sub(1);
        contact.exchanges += 1;
        let ended = contact.ended.clone();
        drop(names);
        ended.notify_all();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reserving_counts_tickets_out_and_tls12_sessions_are_reusable() {
        let sessions = Sessions::new(4);
        let a = ServerName::try_from("a.test").unwrap();
        assert!(!sessions.reserve(&a));
        sessions.edit(&a, |h| h.tickets = 2);
        assert!(sessions.reserve(&a) && sessions.reserve(&a));
        assert!(!sessions.reserve(&a), "two tickets, two resumptions");
        sessions.edit(&a, |h| h.tls12 = true);
        assert!(sessions.reserve(&a) && sessions.reserve(&a));
    }

    #[test]
    fn the_first_contact_goes_alone_and_a_server_without_tickets_is_not_waited_for() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Sessions::new(4);
            let contacts = Contacts::default();
            let a = ServerName::try_from("a.test").unwrap();
            let patience = Duration::from_millis(200);
            let first = contacts.admit(&sessions, &a, patience).await;
            let started = Instant::now();
            let second = contacts.admit(&sessions, &a, patience).await;
            assert!(
                started.elapsed() >= patience,
                "the second waited for the first contact"
            );
            drop(first);
            drop(second);
            // The first contact left no ticket: no more waiting.
            let started = Instant::now();
            let third = contacts.admit(&sessions, &a, patience).await;
            let fourth = contacts.admit(&sessions, &a, patience).await;
            assert!(started.elapsed() < patience);
            drop((third, fourth));
        });
    }

    #[test]
    fn a_server_that_leaves_one_ticket_a_connection_is_not_waited_for() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Sessions::new(4);
            let contacts = Contacts::default();
            let a = ServerName::try_from("a.test").unwrap();
            let patience = Duration::from_millis(300);
            // First contact: two tickets; then two resumptions: one each.
            drop(contacts.admit(&sessions, &a, patience).await);
            sessions.edit(&a, |h| {
                h.tickets = 2;
                h.received = 2;
            });
            for _ in 0..2 {
                drop(contacts.admit(&sessions, &a, patience).await);
                sessions.edit(&a, |h| {
                    h.tickets += 1;
                    h.received += 1;
                });
            }
            // 4 tickets over 3 connections: fewer than 1.5 a connection.
            let mut held = Vec::new();
            for _ in 0..3 {
                held.push(contacts.admit(&sessions, &a, patience).await);
            }
            assert_eq!(sessions.held(&a).tickets, 0, "three took the tickets");
            let started = Instant::now();
            held.push(contacts.admit(&sessions, &a, patience).await);
            assert!(started.elapsed() < patience, "no wait: full handshake");
        });
    }

    #[test]
    fn waiters_resume_with_the_tickets_the_first_contact_brings() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Rc::new(Sessions::new(4));
            let contacts = Rc::new(Contacts::default());
            let a = ServerName::try_from("a.test").unwrap();
            let patience = Duration::from_secs(5);
            let first = contacts.admit(&sessions, &a, patience).await;
            let waiter = glommio::spawn_local({
                let (sessions, contacts, a) = (sessions.clone(), contacts.clone(), a.clone());
                async move {
                    let started = Instant::now();
                    let admitted = contacts.admit(&sessions, &a, patience).await;
                    drop(admitted);
                    started.elapsed()
                }
            });
            glommio::timer::sleep(Duration::from_millis(20)).await;
            sessions.edit(&a, |h| {
                h.tickets = 2;
                h.received = 2;
            });
            drop(first);
            let waited = waiter.await;
            assert!(
                waited < Duration::from_secs(1),
                "woken by the end: {waited:?}"
            );
            assert_eq!(sessions.held(&a).tickets, 1, "the waiter reserved one");
        });
    }
}

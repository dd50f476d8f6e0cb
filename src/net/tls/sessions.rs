//! When a new connection should wait for a TLS session rather than do a
//! full handshake.
//!
//! A full handshake costs the server a signature and the client a chain
//! verification; a resumed one skips both. Resumption needs a session from
//! an earlier connection to the same name and port: a TLS 1.2 session
//! (reusable) or a TLS 1.3 ticket (single-use in rustls; servers send a few
//! after each handshake, rustls and OpenSSL two). So:
//!
//! * the first connection of a shard to a (name, port) goes alone: others
//!   to the same name and port wait until its exchange has ended (its
//!   tickets arrive with its answer), then resume;
//! * later, a connection that finds no ticket waits for the exchanges in
//!   flight to that name and port while the server has left at least 1.5
//!   tickets per connection so far: the connections that resume then
//!   multiply the tickets, and a burst of new connections resumes instead
//!   of each doing a full handshake (rustls' server leaves two per
//!   connection, so a burst ramps up 1, 2, 4, ... up to the tickets the
//!   cache keeps a key). A server that leaves fewer is not waited for:
//!   OpenSSL (nginx) leaves two after a full handshake but one after a
//!   resumption, and waiting for it would serialise the burst (measured:
//!   313 pages took 1.3 s instead of 0.1 s).
//!
//! Every wait is bounded by the fetch's patience (its connect time-out,
//! within its deadline); then the connection does a full handshake. The
//! session cache (`super::store`) counts the tickets it holds per key; the
//! count is a hint: a ticket the cache dropped or found expired only costs
//! a full handshake. Not here: the cache itself (`super::store`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::store::{SessionKey, SessionStore};
use crate::sync::notify::Notify;

/// What the session cache tells [`Contacts::admit`] about a key.
pub(super) trait Held {
    /// Whether a new connection can resume; counts a ticket out for it.
    fn reserve(&self, key: &SessionKey) -> bool;
    /// TLS 1.3 tickets received for the key, ever (while it was held).
    fn received(&self, key: &SessionKey) -> u64;
}

impl Held for SessionStore {
    fn reserve(&self, key: &SessionKey) -> bool {
        SessionStore::reserve(self, key)
    }

    fn received(&self, key: &SessionKey) -> u64 {
        SessionStore::received(self, key)
    }
}

/// The shard's connections under way per (name, port), for
/// [`Contacts::admit`].
#[derive(Default)]
pub(super) struct Contacts {
    keys: RefCell<HashMap<SessionKey, Contact>>,
}

#[derive(Default)]
struct Contact {
    /// Exchanges in flight on new connections to the key: each may bring
    /// tickets.
    bringing: usize,
    /// Exchanges on new connections to the key that have ended.
    exchanges: u64,
    /// Notified when one of those exchanges ends.
    ended: Rc<Notify>,
}

/// Keys whose contact state a shard keeps (~150 bytes each with the name);
/// past it, the state of keys with nothing in flight is forgotten (their
/// next connection is a first contact again). Far more than a shard has
/// hosts in flight at once.
const CONTACT_KEYS: usize = 8 * 1024;

impl Contacts {
    /// See the module doc. Waits at most `patience`.
    pub(super) async fn admit(
        &self,
        sessions: &impl Held,
        key: &SessionKey,
        patience: Duration,
    ) -> Admission<'_> {
        let give_up = Instant::now() + patience;
        loop {
            let wait = {
                let mut keys = self.keys.borrow_mut();
                if keys.len() >= CONTACT_KEYS && !keys.contains_key(key) {
                    keys.retain(|_, c| c.bringing > 0);
                }
                let contact = keys.entry(key.clone()).or_default();
                let received = sessions.received(key);
                // Before the first contact ends nothing is known: wait.
                let multiplies = contact.exchanges == 0 || received * 2 >= contact.exchanges * 3;
                let waiting_helps = contact.bringing > 0 && multiplies;
                if sessions.reserve(key) || !waiting_helps {
                    contact.bringing += 1;
                    None
                } else {
                    Some(contact.ended.clone())
                }
            };
            let Some(ended) = wait else {
                return Admission {
                    contacts: self,
                    key: key.clone(),
                };
            };
            let left = give_up.saturating_duration_since(Instant::now());
            if left.is_zero() {
                if let Some(contact) = self.keys.borrow_mut().get_mut(key) {
                    contact.bringing += 1;
                }
                return Admission {
                    contacts: self,
                    key: key.clone(),
                };
            }
            futures_lite::future::or(glommio::timer::sleep(left), ended.notified()).await;
        }
    }
}

/// A connection's place among those to its name and port, until its
/// exchange ends.
pub(crate) struct Admission<'a> {
    contacts: &'a Contacts,
    key: SessionKey,
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        let mut keys = self.contacts.keys.borrow_mut();
        let Some(contact) = keys.get_mut(&self.key) else {
            return;
        };
        contact.bringing = contact.bringing.saturating_sub(1);
        contact.exchanges += 1;
        let ended = contact.ended.clone();
        drop(keys);
        ended.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use rustls_pki_types::ServerName;

    use super::*;

    /// A cache that holds `tickets` for every key and has received
    /// `received`.
    #[derive(Default)]
    struct Fake {
        tickets: Cell<usize>,
        received: Cell<u64>,
    }

    impl Fake {
        /// `n` more tickets arrive.
        fn bring(&self, n: usize) {
            self.tickets.set(self.tickets.get() + n);
            self.received.set(self.received.get() + n as u64);
        }
    }

    impl Held for Fake {
        fn reserve(&self, _: &SessionKey) -> bool {
            let left = self.tickets.get();
            self.tickets.set(left.saturating_sub(1));
            left > 0
        }

        fn received(&self, _: &SessionKey) -> u64 {
            self.received.get()
        }
    }

    fn key(name: &str, port: u16) -> SessionKey {
        SessionKey::new(ServerName::try_from(name.to_string()).unwrap(), port)
    }

    #[test]
    fn the_first_contact_goes_alone_and_a_server_without_tickets_is_not_waited_for() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Fake::default();
            let contacts = Contacts::default();
            let a = key("a.test", 443);
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
    fn a_first_contact_holds_up_its_own_port_only() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Fake::default();
            let contacts = Contacts::default();
            let patience = Duration::from_secs(5);
            let https = contacts
                .admit(&sessions, &key("a.test", 443), patience)
                .await;
            let started = Instant::now();
            let other_port = contacts
                .admit(&sessions, &key("a.test", 8443), patience)
                .await;
            let other_name = contacts
                .admit(&sessions, &key("b.test", 443), patience)
                .await;
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "first contacts of their own: {:?}",
                started.elapsed()
            );
            drop((https, other_port, other_name));
        });
    }

    #[test]
    fn a_server_that_leaves_one_ticket_a_connection_is_not_waited_for() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Fake::default();
            let contacts = Contacts::default();
            let a = key("a.test", 443);
            let patience = Duration::from_millis(300);
            // First contact: two tickets; then two resumptions: one each.
            drop(contacts.admit(&sessions, &a, patience).await);
            sessions.bring(2);
            for _ in 0..2 {
                drop(contacts.admit(&sessions, &a, patience).await);
                sessions.bring(1);
            }
            // 4 tickets over 3 connections: fewer than 1.5 a connection.
            let mut held = Vec::new();
            for _ in 0..3 {
                held.push(contacts.admit(&sessions, &a, patience).await);
            }
            assert_eq!(sessions.tickets.get(), 0, "three took the tickets");
            let started = Instant::now();
            held.push(contacts.admit(&sessions, &a, patience).await);
            assert!(started.elapsed() < patience, "no wait: full handshake");
        });
    }

    #[test]
    fn waiters_resume_with_the_tickets_the_first_contact_brings() {
        glommio::LocalExecutor::default().run(async {
            let sessions = Rc::new(Fake::default());
            let contacts = Rc::new(Contacts::default());
            let a = key("a.test", 443);
            let patience = Duration::from_secs(5);
            let first = contacts.admit(&*sessions, &a, patience).await;
            let waiter = glommio::spawn_local({
                let (sessions, contacts, a) = (sessions.clone(), contacts.clone(), a.clone());
                async move {
                    let started = Instant::now();
                    let admitted = contacts.admit(&*sessions, &a, patience).await;
                    drop(admitted);
                    started.elapsed()
                }
            });
            glommio::timer::sleep(Duration::from_millis(20)).await;
            sessions.bring(2);
            drop(first);
            let waited = waiter.await;
            assert!(
                waited < Duration::from_secs(1),
                "woken by the end: {waited:?}"
            );
            assert_eq!(sessions.tickets.get(), 1, "the waiter reserved one");
        });
    }
}

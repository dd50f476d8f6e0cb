//! The executor threads of a server: each runs a glommio executor that
//! accepts on duplicates of every listening socket and spawns a task per
//! connection; at stop it cancels the connection tasks still running (the
//! registry [`Connections`]), so their sockets close, and returns.
//!
//! What this is not: binding the sockets or the server's handle (`mod.rs`),
//! or serving a connection (`connection.rs`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::TcpListener as StdListener;
use std::os::unix::io::{FromRawFd, IntoRawFd};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use glommio::net::TcpListener;
use glommio::{ExecutorJoinHandle, LocalExecutorBuilder, Placement};

use super::connection::connection;
use super::{Server, Shared};

/// Memory glommio registers with io_uring (counted against RLIMIT_MEMLOCK).
const IO_MEMORY: usize = 1 << 20;
/// Accepts in a row before the accept loop lets connection tasks run.
const ACCEPT_BURST: usize = 32;

impl Server {
    /// Start one executor accepting on duplicates of all listeners; return
    /// once it runs.
    pub(super) fn spawn_executor(&self, n: usize) -> io::Result<ExecutorJoinHandle<()>> {
        let for_executor = self
            .listeners
            .iter()
            .map(StdListener::try_clone)
            .collect::<io::Result<Vec<_>>>()?;
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let shared = self.shared.clone();
        let name = if n == 0 {
            "site".to_string()
        } else {
            format!("site-{n}")
        };
        let thread = LocalExecutorBuilder::new(Placement::Unbound)
            .io_memory(IO_MEMORY)
            .name(&name)
            .spawn(move || async move {
                let conns = Rc::new(Connections::default());
                let loops: Vec<_> = for_executor
                    .into_iter()
                    .map(|l| {
                        // SAFETY: the fd is a listening TCP socket we own (a dup).
                        let listener = unsafe { TcpListener::from_raw_fd(l.into_raw_fd()) };
                        glommio::spawn_local(accept_loop(listener, shared.clone(), conns.clone()))
                    })
                    .collect();
                let _ = ready_tx.send(());
                for accept in loops {
                    accept.await;
                }
                // Executor teardown does not drop detached tasks (their
                // sockets would stay open), so cancel every connection and
                // wait until they are gone.
                conns.stop();
                for _ in 0..1000 {
                    if conns.live.get() == 0 {
                        break;
                    }
                    glommio::timer::sleep(Duration::from_millis(1)).await;
                }
            })
            .map_err(io::Error::from)?;
        if ready_rx.recv().is_err() {
            // The executor could not start (e.g. io_uring setup failed).
            return Err(match thread.join() {
                Err(e) => io::Error::other(format!("site server executor failed: {e}")),
                Ok(()) => io::Error::other("site server executor exited early"),
            });
        }
        Ok(thread)
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, conns: Rc<Connections>) {
    let mut burst = 0;
    loop {
        let accepted = listener.accept().await;
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        match accepted {
            Ok(stream) => {
                let conns2 = conns.clone();
                conns.live.set(conns.live.get() + 1);
                shared.open.fetch_add(1, Ordering::SeqCst);
                let shared = shared.clone();
                glommio::spawn_local(async move {
                    let open = shared.clone();
                    futures_lite::future::or(connection(stream, shared), conns2.stopped()).await;
                    conns2.live.set(conns2.live.get() - 1);
                    open.open.fetch_sub(1, Ordering::SeqCst);
                })
                .detach();
                burst += 1;
                if burst >= ACCEPT_BURST {
                    // accept() returns at once while the backlog is non-empty;
                    // let the connection tasks run now and then.
                    burst = 0;
                    futures_lite::future::yield_now().await;
                }
            }
            Err(_) => {
                // EMFILE and the like: back off instead of spinning.
                burst = 0;
                glommio::timer::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

/// The live connection tasks of one server, and a signal that ends them.
#[derive(Default)]
struct Connections {
    live: Cell<usize>,
    stopping: Cell<bool>,
    next_id: Cell<u64>,
    wakers: RefCell<HashMap<u64, Waker>>,
}

impl Connections {
    /// Resolves once [`Connections::stop`] is called.
    fn stopped(self: &Rc<Self>) -> Stopped {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        Stopped {
            conns: self.clone(),
            id,
        }
    }

    fn stop(&self) {
        self.stopping.set(true);
        let wakers: Vec<Waker> = self.wakers.borrow_mut().drain().map(|(_, w)| w).collect();
        wakers.into_iter().for_each(Waker::wake);
    }
}

struct Stopped {
    conns: Rc<Connections>,
    id: u64,
}

impl Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.conns.stopping.get() {
            return Poll::Ready(());
        }
        let mut wakers = self.conns.wakers.borrow_mut();
        match wakers.get_mut(&self.id) {
            Some(w) if w.will_wake(cx.waker()) => {}
            Some(w) => w.clone_from(cx.waker()),
            None => {
                wakers.insert(self.id, cx.waker().clone());
            }
        }
        Poll::Pending
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        self.conns.wakers.borrow_mut().remove(&self.id);
    }
}
